#ifndef ZEROGRAPH_RUNTIME_BLAS_THREADS_H_
#define ZEROGRAPH_RUNTIME_BLAS_THREADS_H_

namespace zerograph::runtime {

// OpenBLAS (its pthreads build, Debian's default) starts a pool of worker threads when the library
// loads, one per core but one, and each spins on sched_yield for about a tenth of a second of CPU
// before it sleeps. A program that multiplies no matrices yet (graph loading, rewriting,
// checkpoint conversion) loses that much of every other core. Stops the pool; OpenBLAS starts it
// again at the first GEMM that it splits across threads. Does nothing with another BLAS.
void StopIdleBlasThreads();

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_RUNTIME_BLAS_THREADS_H_
