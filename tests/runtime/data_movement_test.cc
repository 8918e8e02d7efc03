// The byte-moving kernels (kernels/data_movement_shapes.h) against references computed here by
// index arithmetic: Shape, Size, Expand, Concat, Split, Slice, Squeeze, Unsqueeze, Flatten, Tile,
// Range, ConstantOfShape and CastLike.

#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/kernel_test_util.h"

namespace zerograph::runtime {
namespace {

using testing::BroadcastIndex;
using testing::KernelRunner;
using testing::Unravel;
using testing::Values;

std::vector<double> Iota(int64_t n, double from = 0) {
  std::vector<double> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), from);
  return v;
}

DeviceTensor Ints(KernelRunner& runner, const std::vector<double>& values) {
  return runner.MakeTensor(DataType::kInt64, {static_cast<int64_t>(values.size())}, values);
}

int64_t Linear(const std::vector<int64_t>& index, const Shape& shape) {
  int64_t linear = 0;
  for (size_t d = 0; d < shape.size(); ++d) linear = linear * shape[d] + index[d];
  return linear;
}

TEST(ShapeTest, ShapeWithStartAndEndAndSize) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kFloat16, {2, 3, 4}, Iota(24));
  StatusOr<std::vector<DeviceTensor>> out = runner.Run("", "Shape", {x}, 1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{2, 3, 4}));
  out = runner.Run("", "Shape", {x}, 1, {Attr("start", -2)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{3, 4}));
  out = runner.Run("", "Shape", {x}, 1, {Attr("start", 1), Attr("end", 10)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{3, 4}));
  out = runner.Run("", "Shape", {x}, 1, {Attr("start", 2), Attr("end", 1)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].numel(), 0);
  out = runner.Run("", "Size", {x}, 1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].rank(), 0);
  EXPECT_EQ(Values((*out)[0]), std::vector<double>{24});
}

// Expand broadcasts both ways: [3,1] by [2,1,4] gives [2,3,4].
TEST(ExpandTest, BroadcastsBothWays) {
  KernelRunner runner;
  for (DataType dtype : {DataType::kFloat32, DataType::kInt8, DataType::kFloat64}) {
    DeviceTensor x = runner.MakeTensor(dtype, {3, 1}, {1, 2, 3});
    StatusOr<std::vector<DeviceTensor>> out =
        runner.Run("", "Expand", {x, Ints(runner, {2, 1, 4})}, 1);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const Shape shape = {2, 3, 4};
    ASSERT_EQ((*out)[0].shape(), shape);
    std::vector<double> expected;
    for (int64_t i = 0; i < 24; ++i) {
      expected.push_back(1.0 + static_cast<double>(BroadcastIndex(Unravel(i, shape), {3, 1})));
    }
    EXPECT_EQ(Values((*out)[0]), expected);
  }
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {3}, {1, 2, 3});
  EXPECT_FALSE(runner.Run("", "Expand", {x, Ints(runner, {2})}, 1).ok());
}

// Concat along each axis (negative too) matches index arithmetic; empty inputs take no room.
TEST(ConcatTest, EveryAxis) {
  KernelRunner runner;
  DeviceTensor a = runner.MakeTensor(DataType::kInt32, {2, 3, 2}, Iota(12));
  for (int64_t axis : {0, 1, 2, -1}) {
    const size_t d = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
    Shape b_shape = {2, 3, 2};
    b_shape[d] = 1;
    DeviceTensor b = runner.MakeTensor(DataType::kInt32, b_shape, Iota(NumElements(b_shape), 100));
    Shape empty_shape = b_shape;
    empty_shape[d] = 0;
    DeviceTensor empty = runner.MakeTensor(DataType::kInt32, empty_shape, {});
    StatusOr<std::vector<DeviceTensor>> out =
        runner.Run("", "Concat", {a, empty, b}, 1, {Attr("axis", axis)});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    Shape shape = {2, 3, 2};
    shape[d] += 1;
    ASSERT_EQ((*out)[0].shape(), shape);
    std::vector<double> expected;
    for (int64_t i = 0; i < NumElements(shape); ++i) {
      std::vector<int64_t> index = Unravel(i, shape);
      const Shape a_shape = {2, 3, 2};
      if (index[d] < a_shape[d]) {
        expected.push_back(static_cast<double>(Linear(index, a_shape)));
      } else {
        index[d] -= a_shape[d];
        expected.push_back(100.0 + static_cast<double>(Linear(index, b_shape)));
      }
    }
    EXPECT_EQ(Values((*out)[0]), expected) << "axis " << axis;
  }
}

