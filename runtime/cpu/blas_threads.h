// OpenBLAS as this runtime uses it: one thread per call, on the caller's thread (GEMMs are split
// across a Session's own threads, see kernels/gemm_blas.h).
#pragma once

namespace onepool::cpu {

/// Makes OpenBLAS run every call on the calling thread and stops the worker threads that its
/// pthread build starts when the library is loaded. Those workers, never given work here, spin on
/// sched_yield for about a tenth of a second after start-up before they sleep: on a two-core
/// machine they took a core from a Session's second thread or from a two-thread placement for
/// that long (`plan --records` at two threads: 0.12 s of CPU). Safe to call at any time and from
/// any thread, as often as wanted; a no-op with OpenBLAS builds that have no such workers.
void use_single_threaded_blas();

}  // namespace onepool::cpu
