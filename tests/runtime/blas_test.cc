#include "runtime/kernels/cpu/blas.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace zerograph::runtime {
namespace {

// Whether this process has the BLAS library loaded (RTLD_NOLOAD opens nothing).
bool BlasLoaded() {
  void* library = dlopen(std::string(Blas::LibraryName()).c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (library == nullptr) return false;
  dlclose(library);
  return true;
}

// Small integers, whose products and sums float and double hold exactly.
template <typename T>
std::vector<T> Pattern(int64_t size, int period) {
  std::vector<T> values(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) values[static_cast<size_t>(i)] = T((i % period) - period / 2);
  return values;
}

// C = 2·op(A)·op(B) + 3·C with A stored [m, k] or, transposed, [k, m] (B likewise), against the
// sum written out.
template <typename T>
void ExpectGemm(const Blas& blas, bool trans_a, bool trans_b) {
  constexpr int64_t m = 5, n = 7, k = 3;
  const std::vector<T> a = Pattern<T>(m * k, 7), b = Pattern<T>(k * n, 5);
  std::vector<T> c = Pattern<T>(m * n, 3);
  auto at = [&](int64_t i, int64_t l) { return trans_a ? a[l * m + i] : a[i * k + l]; };
  auto bt = [&](int64_t l, int64_t j) { return trans_b ? b[j * k + l] : b[l * n + j]; };
  std::vector<T> expected(c.size());
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T sum = 0;
      for (int64_t l = 0; l < k; ++l) sum += at(i, l) * bt(l, j);
      expected[i * n + j] = T(2) * sum + T(3) * c[i * n + j];
    }
  }
  blas.Gemm(trans_a, trans_b, m, n, k, T(2), a.data(), trans_a ? m : k, b.data(), trans_b ? k : n,
            T(3), c.data(), n);
  EXPECT_EQ(c, expected) << "trans_a " << trans_a << ", trans_b " << trans_b;
}

TEST(BlasTest, ProductsInBothPrecisionsAndEveryTransposition) {
  StatusOr<const Blas*> blas = Blas::Get();
  ASSERT_TRUE(blas.ok()) << blas.status().message();
  for (const bool trans_a : {false, true}) {
    for (const bool trans_b : {false, true}) {
      ExpectGemm<float>(**blas, trans_a, trans_b);
      ExpectGemm<double>(**blas, trans_a, trans_b);
    }
  }
}

// A program that multiplies nothing never loads the library. Checked in a process of its own
// (the threadsafe death-test style runs this test alone in a fresh copy of the binary), since
// another test of this binary may have multiplied first.
TEST(BlasDeathTest, TheLibraryLoadsAtTheFirstProductNotAtStart) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        auto fail = [](const char* why) {
          std::fputs(why, stderr);
          std::_Exit(1);
        };
        if (BlasLoaded()) fail("BLAS was loaded before any product");
        if (!Blas::Get().ok()) fail("BLAS did not load");
        if (!BlasLoaded()) fail("BLAS is not loaded after Blas::Get");
        std::_Exit(0);
      },
      testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace zerograph::runtime
