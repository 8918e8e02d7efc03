#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/cuda_test_util.h"
#include "zerograph/runtime/communicator.h"
#include "zerograph/runtime/cuda.h"
#include "zerograph/runtime/device.h"
#include "zerograph/runtime/device_tensor.h"
#include "zerograph/runtime/half.h"
#include "zerograph/runtime/stream.h"

namespace zerograph::runtime {
namespace {

// The NCCL communicator of a one-rank job on GPU 0 (the code path of N ranks, with a locally made
// id), and a stream for its collectives.
class NcclCommunicatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ZG_SKIP_WITHOUT_GPU();
    if (LaunchedByMpi()) GTEST_SKIP() << "launched by MPI: these cases are for one rank";
    StatusOr<std::unique_ptr<JobRanks>> ranks = JobRanks::Discover();
    ASSERT_TRUE(ranks.ok()) << ranks.status().ToString();
    ranks_ = std::move(ranks).value();
    StatusOr<std::unique_ptr<Device>> device = CreateCudaDevice(ranks_->local_rank());
    ASSERT_TRUE(device.ok()) << device.status().ToString();
    device_ = std::move(device).value();
    StatusOr<std::unique_ptr<Communicator>> comm = CreateNcclCommunicator(*device_, *ranks_);
    ASSERT_TRUE(comm.ok()) << comm.status().ToString();
    comm_ = std::move(comm).value();
    StatusOr<std::unique_ptr<Stream>> stream = device_->CreateStream("comm");
    ASSERT_TRUE(stream.ok());
    stream_ = std::move(stream).value();
  }

  void TearDown() override {
    stream_.reset();
    comm_.reset();
    device_.reset();
  }

  template <typename T>
  DeviceTensor Upload(DataType dtype, const std::vector<T>& values) {
    StatusOr<DeviceTensor> t =
        DeviceTensor::Allocate(*device_, dtype, {static_cast<int64_t>(values.size())});
    EXPECT_TRUE(t.ok());
    EXPECT_TRUE(device_->CopyFromHost(std::as_bytes(std::span<const T>(values)), *t).ok());
    return *t;
  }

  template <typename T>
  std::vector<T> Download(const DeviceTensor& t) {
    EXPECT_TRUE(stream_->Synchronize().ok());
    std::vector<T> values(static_cast<size_t>(t.numel()));
    EXPECT_TRUE(device_->CopyToHost(t, std::as_writable_bytes(std::span<T>(values))).ok());
    return values;
  }

  std::unique_ptr<JobRanks> ranks_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<Communicator> comm_;
  std::unique_ptr<Stream> stream_;
};

// Data from (rank, seed), as nccl-tests fills it.
std::vector<float> RankData(int rank, int seed, size_t n) {
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = static_cast<float>((rank + 1) * 1000 + seed + i);
  return values;
}

// On one rank reduce-scatter (avg, in place and not), all-gather, all-reduce and broadcast leave
// the values as they are, in fp32, bf16, int64 and float64.
TEST_F(NcclCommunicatorTest, CollectivesOfOneRankKeepValues) {
  EXPECT_EQ(comm_->backend_name(), "nccl");
  EXPECT_EQ(comm_->device_type(), DeviceType::kCuda);
  EXPECT_EQ(comm_->size(), 1);
  const std::vector<float> data = RankData(comm_->rank(), 7, 1024);
  DeviceTensor in = Upload(DataType::kFloat32, data);
  DeviceTensor out = Upload(DataType::kFloat32, std::vector<float>(1024, 0.0f));
  ASSERT_TRUE(comm_->ReduceScatter(in, out, ReduceOp::kAvg, *stream_).ok());
  EXPECT_EQ(Download<float>(out), data);
  ASSERT_TRUE(comm_->ReduceScatter(in, in, ReduceOp::kAvg, *stream_).ok());
  EXPECT_EQ(Download<float>(in), data);
  DeviceTensor gathered = Upload(DataType::kFloat32, std::vector<float>(1024, 0.0f));
  ASSERT_TRUE(comm_->AllGather(in, gathered, *stream_).ok());
  EXPECT_EQ(Download<float>(gathered), data);

  std::vector<uint16_t> bf16;
  for (float v : std::vector<float>{1.5f, -2.25f, 3.0f}) bf16.push_back(FloatToBFloat16Bits(v));
  DeviceTensor b = Upload(DataType::kBFloat16, bf16);
  ASSERT_TRUE(comm_->AllReduce(b, b, ReduceOp::kAvg, *stream_).ok());
  EXPECT_EQ(Download<uint16_t>(b), bf16);

  const std::vector<int64_t> counts = {3, -4, int64_t{1} << 40};
  DeviceTensor c = Upload(DataType::kInt64, counts);
  ASSERT_TRUE(comm_->AllReduce(c, c, ReduceOp::kSum, *stream_).ok());
  EXPECT_EQ(Download<int64_t>(c), counts);

  const std::vector<double> wide = {0.1, 0.2};
  DeviceTensor d = Upload(DataType::kFloat64, wide);
  ASSERT_TRUE(comm_->Broadcast(d, 0, *stream_).ok());
  EXPECT_EQ(Download<double>(d), wide);
  EXPECT_TRUE(comm_->Barrier().ok());
}

// The base checks still apply: avg of integers is refused before NCCL sees it.
TEST_F(NcclCommunicatorTest, AvgOfIntegersIsRefused) {
  DeviceTensor c = Upload(DataType::kInt32, std::vector<int32_t>{1, 2});
  Status status = comm_->AllReduce(c, c, ReduceOp::kAvg, *stream_);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace zerograph::runtime
