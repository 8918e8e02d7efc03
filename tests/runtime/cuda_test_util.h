#ifndef ZEROGRAPH_TESTS_RUNTIME_CUDA_TEST_UTIL_H_
#define ZEROGRAPH_TESTS_RUNTIME_CUDA_TEST_UTIL_H_

#include <gtest/gtest.h>

#include "zerograph/runtime/cuda.h"

// Skips a test that needs a GPU, saying which is missing: the backend or the GPU. CTest reports
// such tests as skipped, not passed.
#define ZG_SKIP_WITHOUT_GPU()                                                               \
  do {                                                                                      \
    if (!::zerograph::runtime::CudaBackendBuilt()) {                                        \
      GTEST_SKIP() << "no CUDA GPU: this build has no CUDA backend";                        \
    }                                                                                       \
    if (::zerograph::runtime::CudaDeviceCount() == 0) {                                     \
      GTEST_SKIP() << "no CUDA GPU: the backend is built, but no GPU or driver is visible"; \
    }                                                                                       \
  } while (false)

#endif  // ZEROGRAPH_TESTS_RUNTIME_CUDA_TEST_UTIL_H_
