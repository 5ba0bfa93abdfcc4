# Warnings, sanitizers and CPU tuning.
#
# Sanitizers apply to every target of the project (libraries, CLI, tests, benches, examples), so
# that every binary links the sanitizer runtime its objects need.
if(ONEPOOL_SANITIZE)
  string(REPLACE ";" "," ONEPOOL_SANITIZERS "${ONEPOOL_SANITIZE}")
  add_compile_options(-fsanitize=${ONEPOOL_SANITIZERS} -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=${ONEPOOL_SANITIZERS})
endif()

function(onepool_target_options target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  if(ONEPOOL_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(ONEPOOL_NATIVE)
    target_compile_options(${target} PRIVATE -march=native)
  endif()
  if(CMAKE_BUILD_TYPE STREQUAL "Release")
    target_compile_options(${target} PRIVATE -O3)
  endif()
endfunction()