// Split: given parts, equal parts, and opset 18's num_outputs with a smaller last part; outputs
// along axis 0 are views of the input.
TEST(SplitTest, PartsAndViews) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {4, 3}, Iota(12));
  StatusOr<std::vector<DeviceTensor>> out =
      runner.Run("", "Split", {x, Ints(runner, {1, 2})}, 2, {Attr("axis", 1)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{0, 3, 6, 9}));
  EXPECT_EQ(Values((*out)[1]), (std::vector<double>{1, 2, 4, 5, 7, 8, 10, 11}));
  out = runner.Run("", "Split", {x, DeviceTensor()}, 2, {}, /*alias=*/true);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values((*out)[1]), Iota(6, 6));
  EXPECT_EQ((*out)[1].data(), static_cast<const float*>(x.data()) + 6);
  out = runner.Run("", "Split", {x}, 3, {Attr("axis", 0), Attr("num_outputs", 3)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 3}));
  EXPECT_EQ((*out)[2].shape(), (Shape{0, 3}));
  EXPECT_FALSE(runner.Run("", "Split", {x, Ints(runner, {1, 1})}, 2).ok());
  // Without num_outputs the parts must be equal.
  EXPECT_FALSE(runner.Run("", "Split", {x}, 2, {Attr("axis", 1)}).ok());
}

// Slice against numpy's rules: negative starts and steps, clamping, default axes and steps.
TEST(SliceTest, MatchesIndexReference) {
  KernelRunner runner;
  const Shape shape = {4, 5, 6};
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, shape, Iota(120));
  struct Case {
    std::vector<double> starts, ends, axes, steps;
  };
  for (const Case& c : std::vector<Case>{{{1, 0}, {3, -1}, {0, 2}, {1, 2}},
                                         {{-1}, {-1000}, {1}, {-2}},
                                         {{0, 10}, {100, 0}, {0, 2}, {3, -1}},
                                         {{2}, {1}, {0}, {1}},
                                         {{1, 1, 1}, {-1, -1, -1}, {}, {}}}) {
    std::vector<DeviceTensor> inputs = {x, Ints(runner, c.starts), Ints(runner, c.ends),
                                        c.axes.empty() ? DeviceTensor() : Ints(runner, c.axes),
                                        c.steps.empty() ? DeviceTensor() : Ints(runner, c.steps)};
    for (bool alias : {false, true}) {
      StatusOr<std::vector<DeviceTensor>> out = runner.Run("", "Slice", inputs, 1, {}, alias);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      // Reference: per axis, the indices numpy's slice visits.
      std::vector<std::vector<int64_t>> picked(3);
      for (size_t d = 0; d < 3; ++d) {
        for (int64_t i = 0; i < shape[d]; ++i) picked[d].push_back(i);
      }
      for (size_t i = 0; i < c.starts.size(); ++i) {
        const size_t d = c.axes.empty() ? i : static_cast<size_t>(c.axes[i]);
        const int64_t step = c.steps.empty() ? 1 : static_cast<int64_t>(c.steps[i]);
        const int64_t dim = shape[d];
        auto clamp = [&](int64_t v) {
          if (v < 0) v += dim;
          return step > 0 ? std::clamp<int64_t>(v, 0, dim) : std::clamp<int64_t>(v, -1, dim - 1);
        };
        picked[d].clear();
        for (int64_t v = clamp(static_cast<int64_t>(c.starts[i]));
             step > 0 ? v < clamp(static_cast<int64_t>(c.ends[i]))
                      : v > clamp(static_cast<int64_t>(c.ends[i]));
             v += step) {
          picked[d].push_back(v);
        }
      }
      const Shape out_shape = {static_cast<int64_t>(picked[0].size()),
                               static_cast<int64_t>(picked[1].size()),
                               static_cast<int64_t>(picked[2].size())};
      ASSERT_EQ((*out)[0].shape(), out_shape);
      std::vector<double> expected;
      for (int64_t a : picked[0]) {
        for (int64_t b : picked[1]) {
          for (int64_t e : picked[2]) expected.push_back(static_cast<double>((a * 5 + b) * 6 + e));
        }
      }
      EXPECT_EQ(Values((*out)[0]), expected);
    }
  }
  EXPECT_FALSE(
      runner
          .Run("", "Slice",
               {x, Ints(runner, {0}), Ints(runner, {1}), Ints(runner, {0}), Ints(runner, {0})}, 1)
          .ok());
}

