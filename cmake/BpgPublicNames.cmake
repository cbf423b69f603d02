# The public API's names, read from the public headers: what libbpg.so
# exports (the version script of cmake/BpgPackage.cmake) and what the package
# test allows in `nm -D` (tests/package/check_exports.cmake).
#
# The headers keep one layout this relies on: a declaration directly in a
# namespace starts at column 0 (continuation lines and class members are
# indented). There, a class or struct is a public type, and a line with
# "name(" declares a public function, unless it is code the consumer
# compiles itself: a definition (it opens a body), a template, inline, or an
# out-of-line member ("T::name(").

# bpg_public_names(<types_var> <functions_var> <opaque_var> header...):
# qualified names, e.g. "bpg::graph" in types, "bpg::to_string" in
# functions; opaque: the nested types a public class only declares (its
# pimpl, "bpg::graph::impl"), which are not part of the API.
function(bpg_public_names types_var functions_var opaque_var)
  set(types "")
  set(functions "")
  set(opaque "")
  foreach(header ${ARGN})
    file(STRINGS ${header} lines)
    set(depth 0)      # braces open before the line
    set(stack "")     # the enclosing namespaces, innermost last
    set(ns_depths "") # the depth inside each of them
    set(ns "")
    set(class "")
    set(after_template OFF)
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "//.*" "" code "${line}")
      list(LENGTH stack n)
      set(ns_depth 0)
      if(n GREATER 0)
        list(GET ns_depths -1 ns_depth)
      endif()
      if(n GREATER 0 AND depth EQUAL ns_depth)
        if(code MATCHES "^(class|struct) ([A-Za-z_][A-Za-z0-9_]*)")
          list(APPEND types ${ns}::${CMAKE_MATCH_2})
          set(class ${ns}::${CMAKE_MATCH_2})
        elseif(code MATCHES "^(#|namespace|enum|using|constexpr|template|typedef|inline|static)"
            OR code MATCHES "{" OR after_template)
          # No symbol of its own, or the consumer's code.
        elseif(code MATCHES "^[^ (][^(]*[^A-Za-z0-9_:]([A-Za-z_][A-Za-z0-9_]*)\\(")
          list(APPEND functions ${ns}::${CMAKE_MATCH_1})
        endif()
      elseif(class AND code MATCHES "^ +(class|struct) ([A-Za-z_][A-Za-z0-9_]*);")
        math(EXPR member_depth "${ns_depth} + 1")
        if(depth EQUAL member_depth)
          list(APPEND opaque ${class}::${CMAKE_MATCH_2})
        endif()
      endif()
      if(code MATCHES "^template")
        set(after_template ON)
      elseif(NOT code STREQUAL "")
        set(after_template OFF)
      endif()
      # The braces of the line; a namespace's opens one level more.
      string(REGEX MATCHALL "{" opens "${code}")
      string(REGEX MATCHALL "}" closes "${code}")
      list(LENGTH opens n_open)
      list(LENGTH closes n_close)
      math(EXPR depth "${depth} + ${n_open} - ${n_close}")
      if(code MATCHES "^namespace ([A-Za-z_:]+) {")
        list(APPEND stack ${CMAKE_MATCH_1})
        list(APPEND ns_depths ${depth})
      endif()
      while(stack)
        list(GET ns_depths -1 top)
        if(depth LESS top)
          list(POP_BACK stack)
          list(POP_BACK ns_depths)
        else()
          break()
        endif()
      endwhile()
      list(JOIN stack "::" ns)
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES types)
  list(REMOVE_DUPLICATES functions)
  set(${types_var} ${types} PARENT_SCOPE)
  set(${functions_var} ${functions} PARENT_SCOPE)
  set(${opaque_var} ${opaque} PARENT_SCOPE)
endfunction()

# A qualified name in the Itanium C++ ABI's mangling, without the N...E
# around it: bpg::dml::x -> 3bpg3dml1x.
function(bpg_mangled_name out_var qualified)
  string(REPLACE "::" ";" parts ${qualified})
  set(mangled "")
  foreach(part ${parts})
    string(LENGTH ${part} n)
    string(APPEND mangled ${n}${part})
  endforeach()
  set(${out_var} ${mangled} PARENT_SCOPE)
endfunction()
