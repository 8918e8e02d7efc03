#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/kernel_test_util.h"
#include "zerograph/ir/op_role.h"
#include "zerograph/runtime/communicator.h"

namespace zerograph::runtime {
namespace {

using testing::KernelRunner;
using testing::Values;

// One rank: every collective is a copy, avg included, and the collective kernels run through it.
TEST(LocalCommunicatorTest, CollectiveKernelsCopyOnOneRank) {
  KernelRunner runner;
  std::unique_ptr<Communicator> comm = CreateLocalCommunicator();
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->size(), 1);
  runner.set_communicator(comm.get());
  for (DataType dtype : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    DeviceTensor x = runner.MakeTensor(dtype, {6}, {1, 2, 3, 4, 5, 6});
    for (const char* op : {"ReduceScatter", "AllGather", "AllReduce"}) {
      std::vector<Attr> attrs = {Attr("nranks", 1)};
      if (std::string(op) != "AllGather") attrs.push_back(Attr("reduce_op", "avg"));
      StatusOr<std::vector<DeviceTensor>> out = runner.Run(kZerographDomain, op, {x}, 1, attrs);
      ASSERT_TRUE(out.ok()) << op << ": " << out.status().ToString();
      EXPECT_EQ(Values((*out)[0]), Values(x)) << op;
    }
  }
}

// A collective kernel without a communicator, or with an unknown reduce_op, fails with the cause.
TEST(LocalCommunicatorTest, MisconfiguredCollectivesAreRefused) {
  KernelRunner runner;
  DeviceTensor x = runner.MakeTensor(DataType::kFloat32, {2}, {1, 2});
  StatusOr<std::vector<DeviceTensor>> out = runner.Run(kZerographDomain, "AllReduce", {x}, 1);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("without a communicator"), std::string_view::npos);
  out = runner.Run(kZerographDomain, "ReduceScatter", {x}, 1,
                   {Attr("nranks", int64_t{1}), Attr("reduce_op", "max")});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("'max'"), std::string_view::npos);
}

// The communicator checks sizes, dtypes and overlaps before any backend sees the call.
TEST(LocalCommunicatorTest, ContractViolationsAreRefused) {
  KernelRunner runner;
  std::unique_ptr<Communicator> comm = CreateLocalCommunicator();
  std::unique_ptr<Stream> stream = std::move(runner.device().CreateStream("comm")).value();
  DeviceTensor a = runner.MakeTensor(DataType::kFloat32, {8}, std::vector<double>(8, 1));
  DeviceTensor b = runner.MakeTensor(DataType::kFloat32, {4}, std::vector<double>(4, 1));
  DeviceTensor h = runner.MakeTensor(DataType::kFloat16, {8}, std::vector<double>(8, 1));
  DeviceTensor i = runner.MakeTensor(DataType::kInt64, {8}, std::vector<double>(8, 1));
  EXPECT_FALSE(comm->ReduceScatter(a, b, ReduceOp::kSum, *stream).ok());  // 8 != 1 x 4
  EXPECT_FALSE(comm->AllReduce(a, h, ReduceOp::kSum, *stream).ok());      // dtypes differ
  EXPECT_FALSE(comm->AllReduce(i, i, ReduceOp::kAvg, *stream).ok());      // avg of integers
  EXPECT_TRUE(comm->AllReduce(i, i, ReduceOp::kSum, *stream).ok());       // in place
  DeviceTensor overlap = *a.View(2, {6});
  DeviceTensor head = *a.View(0, {6});
  EXPECT_FALSE(comm->AllReduce(head, overlap, ReduceOp::kSum, *stream).ok());
  EXPECT_FALSE(comm->Broadcast(a, 1, *stream).ok());  // no rank 1
  EXPECT_TRUE(comm->Barrier().ok());
}

// Without an MPI launcher's environment the world is one local rank.
TEST(LocalCommunicatorTest, WorldWithoutLauncherIsLocal) {
  if (LaunchedByMpi()) GTEST_SKIP() << "running under an MPI launcher";
  StatusOr<std::unique_ptr<Communicator>> comm = CreateWorldCommunicator();
  ASSERT_TRUE(comm.ok()) << comm.status().ToString();
  EXPECT_EQ((*comm)->backend_name(), "local");
  EXPECT_EQ((*comm)->size(), 1);
}

#if !ZG_WITH_MPI
// A build without MPI launched as several ranks refuses to run each as "rank 0 of 1".
TEST(LocalCommunicatorTest, SeveralRanksWithoutMpiAreRefused) {
  setenv("OMPI_COMM_WORLD_SIZE", "2", /*overwrite=*/1);
  StatusOr<std::unique_ptr<Communicator>> comm = CreateWorldCommunicator();
  unsetenv("OMPI_COMM_WORLD_SIZE");
  ASSERT_FALSE(comm.ok());
  EXPECT_EQ(comm.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(comm.status().message().find("no MPI"), std::string_view::npos);
}
#endif

}  // namespace
}  // namespace zerograph::runtime
