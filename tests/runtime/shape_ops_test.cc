#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/kernel_test_util.h"

namespace zerograph::runtime {
namespace {

using testing::KernelRunner;
using testing::Unravel;
using testing::Values;

std::vector<double> Iota(int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.0);
  return v;
}

// Transpose moves element [i0..in] to [i_perm0..]: checked against index arithmetic for several
// permutations, the default (reversed) one, and element sizes 1 to 8 bytes.
TEST(TransposeTest, MatchesIndexReference) {
  KernelRunner runner;
  const Shape shape = {2, 3, 4, 5};
  const std::vector<std::vector<int64_t>> perms = {{0, 1, 2, 3}, {3, 2, 1, 0}, {0, 2, 1, 3},
                                                   {1, 0, 3, 2}, {2, 3, 0, 1}, {0, 1, 3, 2}};
  for (DataType dtype :
       {DataType::kFloat32, DataType::kFloat16, DataType::kInt64, DataType::kUint8}) {
    DeviceTensor x = runner.MakeTensor(dtype, shape, Iota(NumElements(shape)));
    for (const std::vector<int64_t>& perm : perms) {
      StatusOr<std::vector<DeviceTensor>> out =
          runner.Run("", "Transpose", {x}, 1, {Attr("perm", perm)});
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      Shape out_shape(4);
      for (size_t i = 0; i < 4; ++i) out_shape[i] = shape[static_cast<size_t>(perm[i])];
      ASSERT_EQ((*out)[0].shape(), out_shape);
      std::vector<double> expected;
      for (int64_t i = 0; i < NumElements(out_shape); ++i) {
        std::vector<int64_t> oi = Unravel(i, out_shape);
        std::vector<int64_t> ii(4);
        for (size_t d = 0; d < 4; ++d) ii[static_cast<size_t>(perm[d])] = oi[d];
        expected.push_back(static_cast<double>(((ii[0] * 3 + ii[1]) * 4 + ii[2]) * 5 + ii[3]));
      }
      if (dtype == DataType::kUint8) {
        for (double& v : expected) v = static_cast<double>(static_cast<uint8_t>(v));
      }
      EXPECT_EQ(Values((*out)[0]), expected) << ShapeToString(perm) << " " << DataTypeName(dtype);
    }
    StatusOr<std::vector<DeviceTensor>> reversed = runner.Run("", "Transpose", {x}, 1);
    ASSERT_TRUE(reversed.ok());
    EXPECT_EQ((*reversed)[0].shape(), (Shape{5, 4, 3, 2}));
  }
}

// A perm that is not a permutation is refused.
TEST(TransposeTest, BadPermIsRefused) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {2, 3}, Iota(6));
  EXPECT_FALSE(
      runner.Run("", "Transpose", {x}, 1, {Attr("perm", std::vector<int64_t>{0, 0})}).ok());
  EXPECT_FALSE(runner.Run("", "Transpose", {x}, 1, {Attr("perm", std::vector<int64_t>{0})}).ok());
}

// Reshape: 0 copies the input's dimension, -1 is inferred, allowzero=1 makes 0 a real size; the
// output may be a view of the input, and copying or viewing give the same values.
TEST(ReshapeTest, ZeroAndMinusOneFollowOnnx) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {2, 3, 4}, Iota(24));
  struct Case {
    std::vector<double> shape;
    Shape expected;
  };
  for (const Case& c : std::vector<Case>{{{0, -1}, {2, 12}},
                                         {{-1, 4}, {6, 4}},
                                         {{4, 0, 2}, {4, 3, 2}},
                                         {{24}, {24}},
                                         {{2, 3, 2, 2}, {2, 3, 2, 2}}}) {
    DeviceTensor shape =
        runner.MakeTensor(DataType::kInt64, {static_cast<int64_t>(c.shape.size())}, c.shape);
    for (bool use_views : {false, true}) {
      StatusOr<std::vector<DeviceTensor>> out =
          runner.Run("", "Reshape", {x, shape}, 1, {}, use_views);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_EQ((*out)[0].shape(), c.expected);
      EXPECT_EQ(Values((*out)[0]), Iota(24));
      EXPECT_EQ((*out)[0].data() == x.data(), use_views);
    }
  }
  // allowzero: a 0 in the shape is a zero-sized dimension.
  DeviceTensor empty = runner.MakeTensor(DataType::kFloat32, {0, 3}, {});
  DeviceTensor zero_shape = runner.MakeTensor(DataType::kInt64, {2}, {3, 0});
  StatusOr<std::vector<DeviceTensor>> out =
      runner.Run("", "Reshape", {empty, zero_shape}, 1, {Attr("allowzero", 1)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{3, 0}));
}

// Shapes that do not fit, or two -1, are refused.
TEST(ReshapeTest, BadShapesAreRefused) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {2, 3}, Iota(6));
  for (const std::vector<double>& shape :
       std::vector<std::vector<double>>{{4, -1}, {-1, -1}, {7}, {0, 0, 0}}) {
    DeviceTensor s =
        runner.MakeTensor(DataType::kInt64, {static_cast<int64_t>(shape.size())}, shape);
    EXPECT_FALSE(runner.Run("", "Reshape", {x, s}, 1).ok())
        << ShapeToString(Shape(shape.begin(), shape.end()));
  }
}

// Identity copies or aliases any dtype.
TEST(IdentityTest, CopiesAnyDtype) {
  KernelRunner runner;
  for (DataType dtype :
       {DataType::kFloat32, DataType::kBFloat16, DataType::kInt64, DataType::kBool}) {
    DeviceTensor x = runner.MakeTensor(dtype, {3}, {1, 0, 1});
    StatusOr<std::vector<DeviceTensor>> out = runner.Run("", "Identity", {x}, 1);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(Values((*out)[0]), (std::vector<double>{1, 0, 1}));
  }
}

// Constant produces its value_float, value_ints or tensor value.
TEST(ConstantTest, ProducesAttributeValue) {
  KernelRunner runner;
  StatusOr<std::vector<DeviceTensor>> out =
      runner.Run("", "Constant", {}, 1, {Attr("value_float", 0.25f)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].dtype(), DataType::kFloat32);
  EXPECT_EQ((*out)[0].rank(), 0);
  EXPECT_EQ(Values((*out)[0]), std::vector<double>{0.25});
  out = runner.Run("", "Constant", {}, 1, {Attr("value_ints", std::vector<int64_t>{0, 2})});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{2}));
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{0, 2}));
  EXPECT_FALSE(runner.Run("", "Constant", {}, 1).ok());
}

}  // namespace
}  // namespace zerograph::runtime
