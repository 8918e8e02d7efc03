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

// numpy.matmul in double: 1-D operands promoted and their dimension dropped, batch broadcast.
std::vector<double> ReferenceMatMul(const std::vector<double>& a, Shape as,
                                    const std::vector<double>& b, Shape bs, Shape* out_shape) {
  const bool a_vec = as.size() == 1;
  const bool b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  const size_t rank = std::max(a_batch.size(), b_batch.size());
  Shape batch(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a_batch.size() ? 1 : a_batch[i - (rank - a_batch.size())];
    const int64_t db = i < rank - b_batch.size() ? 1 : b_batch[i - (rank - b_batch.size())];
    batch[i] = std::max(da, db);
  }
  *out_shape = batch;
  if (!a_vec) out_shape->push_back(m);
  if (!b_vec) out_shape->push_back(n);
  std::vector<double> out;
  for (int64_t bi = 0; bi < NumElements(batch); ++bi) {
    const std::vector<int64_t> index = Unravel(bi, batch);
    const int64_t ab = BroadcastIndex(index, a_batch);
    const int64_t bb = BroadcastIndex(index, b_batch);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) {
          sum += a[static_cast<size_t>(ab * m * k + i * k + p)] *
                 b[static_cast<size_t>(bb * k * n + p * n + j)];
        }
        out.push_back(sum);
      }
    }
  }
  return out;
}

struct MatMulCase {
  Shape a;
  Shape b;
};

// MatMul follows numpy.matmul: plain, batched, broadcast batches on either side, 1-D operands,
// and an empty inner dimension.
TEST(MatMulTest, MatchesNumpyMatmul) {
  KernelRunner runner;
  const std::vector<MatMulCase> cases = {{{3, 4}, {4, 5}},
                                         {{2, 3, 4}, {4, 5}},
                                         {{4}, {4, 5}},
                                         {{3, 4}, {4}},
                                         {{4}, {4}},
                                         {{2, 3, 4}, {2, 4, 5}},
                                         {{2, 1, 3, 4}, {5, 4, 2}},
                                         {{1, 3, 4}, {6, 4, 2}},
                                         {{3, 0}, {0, 2}},
                                         {{7, 33, 65}, {65, 17}}};
  uint32_t seed = 100;
  for (DataType dtype :
       {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16, DataType::kBFloat16}) {
    for (const MatMulCase& c : cases) {
      const std::string what = ShapeToString(c.a) + " x " + ShapeToString(c.b);
      DeviceTensor a = runner.Random(dtype, c.a, seed++);
      DeviceTensor b = runner.Random(dtype, c.b, seed++);
      StatusOr<std::vector<DeviceTensor>> out = runner.Run("", "MatMul", {a, b}, 1);
      ASSERT_TRUE(out.ok()) << what << ": " << out.status().ToString();
      Shape expected_shape;
      std::vector<double> expected =
          ReferenceMatMul(Values(a), c.a, Values(b), c.b, &expected_shape);
      EXPECT_EQ((*out)[0].shape(), expected_shape) << what;
      // K products of values in [-1, 1): error grows with K; fp16 and bf16 multiply in fp32 and
      // round once.
      const int64_t k = c.a.back();
      ExpectNear(Values((*out)[0]), expected, 2 * testing::UnitRoundoff(dtype),
                 1e-6 * static_cast<double>(k + 1), what);
    }
  }
}

// Mismatched inner dimensions are refused with both shapes.
TEST(MatMulTest, InnerDimensionMismatchIsRefused) {
  KernelRunner runner;
  DeviceTensor a = runner.Random(DataType::kFloat32, {3, 4}, 1);
  DeviceTensor b = runner.Random(DataType::kFloat32, {5, 2}, 2);
  StatusOr<std::vector<DeviceTensor>> out = runner.Run("", "MatMul", {a, b}, 1);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("[3,4] x [5,2]"), std::string_view::npos)
      << out.status().ToString();
}

struct GemmCase {
  bool trans_a;
  bool trans_b;
  Shape c;  // empty vector with has_c false means no C
  bool has_c;
  float alpha;
  float beta;
};

