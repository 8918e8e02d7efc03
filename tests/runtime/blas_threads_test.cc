#include "zerograph/runtime/blas_threads.h"

#include <cblas.h>

#include <cstddef>
#include <filesystem>
#include <iterator>
#include <vector>

#include <gtest/gtest.h>

namespace zerograph::runtime {
namespace {

size_t CountThreadsOfThisProcess() {
  const std::filesystem::directory_iterator tasks("/proc/self/task");
  return static_cast<size_t>(std::distance(begin(tasks), end(tasks)));
}

// C = A·B for n×n matrices of small integers, which float sums exactly.
std::vector<float> Multiply(const std::vector<float>& a, const std::vector<float>& b, int n) {
  std::vector<float> c(a.size());
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0F, a.data(), n, b.data(), n,
              0.0F, c.data(), n);
  return c;
}

// The pool OpenBLAS started stops, and a product afterwards (which starts it again) is right.
TEST(BlasThreadsTest, StopsTheWorkerPoolAndProductsStillRun) {
  // Big enough that OpenBLAS splits it across its threads.
  constexpr int kN = 384;
  std::vector<float> a(kN * kN), b(kN * kN);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
    b[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
  }
  std::vector<float> expected(a.size(), 0.0F);
  for (int i = 0; i < kN; ++i) {
    for (int k = 0; k < kN; ++k) {
      for (int j = 0; j < kN; ++j) expected[i * kN + j] += a[i * kN + k] * b[k * kN + j];
    }
  }
  ASSERT_EQ(Multiply(a, b, kN), expected);

  const size_t threads = CountThreadsOfThisProcess();
  if (threads == 1) {
    GTEST_SKIP() << "the BLAS runs no worker threads here (one core, OPENBLAS_NUM_THREADS=1 or "
                    "a BLAS without a pool): nothing to stop";
  }
  StopIdleBlasThreads();
  EXPECT_LT(CountThreadsOfThisProcess(), threads);
  EXPECT_EQ(Multiply(a, b, kN), expected);
}

}  // namespace
}  // namespace zerograph::runtime
