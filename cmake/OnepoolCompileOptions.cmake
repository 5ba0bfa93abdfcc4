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

# lld where it is installed: a sanitizer build links about ninety static test binaries with full
# debug info, and GNU ld takes three times as long for each (8 s against 2.6 s).
option(ONEPOOL_LLD "Link with lld when the compiler can use it" ON)
if(ONEPOOL_LLD)
  include(CheckLinkerFlag)
  check_linker_flag(CXX "-fuse-ld=lld" ONEPOOL_HAVE_LLD)
  if(ONEPOOL_HAVE_LLD)
    add_link_options($<$<LINK_LANGUAGE:CXX>:-fuse-ld=lld>)
  endif()
endif()

function(onepool_target_options target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  # No contraction of a * b + c into a fused multiply-add: GCC's default for C++ contracts
  # wherever the target has FMA, so a -march=native build and a generic one rounded differently
  # (and broke a max-pool / Equal tie on a line-detection model). Without it, every build of the
  # same sources gives the same bits on the same machine; tests/build_parity.sh checks it in CI.
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-ffp-contract=off>)
  # Floating-point operations raise no traps here (nothing unmasks FP exceptions), so the compiler
  # may compute both sides of a select and blend them. Without it GCC left the loops over
  # fast_exp (Softmax, Sigmoid, SiLU), Gelu's erf and the HardSwish epilogue scalar in the AVX2 and
  # baseline variants (AVX-512 masks hid it): e^x 4.9 -> 0.64 ns per element on AVX2. Values do
  # not change: it allows no reassociation, reciprocals or finite-math assumptions.
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fno-trapping-math>)
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
