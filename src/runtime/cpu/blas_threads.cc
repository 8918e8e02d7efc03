#include "zerograph/runtime/blas_threads.h"

// OpenBLAS's own: joins the worker pool (OpenBLAS calls it before a fork, and restarts the pool
// when work next needs it). Weak, so that a BLAS without it leaves the pointer null.
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));

namespace zerograph::runtime {

void StopIdleBlasThreads() {
  if (blas_thread_shutdown_ != nullptr) blas_thread_shutdown_();
}

}  // namespace zerograph::runtime
