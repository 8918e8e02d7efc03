// The NCCL communicator on N ranks (run by CTest under mpirun), one GPU per rank. Data is a
// function of (rank, seed, index), so every rank computes the expected result by itself and checks
// its own part, as nccl-tests does. Values are multiples of 1/4 in [-4, 4): sums over a few ranks
// are exact in fp32 and bf16. Exits with kSkipCode (CTest reports a skip) where the machine has
// fewer GPUs than ranks on it.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include "zerograph/runtime/communicator.h"
#include "zerograph/runtime/cuda.h"
#include "zerograph/runtime/device.h"
#include "zerograph/runtime/device_tensor.h"
#include "zerograph/runtime/half.h"
#include "zerograph/runtime/stream.h"

namespace zerograph::runtime {
namespace {

constexpr int kSkipCode = 77;

struct World {
  std::unique_ptr<JobRanks> ranks;
  std::unique_ptr<Device> device;
  std::unique_ptr<Communicator> comm;
  std::unique_ptr<Stream> stream;
};
World* world = nullptr;

float Value(int rank, int seed, size_t i) {
  return static_cast<float>(static_cast<int>((rank * 7 + seed * 13 + i * 5) % 32) - 16) / 4;
}

template <typename T>
DeviceTensor Upload(DataType dtype, const std::vector<T>& values) {
  StatusOr<DeviceTensor> t =
      DeviceTensor::Allocate(*world->device, dtype, {static_cast<int64_t>(values.size())});
  EXPECT_TRUE(t.ok());
  EXPECT_TRUE(world->device->CopyFromHost(std::as_bytes(std::span<const T>(values)), *t).ok());
  return *t;
}

template <typename T>
std::vector<T> Download(const DeviceTensor& t) {
  EXPECT_TRUE(world->stream->Synchronize().ok());
  std::vector<T> values(static_cast<size_t>(t.numel()));
  EXPECT_TRUE(world->device->CopyToHost(t, std::as_writable_bytes(std::span<T>(values))).ok());
  return values;
}

// Reduce-scatter (sum and avg, fp32 and bf16, in place) gives each rank the reduction of its part.
TEST(NcclMpiTest, ReduceScatterGivesEachRankItsPart) {
  const int n = world->comm->size();
  const int rank = world->comm->rank();
  const size_t part = 1000;
  std::vector<float> mine(part * n);
  for (size_t i = 0; i < mine.size(); ++i) mine[i] = Value(rank, 1, i);
  std::vector<float> sum(part, 0.0f);
  for (int r = 0; r < n; ++r) {
    for (size_t i = 0; i < part; ++i) sum[i] += Value(r, 1, rank * part + i);
  }
  DeviceTensor in = Upload(DataType::kFloat32, mine);
  DeviceTensor out = Upload(DataType::kFloat32, std::vector<float>(part, 0.0f));
  ASSERT_TRUE(world->comm->ReduceScatter(in, out, ReduceOp::kSum, *world->stream).ok());
  EXPECT_EQ(Download<float>(out), sum);
  StatusOr<DeviceTensor> own = in.View(static_cast<int64_t>(rank * part), {int64_t{part}});
  ASSERT_TRUE(own.ok());
  ASSERT_TRUE(world->comm->ReduceScatter(in, *own, ReduceOp::kAvg, *world->stream).ok());
  std::vector<float> avg = Download<float>(*own);
  for (size_t i = 0; i < part; ++i) EXPECT_FLOAT_EQ(avg[i], sum[i] / n) << i;

  std::vector<uint16_t> narrow(mine.size());
  for (size_t i = 0; i < mine.size(); ++i) narrow[i] = FloatToBFloat16Bits(mine[i]);
  DeviceTensor in16 = Upload(DataType::kBFloat16, narrow);
  DeviceTensor out16 = Upload(DataType::kBFloat16, std::vector<uint16_t>(part, 0));
  ASSERT_TRUE(world->comm->ReduceScatter(in16, out16, ReduceOp::kSum, *world->stream).ok());
  std::vector<uint16_t> got = Download<uint16_t>(out16);
  for (size_t i = 0; i < part; ++i) EXPECT_EQ(BFloat16BitsToFloat(got[i]), sum[i]) << i;
}

// All-gather (in place and not) puts every rank's part in rank order; all-reduce sums int64;
// broadcast copies the root's tensor; barrier returns on every rank.
TEST(NcclMpiTest, GatherReduceBroadcastBarrier) {
  const int n = world->comm->size();
  const int rank = world->comm->rank();
  const size_t part = 333;
  std::vector<float> mine(part);
  for (size_t i = 0; i < part; ++i) mine[i] = Value(rank, 2, i);
  std::vector<float> all;
  for (int r = 0; r < n; ++r) {
    for (size_t i = 0; i < part; ++i) all.push_back(Value(r, 2, i));
  }
  DeviceTensor in = Upload(DataType::kFloat32, mine);
  DeviceTensor out = Upload(DataType::kFloat32, std::vector<float>(part * n, 0.0f));
  ASSERT_TRUE(world->comm->AllGather(in, out, *world->stream).ok());
  EXPECT_EQ(Download<float>(out), all);
  std::vector<float> padded(part * n, 0.0f);
  std::copy(mine.begin(), mine.end(), padded.begin() + static_cast<int64_t>(rank * part));
  DeviceTensor whole = Upload(DataType::kFloat32, padded);
  StatusOr<DeviceTensor> own = whole.View(static_cast<int64_t>(rank * part), {int64_t{part}});
  ASSERT_TRUE(own.ok());
  ASSERT_TRUE(world->comm->AllGather(*own, whole, *world->stream).ok());
  EXPECT_EQ(Download<float>(whole), all);

  DeviceTensor counts = Upload(DataType::kInt64, std::vector<int64_t>{rank, int64_t{1} << 40});
  ASSERT_TRUE(world->comm->AllReduce(counts, counts, ReduceOp::kSum, *world->stream).ok());
  EXPECT_EQ(Download<int64_t>(counts),
            (std::vector<int64_t>{int64_t{n} * (n - 1) / 2, int64_t{n} << 40}));

  const int root = n - 1;
  DeviceTensor b = Upload(DataType::kFloat64, std::vector<double>{rank + 0.5, -double(rank)});
  ASSERT_TRUE(world->comm->Broadcast(b, root, *world->stream).ok());
  EXPECT_EQ(Download<double>(b), (std::vector<double>{root + 0.5, -double(root)}));
  EXPECT_TRUE(world->comm->Barrier().ok());
}

}  // namespace
}  // namespace zerograph::runtime

