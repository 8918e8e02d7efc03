#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/kernel_test_util.h"

namespace zerograph::runtime {
namespace {

using testing::BroadcastIndex;
using testing::ExpectNear;
using testing::KernelRunner;
using testing::Unravel;
using testing::Values;

// x transposed by `perm`, row-major, in double.
std::vector<double> Permute(const std::vector<double>& x, const Shape& shape,
                            const std::vector<size_t>& perm, Shape* out_shape) {
  out_shape->clear();
  for (size_t p : perm) out_shape->push_back(shape[p]);
  std::vector<double> out(x.size());
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
    const std::vector<int64_t> index = Unravel(i, *out_shape);
    int64_t src = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t at = 0;
      for (size_t q = 0; q < perm.size(); ++q) {
        if (perm[q] == d) at = index[q];
      }
      src = src * shape[d] + at;
    }
    out[static_cast<size_t>(i)] = x[static_cast<size_t>(src)];
  }
  return out;
}

// The operand FusedMatMul multiplies: transBatch's permutation (1, ..., r-2, 0, r-1), then
// trans's swap of the last two.
std::vector<double> Operand(const std::vector<double>& x, const Shape& shape, bool trans,
                            bool trans_batch, Shape* out_shape) {
  const size_t r = shape.size();
  std::vector<size_t> perm(r);
  std::iota(perm.begin(), perm.end(), 0);
  if (r >= 3 && trans_batch) {
    for (size_t i = 0; i + 2 < r; ++i) perm[i] = i + 1;
    perm[r - 2] = 0;
  }
  if (r >= 2 && trans) std::swap(perm[r - 2], perm[r - 1]);
  return Permute(x, shape, perm, out_shape);
}

// alpha · matmul(a, b) with numpy's broadcasting, for operands of rank 2 or more.
std::vector<double> ReferenceMatMul(const std::vector<double>& a, const Shape& as,
                                    const std::vector<double>& b, const Shape& bs, double alpha) {
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  const Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  const size_t rank = std::max(a_batch.size(), b_batch.size());
  Shape batch(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a_batch.size() ? 1 : a_batch[i - (rank - a_batch.size())];
    const int64_t db = i < rank - b_batch.size() ? 1 : b_batch[i - (rank - b_batch.size())];
    batch[i] = std::max(da, db);
  }
  std::vector<double> out;
  for (int64_t bi = 0; bi < NumElements(batch); ++bi) {
    const std::vector<int64_t> index = Unravel(bi, batch);
    const int64_t ab = BroadcastIndex(index, a_batch), bb = BroadcastIndex(index, b_batch);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) {
          sum += a[static_cast<size_t>(ab * m * k + i * k + p)] *
                 b[static_cast<size_t>(bb * k * n + p * n + j)];
        }
        out.push_back(alpha * sum);
      }
    }
  }
  return out;
}

struct FusedCase {
  Shape a, b;
  bool trans_a, trans_b, trans_batch_a, trans_batch_b;
};

// FusedMatMul equals explicit transposes then MatMul, for every attribute, broadcast batches and
// each dtype (fp16 and bf16 multiply in fp32).
TEST(FusedMatMulTest, MatchesTransposesThenMatMul) {
  KernelRunner runner;
  const std::vector<FusedCase> cases = {
      {{3, 4}, {4, 5}, false, false, false, false},
      {{4, 3}, {4, 5}, true, false, false, false},
      {{3, 4}, {5, 4}, false, true, false, false},
      {{2, 4, 3}, {2, 5, 4}, true, true, false, false},
      {{2, 3, 4}, {4, 5}, false, false, false, false},
      {{2, 1, 3, 4}, {6, 4, 2}, false, false, false, false},
      // transBatch: A [M, b1, b2, K] multiplies as [b1, b2, M, K].
      {{3, 2, 5, 4}, {2, 5, 4, 6}, false, false, true, false},
      {{4, 2, 5, 3}, {2, 5, 4, 6}, true, false, true, false},
      {{3, 2, 4}, {4, 2, 6}, false, false, true, true},
      {{2, 3, 4}, {6, 2, 4}, false, true, false, true},
      {{3, 2, 4}, {4, 6}, false, false, true, false},
  };
  uint32_t seed = 10;
  for (DataType dtype :
       {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16, DataType::kBFloat16}) {
    for (const FusedCase& c : cases) {
      const std::string what = ShapeToString(c.a) + " x " + ShapeToString(c.b) + " " +
                               std::to_string(c.trans_a) + std::to_string(c.trans_b) +
                               std::to_string(c.trans_batch_a) + std::to_string(c.trans_batch_b) +
                               " " + std::string(DataTypeName(dtype));
      DeviceTensor a = runner.Random(dtype, c.a, seed++);
      DeviceTensor b = runner.Random(dtype, c.b, seed++);
      const float alpha = 0.75f;
      auto out = runner.Run(
          "com.microsoft", "FusedMatMul", {a, b}, 1,
          {Attr("alpha", alpha), Attr("transA", c.trans_a ? 1 : 0),
           Attr("transB", c.trans_b ? 1 : 0), Attr("transBatchA", c.trans_batch_a ? 1 : 0),
           Attr("transBatchB", c.trans_batch_b ? 1 : 0)});
      ASSERT_TRUE(out.ok()) << what << ": " << out.status().ToString();
      Shape as, bs;
      const std::vector<double> va = Operand(Values(a), c.a, c.trans_a, c.trans_batch_a, &as);
      const std::vector<double> vb = Operand(Values(b), c.b, c.trans_b, c.trans_batch_b, &bs);
      const std::vector<double> expected = ReferenceMatMul(va, as, vb, bs, alpha);
      const double k = static_cast<double>(as.back());
      // Products of values in [-1, 1) summed in fp32 at least; the output rounds once to dtype.
      const double tol = k * 1e-6 + 2 * testing::UnitRoundoff(dtype);
      ExpectNear(Values((*out)[0]), expected, tol, tol, what);
    }
  }
}

// Operands that do not fit after the transposes are refused with both shapes.
TEST(FusedMatMulTest, MismatchIsRefused) {
  KernelRunner runner;
  DeviceTensor a = runner.Random(DataType::kFloat32, {3, 4}, 1);
  DeviceTensor b = runner.Random(DataType::kFloat32, {4, 5}, 2);
  auto out = runner.Run("com.microsoft", "FusedMatMul", {a, b}, 1, {Attr("transB", 1)});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("[3,4] x [4,5]"), std::string_view::npos)
      << out.status().ToString();
}

}  // namespace
}  // namespace zerograph::runtime
