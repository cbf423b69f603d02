# One place for the warning flags every bpg target gets.
function(bpg_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-pedantic)
  if(BPG_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
