#include "runtime/cpu/blas_threads.h"

#include <cblas.h>

// The pthread build of OpenBLAS exports the call that stops its worker threads (it restarts them
// by itself should a later call ask for more than one thread); serial and OpenMP builds do not
// have it. Weak, so the runtime links against every build.
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));

namespace onepool::cpu {

void use_single_threaded_blas() {
  openblas_set_num_threads(1);
  if (blas_thread_shutdown_ != nullptr) blas_thread_shutdown_();
}

}  // namespace onepool::cpu
