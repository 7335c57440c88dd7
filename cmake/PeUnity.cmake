# A unity build of `target` when PE_UNITY is on (see the top-level CMakeLists.txt).
function(pe_unity target)
  if(PE_UNITY)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON)
  endif()
endfunction()
