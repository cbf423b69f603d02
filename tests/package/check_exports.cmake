# cmake -DLIBRARY=libbpg.so -DHEADERS_DIR=<prefix>/include/bpg -DSOURCE_DIR=... -P check_exports.cmake
# Fails unless every header that declares API marks it visible, every symbol
# `nm -D --defined-only -C` finds in LIBRARY is public API, and every public
# function is there. LIBRARY empty: the headers only (a static build).
#
# Public, by the headers in HEADERS_DIR (cmake/BpgPublicNames.cmake reads
# them): a symbol is public when the entity its demangled name declares
# (after a template instance's return type, before the parameters) is
#   - a member of a public type T ("T::..."), but not of a type T only
#     declares (its pimpl "T::impl"), or T's typeinfo, typeinfo name or vtable;
#   - a public function F (any overload, "F[abi:cxx11]", "F<...>").
# Anything else (bpg's internal namespaces, the standard library's templates,
# oneTBB, nlohmann, OpenMP, ifunc resolvers) fails the check.
cmake_minimum_required(VERSION 3.16) # policies of a script run with -P
foreach(var HEADERS_DIR SOURCE_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "check_exports.cmake: ${var} is not set")
  endif()
endforeach()
include(${SOURCE_DIR}/cmake/BpgPublicNames.cmake)

file(GLOB headers ${HEADERS_DIR}/*.hpp)
bpg_public_names(types functions opaque ${headers})
if(NOT types AND NOT functions)
  message(FATAL_ERROR "no public types or functions read from ${HEADERS_DIR}")
endif()

# A header that declares API but does not mark it visible exports nothing
# of it from a hidden-by-default build.
foreach(header ${headers})
  bpg_public_names(header_types header_functions header_opaque ${header})
  if(header_types OR header_functions)
    file(STRINGS ${header} pushes REGEX "^#pragma GCC visibility push\\(default\\)")
    file(STRINGS ${header} pops REGEX "^#pragma GCC visibility pop")
    if(NOT pushes OR NOT pops)
      message(FATAL_ERROR "${header} declares API without #pragma GCC visibility push(default) ... pop")
    endif()
  endif()
endforeach()

if(NOT LIBRARY)
  message(STATUS "${HEADERS_DIR}: every header that declares API marks it visible")
  return()
endif()
execute_process(COMMAND nm -D --defined-only -C ${LIBRARY}
  OUTPUT_VARIABLE nm_out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm -D --defined-only -C ${LIBRARY} failed (${rc})")
endif()
string(REPLACE ";" "\\;" nm_out "${nm_out}")
string(REPLACE "\n" ";" nm_lines "${nm_out}")

function(starts_with out_var text prefix)
  string(LENGTH "${prefix}" n)
  string(SUBSTRING "${text}" 0 ${n} head)
  if(head STREQUAL prefix)
    set(${out_var} ON PARENT_SCOPE)
  else()
    set(${out_var} OFF PARENT_SCOPE)
  endif()
endfunction()

# The entity a demangled function symbol names: the text before its
# parameter list, without the return type a template instance shows first
# ("bpg::op& bpg::op::set_attr<char [4]>(...)" -> "bpg::op::set_attr<char [4]>").
# Spaces and parentheses inside <...> or {...} (template arguments, lambdas)
# do not count.
function(declared_entity out_var name)
  string(LENGTH "${name}" n)
  set(depth 0)
  set(start 0)
  set(end ${n})
  set(i 0)
  while(i LESS n)
    string(SUBSTRING "${name}" ${i} 1 c)
    if(c STREQUAL "<" OR c STREQUAL "{")
      math(EXPR depth "${depth} + 1")
    elseif(c STREQUAL ">" OR c STREQUAL "}")
      math(EXPR depth "${depth} - 1")
    elseif(depth EQUAL 0 AND c STREQUAL " ")
      math(EXPR start "${i} + 1")
    elseif(depth EQUAL 0 AND c STREQUAL "(")
      set(end ${i})
      break()
    endif()
    math(EXPR i "${i} + 1")
  endwhile()
  math(EXPR len "${end} - ${start}")
  string(SUBSTRING "${name}" ${start} ${len} entity)
  set(${out_var} "${entity}" PARENT_SCOPE)
endfunction()

set(bad "")
set(count 0)
set(seen_functions "")
foreach(line IN LISTS nm_lines)
  # "ADDRESS TYPE NAME"; absolute symbols (the version node) have no name.
  if(NOT line MATCHES "^[0-9a-f]+ [A-Za-z] (.+)$")
    continue()
  endif()
  set(name "${CMAKE_MATCH_1}")
  math(EXPR count "${count} + 1")
  set(public OFF)
  if(name MATCHES "^(typeinfo for|typeinfo name for|vtable for) (.+)$")
    if("${CMAKE_MATCH_2}" IN_LIST types)
      set(public ON)
    endif()
  else()
    declared_entity(entity "${name}")
    foreach(t ${types})
      starts_with(member "${entity}" "${t}::")
      if(member)
        set(public ON)
        break()
      endif()
    endforeach()
    foreach(o ${opaque})
      starts_with(hidden_member "${entity}" "${o}::")
      if(hidden_member)
        set(public OFF)
      endif()
    endforeach()
    foreach(f ${functions})
      # Any overload; an ABI tag (name[abi:cxx11]) or template arguments.
      starts_with(tagged "${entity}" "${f}[")
      starts_with(instance "${entity}" "${f}<")
      if(entity STREQUAL f OR tagged OR instance)
        set(public ON)
        list(APPEND seen_functions ${f})
        break()
      endif()
    endforeach()
  endif()
  if(NOT public)
    list(APPEND bad "${name}")
  endif()
endforeach()

if(count EQUAL 0)
  message(FATAL_ERROR "${LIBRARY} exports no symbols")
endif()
list(LENGTH bad n_bad)
if(n_bad GREATER 0)
  list(JOIN bad "\n  " bad_text)
  message(FATAL_ERROR "${LIBRARY} exports ${n_bad} symbols that are not public API:\n  ${bad_text}")
endif()
set(missing ${functions})
list(REMOVE_ITEM missing ${seen_functions})
if(missing)
  message(FATAL_ERROR "${LIBRARY} does not export these public functions: ${missing}")
endif()
message(STATUS "${LIBRARY}: ${count} exported symbols, all public API")