// A slice of whole rows is a view of the input.
TEST(SliceTest, RowsAreAView) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {4, 3}, Iota(12));
  StatusOr<std::vector<DeviceTensor>> out =
      runner.Run("", "Slice", {x, Ints(runner, {1}), Ints(runner, {3})}, 1, {}, /*alias=*/true);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].data(), static_cast<const float*>(x.data()) + 3);
  EXPECT_EQ(Values((*out)[0]), Iota(6, 3));
}

TEST(SqueezeTest, SqueezeUnsqueezeFlattenAreViews) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kBool, {1, 3, 1, 2}, {1, 0, 1, 1, 0, 0});
  StatusOr<std::vector<DeviceTensor>> out = runner.Run("", "Squeeze", {x, DeviceTensor()}, 1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(Values((*out)[0]), Values(x));
  out = runner.Run("", "Squeeze", {x, Ints(runner, {-2})}, 1, {}, /*alias=*/true);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{1, 3, 2}));
  EXPECT_EQ((*out)[0].data(), x.data());
  EXPECT_FALSE(runner.Run("", "Squeeze", {x, Ints(runner, {1})}, 1).ok());
  out = runner.Run("", "Unsqueeze", {x, Ints(runner, {-1, 0})}, 1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{1, 1, 3, 1, 2, 1}));
  out = runner.Run("", "Flatten", {x}, 1, {Attr("axis", 2)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{3, 2}));
  out = runner.Run("", "Flatten", {x}, 1, {Attr("axis", 0)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{1, 6}));
}

TEST(TileTest, MatchesModuloReference) {
  KernelRunner runner;
  for (DataType dtype : {DataType::kFloat32, DataType::kUint8, DataType::kInt64}) {
    DeviceTensor x = runner.MakeTensor(dtype, {2, 3}, Iota(6));
    StatusOr<std::vector<DeviceTensor>> out = runner.Run("", "Tile", {x, Ints(runner, {3, 2})}, 1);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const Shape shape = {6, 6};
    ASSERT_EQ((*out)[0].shape(), shape);
    std::vector<double> expected;
    for (int64_t i = 0; i < 36; ++i) {
      const std::vector<int64_t> index = Unravel(i, shape);
      expected.push_back(static_cast<double>((index[0] % 2) * 3 + index[1] % 3));
    }
    EXPECT_EQ(Values((*out)[0]), expected);
  }
}

TEST(RangeTest, FloatAndIntegerRanges) {
  KernelRunner runner;
  auto scalar = [&](DataType dtype, double v) { return runner.MakeTensor(dtype, {}, {v}); };
  StatusOr<std::vector<DeviceTensor>> out =
      runner.Run("", "Range",
                 {scalar(DataType::kFloat32, 1), scalar(DataType::kFloat32, 2),
                  scalar(DataType::kFloat32, 0.25)},
                 1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{1, 1.25, 1.5, 1.75}));
  out = runner.Run(
      "", "Range",
      {scalar(DataType::kInt32, 10), scalar(DataType::kInt32, 4), scalar(DataType::kInt32, -3)}, 1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{10, 7}));
  out = runner.Run(
      "", "Range",
      {scalar(DataType::kInt64, 4), scalar(DataType::kInt64, 1), scalar(DataType::kInt64, 1)}, 1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].numel(), 0);
}

TEST(ConstantOfShapeTest, FillsWithTheValue) {
  KernelRunner runner;
  StatusOr<std::vector<DeviceTensor>> out =
      runner.Run("", "ConstantOfShape", {Ints(runner, {2, 3})}, 1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].dtype(), DataType::kFloat32);
  EXPECT_EQ(Values((*out)[0]), std::vector<double>(6, 0.0));
}

TEST(CastLikeTest, TakesTheSecondInputsDtype) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {3}, {1.5, -2.25, 0});
  DeviceTensor like = runner.MakeTensor(DataType::kInt32, {1}, {0});
  StatusOr<std::vector<DeviceTensor>> out = runner.Run("", "CastLike", {x, like}, 1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].dtype(), DataType::kInt32);
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{1, -2, 0}));
}

}  // namespace
}  // namespace zerograph::runtime
