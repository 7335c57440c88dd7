# Warnings on and clean for pe-suite's own targets.
function(pe_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion)
  if(PE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
