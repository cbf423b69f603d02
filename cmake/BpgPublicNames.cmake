# The public API's names, read from the public headers: what libbpg.so
# exports (the version script of cmake/BpgPackage.cmake) and what the package
# test allows in `nm -D` (tests/package/check_exports.cmake).
#
# The headers keep one layout this relies on: a declaration in a namespace
# starts at column 0 (continuation lines and class members are indented).
# A class or struct at column 0 is a public type; any other column-0 line
# with "name(" declares a public function.

# bpg_public_names(<types_var> <functions_var> <opaque_var> header...):
# qualified names, e.g. "bpg::graph" in types, "bpg::to_string" in
# functions; opaque: the nested types a public class only declares (its
# pimpl, "bpg::graph::impl"), which are not part of the API.
function(bpg_public_names types_var functions_var opaque_var)
  set(types "")
  set(functions "")
  set(opaque "")
  set(class "")
  foreach(header ${ARGN})
    file(STRINGS ${header} lines)
    set(stack "") # the enclosing namespaces, innermost last
    set(ns "")
    foreach(line IN LISTS lines)
      if(line MATCHES "^namespace ([A-Za-z_:]+) {")
        list(APPEND stack ${CMAKE_MATCH_1})
        list(JOIN stack "::" ns)
      elseif(line MATCHES "^}( |$)")
        if(stack)
          list(POP_BACK stack)
        endif()
        list(JOIN stack "::" ns)
      elseif(ns STREQUAL "" OR line MATCHES "^(#|//|namespace|enum|using|constexpr|template|typedef|inline|static)")
        # Outside a namespace, or no symbol of its own (inline code is the
        # consumer's).
      elseif(line MATCHES "^(class|struct) ([A-Za-z_][A-Za-z0-9_]*)")
        list(APPEND types ${ns}::${CMAKE_MATCH_2})
        set(class ${ns}::${CMAKE_MATCH_2})
      elseif(line MATCHES "^ +(class|struct) ([A-Za-z_][A-Za-z0-9_]*);" AND class)
        list(APPEND opaque ${class}::${CMAKE_MATCH_2})
      elseif(line MATCHES "^[^ (][^(]*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*)\\(")
        list(APPEND functions ${ns}::${CMAKE_MATCH_1})
      endif()
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