int main(int argc, char** argv) {
  using namespace zerograph::runtime;
  ::testing::InitGoogleTest(&argc, argv);
  World w;
  zerograph::StatusOr<std::unique_ptr<JobRanks>> ranks = JobRanks::Discover();
  if (!ranks.ok()) {
    std::fprintf(stderr, "cannot find the ranks: %s\n", ranks.status().ToString().c_str());
    return 1;
  }
  w.ranks = std::move(ranks).value();
  // Every rank of a machine sees the same GPUs, so all ranks skip together.
  if (CudaDeviceCount() < w.ranks->local_size()) {
    if (w.ranks->rank() == 0) {
      std::printf("skipped: no CUDA GPU for each rank (%d rank(s) on this machine, %d GPU(s))\n",
                  w.ranks->local_size(), CudaDeviceCount());
    }
    return kSkipCode;
  }
  auto check = [&](const zerograph::Status& status) {
    if (status.ok()) return;
    std::fprintf(stderr, "rank %d: %s\n", w.ranks->rank(), status.ToString().c_str());
    w.ranks->Abort(1);
  };
  zerograph::StatusOr<std::unique_ptr<Device>> device = CreateCudaDevice(w.ranks->local_rank());
  check(device.status());
  w.device = std::move(device).value();
  zerograph::StatusOr<std::unique_ptr<Communicator>> comm =
      CreateNcclCommunicator(*w.device, *w.ranks);
  check(comm.status());
  w.comm = std::move(comm).value();
  zerograph::StatusOr<std::unique_ptr<Stream>> stream = w.device->CreateStream("comm");
  check(stream.status());
  w.stream = std::move(stream).value();
  world = &w;
  const int result = RUN_ALL_TESTS();
  w.stream.reset();
  w.comm.reset();
  w.device.reset();
  return result;
}