// Gemm: Y = alpha·A'·B' + beta·C with every transpose combination and each C broadcast form, in
// fp32, fp16 and bf16.
TEST(GemmTest, MatchesReferenceForTransposesAndBroadcastC) {
  KernelRunner runner;
  const int64_t m = 5, k = 7, n = 3;
  const std::vector<GemmCase> cases = {
      {false, false, {m, n}, true, 1.0f, 1.0f}, {true, false, {n}, true, 0.5f, 2.0f},
      {false, true, {1, n}, true, 1.0f, 1.0f},  {true, true, {m, 1}, true, -1.0f, 0.25f},
      {false, false, {}, true, 2.0f, 3.0f},     {true, false, {}, false, 1.5f, 1.0f},
      {false, false, {1, 1}, true, 1.0f, 0.0f}};
  uint32_t seed = 300;
  for (DataType dtype : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    for (const GemmCase& c : cases) {
      DeviceTensor a = runner.Random(dtype, c.trans_a ? Shape{k, m} : Shape{m, k}, seed++);
      DeviceTensor b = runner.Random(dtype, c.trans_b ? Shape{n, k} : Shape{k, n}, seed++);
      std::vector<DeviceTensor> inputs = {a, b};
      if (c.has_c) inputs.push_back(runner.Random(dtype, c.c, seed++));
      StatusOr<std::vector<DeviceTensor>> out =
          runner.Run("", "Gemm", inputs, 1,
                     {Attr("transA", c.trans_a ? 1 : 0), Attr("transB", c.trans_b ? 1 : 0),
                      Attr("alpha", c.alpha), Attr("beta", c.beta)});
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      const std::vector<double> va = Values(a), vb = Values(b);
      const std::vector<double> vc = c.has_c ? Values(inputs[2]) : std::vector<double>();
      std::vector<double> expected;
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (int64_t p = 0; p < k; ++p) {
            const double av = va[static_cast<size_t>(c.trans_a ? p * m + i : i * k + p)];
            const double bv = vb[static_cast<size_t>(c.trans_b ? j * k + p : p * n + j)];
            sum += av * bv;
          }
          double cv = 0;
          if (c.has_c) cv = vc[static_cast<size_t>(BroadcastIndex({i, j}, c.c))];
          expected.push_back(c.alpha * sum + c.beta * cv);
        }
      }
      EXPECT_EQ((*out)[0].shape(), (Shape{m, n}));
      // fp16 and bf16 compute in fp32 and round once.
      ExpectNear(Values((*out)[0]), expected, 2 * testing::UnitRoundoff(dtype), 1e-5,
                 std::string(DataTypeName(dtype)) + " Gemm transA=" + std::to_string(c.trans_a) +
                     " transB=" + std::to_string(c.trans_b) + " C" + ShapeToString(c.c));
    }
  }
}

// C became optional with opset 11: an older Gemm without it is refused.
TEST(GemmTest, CIsRequiredBeforeOpset11) {
  KernelRunner runner;
  DeviceTensor a = runner.Random(DataType::kFloat32, {2, 3}, 1);
  DeviceTensor b = runner.Random(DataType::kFloat32, {3, 4}, 2);
  runner.set_opset_version(11);
  EXPECT_TRUE(runner.Run("", "Gemm", {a, b}, 1).ok());
  runner.set_opset_version(9);
  EXPECT_FALSE(runner.Run("", "Gemm", {a, b}, 1).ok());
}

// A C that does not broadcast to [M, N] is refused.
TEST(GemmTest, NonBroadcastableCIsRefused) {
  KernelRunner runner;
  DeviceTensor a = runner.Random(DataType::kFloat32, {2, 3}, 1);
  DeviceTensor b = runner.Random(DataType::kFloat32, {3, 4}, 2);
  DeviceTensor c = runner.Random(DataType::kFloat32, {3}, 3);
  EXPECT_FALSE(runner.Run("", "Gemm", {a, b, c}, 1).ok());
}

}  // namespace
}  // namespace zerograph::runtime
