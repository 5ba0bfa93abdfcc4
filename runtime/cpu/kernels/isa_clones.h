// ONEPOOL_ISA_CLONES before a function whose loops the compiler vectorizes: GCC builds it three
// times (AVX-512, AVX2 + FMA, baseline x86-64) and the loader picks the variant this CPU runs
// (target_clones, resolved once through an ifunc), so a binary built for any x86-64 keeps wide
// vectors where the CPU has them. `flatten` inlines every call the function makes, so its
// helpers are compiled for each variant too (a helper left out of line would run baseline code).
// The hand-written GEMM micro-kernels choose their own variant (SessionOptions::cpu_isa); these
// follow CPUID alone.
//
// Numerics: the project compiles with -ffp-contract=off and without reassociation, so every
// variant performs the same operations in the same order (only more lanes at once): the same
// bits on every CPU (tests/build_parity.sh compares a native build with a generic one).
//
// Empty where it would add nothing or is unsafe: a build that already targets AVX2 or more
// (-march=native on such a machine), a compiler other than GCC, or a sanitizer build (their
// runtimes start after ifunc resolvers run).
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__AVX2__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) &&                       \
    !defined(ONEPOOL_NO_ISA_CLONES)
#define ONEPOOL_ISA_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), flatten))
#else
#define ONEPOOL_ISA_CLONES
#endif

// ONEPOOL_IVDEP before a loop whose stores cannot alias its loads: GCC's `ivdep`, clang's
// `vectorize(assume_safety)` (each compiler warns about the other's spelling).
#if defined(__clang__)
#define ONEPOOL_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#else
#define ONEPOOL_IVDEP _Pragma("GCC ivdep")
#endif
