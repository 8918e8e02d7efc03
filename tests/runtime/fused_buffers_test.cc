#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/kernel_test_util.h"
#include "zerograph/ir/op_role.h"

namespace zerograph::runtime {
namespace {

using testing::KernelRunner;
using testing::Values;

std::vector<double> Range(double start, int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), start);
  return v;
}

class FusedBuffersTest : public ::testing::TestWithParam<DataType> {};

// CoalesceTensors copies each input to its offset and zeroes the padding between and after them,
// even when the output held garbage; with its inputs made views of the output it only zeroes.
TEST_P(FusedBuffersTest, CoalesceCopiesAndZeroesPadding) {
  const DataType dtype = GetParam();
  KernelRunner runner;
  DeviceTensor a = runner.MakeTensor(dtype, {2, 3}, Range(1, 6));
  DeviceTensor b = runner.MakeTensor(dtype, {3}, Range(10, 3));
  const std::vector<Attr> attrs = {Attr("offsets", std::vector<int64_t>{0, 8}),
                                   Attr("numels", std::vector<int64_t>{6, 3}), Attr("total", 16)};
  StatusOr<std::vector<DeviceTensor>> out =
      runner.Run(kZerographDomain, "CoalesceTensors", {a, b}, 1, attrs);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{16}));
  EXPECT_EQ(Values((*out)[0]),
            (std::vector<double>{1, 2, 3, 4, 5, 6, 0, 0, 10, 11, 12, 0, 0, 0, 0, 0}));

  // The executor's zero-copy path: the op contract says where the inputs live in the buffer.
  Node* node = runner.MakeNode(kZerographDomain, "CoalesceTensors", {a, b}, 1, attrs);
  std::unique_ptr<OpKernel> kernel =
      std::move(runner.registry().CreateKernel(*node, DeviceType::kCpu,
                                               std::vector<DataType>{dtype, dtype}))
          .value();
  ASSERT_NE(kernel->contract()->memory.input_offsets_in_output, nullptr);
  EXPECT_EQ(kernel->contract()->memory.input_offsets_in_output(*node),
            (std::vector<int64_t>{0, 8}));
}

// The total can come from the alignment instead: the end of the inputs rounded up.
TEST_P(FusedBuffersTest, CoalesceTotalFromAlignment) {
  KernelRunner runner;
  DeviceTensor a = runner.MakeTensor(GetParam(), {5}, Range(1, 5));
  StatusOr<std::vector<DeviceTensor>> out =
      runner.Run(kZerographDomain, "CoalesceTensors", {a}, 1,
                 {Attr("offsets", std::vector<int64_t>{0}), Attr("numels", std::vector<int64_t>{5}),
                  Attr("alignment", 4)});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values((*out)[0]), (std::vector<double>{1, 2, 3, 4, 5, 0, 0, 0}));
}

// TensorViews cuts shaped views out of a fused buffer; copying and viewing agree, and views share
// the buffer's memory.
TEST_P(FusedBuffersTest, TensorViewsCutsShapedViews) {
  KernelRunner runner;
  DeviceTensor fused = runner.MakeTensor(GetParam(), {16}, Range(0, 16));
  const std::vector<Attr> attrs = {Attr("offsets", std::vector<int64_t>{0, 8}),
                                   Attr("shapes", std::vector<int64_t>{2, 3, 3}),
                                   Attr("ranks", std::vector<int64_t>{2, 1})};
  for (bool alias : {false, true}) {
    StatusOr<std::vector<DeviceTensor>> out =
        runner.Run(kZerographDomain, "TensorViews", {fused}, 2, attrs, alias);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ((*out)[0].shape(), (Shape{2, 3}));
    EXPECT_EQ((*out)[1].shape(), (Shape{3}));
    EXPECT_EQ(Values((*out)[0]), Range(0, 6));
    EXPECT_EQ(Values((*out)[1]), Range(8, 3));
    EXPECT_EQ((*out)[1].buffer() == fused.buffer(), alias);
  }
}

// LocalShard takes this rank's [r·S, (r+1)·S) on every rank of a 3-rank world.
TEST_P(FusedBuffersTest, LocalShardTakesThisRanksRange) {
  KernelRunner runner;
  DeviceTensor fused = runner.MakeTensor(GetParam(), {12}, Range(0, 12));
  for (int rank = 0; rank < 3; ++rank) {
    runner.set_rank(rank, 3);
    StatusOr<std::vector<DeviceTensor>> out =
        runner.Run(kZerographDomain, "LocalShard", {fused}, 1, {Attr("nranks", 3)});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(Values((*out)[0]), Range(4 * rank, 4)) << "rank " << rank;
  }
}

// Nop passes its first input through; the others only order it.
TEST_P(FusedBuffersTest, NopPassesFirstInput) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(GetParam(), {4}, Range(3, 4));
  DeviceTensor dep = runner.MakeTensor(DataType::kFloat32, {2}, {9, 9});
  StatusOr<std::vector<DeviceTensor>> out = runner.Run(kZerographDomain, "Nop", {x, dep}, 1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Values((*out)[0]), Range(3, 4));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, FusedBuffersTest,
                         ::testing::Values(DataType::kFloat32, DataType::kFloat16,
                                           DataType::kBFloat16),
                         [](const auto& info) { return std::string(DataTypeName(info.param)); });

// Overlapping inputs, a total too small, a numel that disagrees, and views past the end are
// refused; a graph rewritten for 2 ranks is refused on 3, when the kernel is made.
TEST(FusedBuffersErrorTest, InconsistentLayoutsAreRefused) {
  KernelRunner runner;
  DeviceTensor a = runner.MakeTensor(DataType::kFloat32, {4}, Range(0, 4));
  auto coalesce = [&](std::vector<int64_t> offsets, std::vector<int64_t> numels, int64_t total) {
    return runner.Run(kZerographDomain, "CoalesceTensors", {a, a}, 1,
                      {Attr("offsets", offsets), Attr("numels", numels), Attr("total", total)});
  };
  EXPECT_TRUE(coalesce({0, 4}, {4, 4}, 8).ok());
  EXPECT_FALSE(coalesce({0, 3}, {4, 4}, 8).ok());  // overlap
  EXPECT_FALSE(coalesce({0, 4}, {4, 4}, 7).ok());  // total too small
  EXPECT_FALSE(coalesce({0, 4}, {4, 3}, 8).ok());  // numel disagrees with the input
  EXPECT_FALSE(
      runner
          .Run(kZerographDomain, "TensorViews", {a}, 1,
               {Attr("offsets", std::vector<int64_t>{1}), Attr("shapes", std::vector<int64_t>{4}),
                Attr("ranks", std::vector<int64_t>{1})})
          .ok());
  runner.set_rank(0, 3);
  StatusOr<std::vector<DeviceTensor>> shard =
      runner.Run(kZerographDomain, "LocalShard", {a}, 1, {Attr("nranks", 2)});
  ASSERT_FALSE(shard.ok());
  EXPECT_NE(shard.status().message().find("rewritten for 2 ranks but runs on 3"),
            std::string_view::npos)
      << shard.status().ToString();
}

}  // namespace
}  // namespace zerograph::runtime
