// The MPI communicator on 1, 2 and 3 ranks (run by CTest under mpirun). Data is a function of
// (rank, seed, index), so every rank computes the expected result by itself and checks its own
// part, as nccl-tests does. Values are multiples of 1/4 in [-4, 4): sums of up to 3 ranks are
// exact in fp32, fp16 and bf16, so sums compare exactly and averages within one rounding.

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
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
using testing::UnitRoundoff;
using testing::Values;

// The communicators every test uses, made once per process (MPI starts once).
struct World {
  std::unique_ptr<Communicator> ring;        // default pieces
  std::unique_ptr<Communicator> ring_small;  // 40-byte pieces: many pieces, uneven last one
  std::unique_ptr<Communicator> library;     // MPI_Reduce_scatter_block
  // With a timeout: the non-blocking collectives, polled (mpi_timeout.cc).
  std::unique_ptr<Communicator> ring_timed;
  std::unique_ptr<Communicator> library_timed;
};
World* world = nullptr;

double Fill(int rank, uint32_t seed, int64_t i) {
  return static_cast<double>((rank * 13 + i * 7 + static_cast<int64_t>(seed) * 5) % 32 - 16) / 4;
}

std::vector<double> RankData(int rank, uint32_t seed, int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = Fill(rank, seed, i);
  return v;
}

// Element i of the reduction over all ranks.
double Reduced(int nranks, uint32_t seed, int64_t i, ReduceOp op) {
  double sum = 0;
  for (int r = 0; r < nranks; ++r) sum += Fill(r, seed, i);
  return op == ReduceOp::kAvg ? sum / nranks : sum;
}

void ExpectReduced(const std::vector<double>& got, const std::vector<double>& expected, ReduceOp op,
                   DataType dtype, const std::string& what) {
  // Sums are exact; an average is rounded once more (twice for MPI's fp16/bf16: sum, then divide).
  const double rtol = op == ReduceOp::kSum ? 0 : 2 * UnitRoundoff(dtype);
  testing::ExpectNear(got, expected, rtol, 0, what);
}

struct Case {
  const char* algorithm;
  Communicator* comm;
};

std::vector<Case> Communicators() {
  return {{"ring", world->ring.get()},
          {"ring-small-pieces", world->ring_small.get()},
          {"library", world->library.get()},
          {"ring-with-timeout", world->ring_timed.get()},
          {"library-with-timeout", world->library_timed.get()}};
}

class CommMpiTest : public ::testing::Test {
 protected:
  KernelRunner runner_;
  std::unique_ptr<Stream> stream_ = std::move(runner_.device().CreateStream("comm")).value();
};

// Reduce-scatter gives every rank its reduced part for each algorithm, dtype, op, in and out of
// place, and sizes from 1 element to several ring pieces that do not divide evenly.
TEST_F(CommMpiTest, ReduceScatterGivesEachRankItsReducedPart) {
  const int n = world->ring->size();
  const int r = world->ring->rank();
  uint32_t seed = 1;
  for (const Case& c : Communicators()) {
    for (DataType dtype : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
      for (int64_t count : {int64_t{1}, int64_t{7}, int64_t{1003}, int64_t{300001}}) {
        // 40-byte pieces over 300001 elements would only test MPI's latency.
        if (c.comm == world->ring_small.get() && count > 1003) continue;
        for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg}) {
          for (bool in_place : {false, true}) {
            ++seed;
            const std::string what = std::string(c.algorithm) + " " +
                                     std::string(DataTypeName(dtype)) + " count " +
                                     std::to_string(count) + " " + std::string(ReduceOpName(op)) +
                                     (in_place ? " in place" : "");
            DeviceTensor input =
                runner_.MakeTensor(dtype, {n * count}, RankData(r, seed, n * count));
            DeviceTensor output = in_place
                                      ? *input.View(r * count, {count})
                                      : *DeviceTensor::Allocate(runner_.device(), dtype, {count});
            Status status = c.comm->ReduceScatter(input, output, op, *stream_);
            ASSERT_TRUE(status.ok()) << what << ": " << status.ToString();
            std::vector<double> expected;
            for (int64_t j = 0; j < count; ++j)
              expected.push_back(Reduced(n, seed, r * count + j, op));
            ExpectReduced(Values(output), expected, op, dtype, what);
          }
        }
      }
    }
  }
}

// All-gather puts every rank's part in rank order, in and out of place, for any dtype.
TEST_F(CommMpiTest, AllGatherCollectsEveryRanksPart) {
  const int n = world->ring->size();
  const int r = world->ring->rank();
  for (DataType dtype :
       {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16, DataType::kInt64}) {
    for (int64_t count : {int64_t{1}, int64_t{333}}) {
      for (bool in_place : {false, true}) {
        const uint32_t seed = static_cast<uint32_t>(count);
        DeviceTensor output = *DeviceTensor::Allocate(runner_.device(), dtype, {n * count});
        DeviceTensor input = in_place ? *output.View(r * count, {count})
                                      : *DeviceTensor::Allocate(runner_.device(), dtype, {count});
        DeviceTensor filled = runner_.MakeTensor(dtype, {count}, RankData(r, seed, count));
        std::memcpy(input.data(), filled.data(), filled.byte_size());
        Status status = world->ring->AllGather(input, output, *stream_);
        ASSERT_TRUE(status.ok()) << status.ToString();
        std::vector<double> expected;
        for (int k = 0; k < n; ++k) {
          for (int64_t j = 0; j < count; ++j) {
            const double v = Fill(k, seed, j);
            expected.push_back(dtype == DataType::kInt64 ? std::trunc(v) : v);
          }
        }
        EXPECT_EQ(Values(output), expected) << DataTypeName(dtype) << " count " << count;
      }
    }
  }
}

// All-reduce sums or averages everywhere, in and out of place, including integers.
TEST_F(CommMpiTest, AllReduceReducesOnEveryRank) {
  const int n = world->ring->size();
  const int r = world->ring->rank();
  for (DataType dtype : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16,
                         DataType::kFloat64, DataType::kInt64}) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg}) {
      if (dtype == DataType::kInt64 && op == ReduceOp::kAvg) continue;
      for (bool in_place : {false, true}) {
        const int64_t count = 517;
        DeviceTensor input = runner_.MakeTensor(dtype, {count}, RankData(r, 3, count));
        DeviceTensor output =
            in_place ? input : *DeviceTensor::Allocate(runner_.device(), dtype, {count});
        Status status = world->ring->AllReduce(input, output, op, *stream_);
        ASSERT_TRUE(status.ok()) << status.ToString();
        std::vector<double> expected;
        for (int64_t j = 0; j < count; ++j) expected.push_back(Reduced(n, 3, j, op));
        if (dtype == DataType::kInt64) {  // the fill's quarters truncated by the int64 tensor
          expected.clear();
          for (int64_t j = 0; j < count; ++j) {
            double sum = 0;
            for (int k = 0; k < n; ++k) sum += std::trunc(Fill(k, 3, j));
            expected.push_back(sum);
          }
        }
        ExpectReduced(Values(output), expected, op, dtype, std::string(DataTypeName(dtype)));
      }
    }
  }
}

// Broadcast copies the root's tensor to every rank; Barrier returns on all.
TEST_F(CommMpiTest, BroadcastFromLastRank) {
  const int n = world->ring->size();
  const int r = world->ring->rank();
  DeviceTensor t = runner_.MakeTensor(DataType::kFloat32, {100}, RankData(r, 9, 100));
  ASSERT_TRUE(world->ring->Broadcast(t, n - 1, *stream_).ok());
  EXPECT_EQ(Values(t), RankData(n - 1, 9, 100));
  EXPECT_TRUE(world->ring->Barrier().ok());
}

// The collective kernels run on a stream's worker thread while the main thread waits, as the
// executor runs them: ReduceScatter(avg) of a fused gradient, then AllGather of the shard.
TEST_F(CommMpiTest, CollectiveKernelsRunOnTheStreamThread) {
  const int n = world->ring->size();
  const int r = world->ring->rank();
  runner_.set_rank(r, n);
  runner_.set_communicator(world->ring.get());
  const int64_t shard = 12;
  DeviceTensor fused =
      runner_.MakeTensor(DataType::kFloat32, {n * shard}, RankData(r, 4, n * shard));
  StatusOr<std::vector<DeviceTensor>> reduced = runner_.Run(
      kZerographDomain, "ReduceScatter", {fused}, 1, {Attr("nranks", n), Attr("reduce_op", "avg")});
  ASSERT_TRUE(reduced.ok()) << reduced.status().ToString();
  std::vector<double> expected;
  for (int64_t j = 0; j < shard; ++j)
    expected.push_back(Reduced(n, 4, r * shard + j, ReduceOp::kAvg));
  ExpectReduced(Values((*reduced)[0]), expected, ReduceOp::kAvg, DataType::kFloat32, "kernel");
  StatusOr<std::vector<DeviceTensor>> gathered =
      runner_.Run(kZerographDomain, "AllGather", {(*reduced)[0]}, 1, {Attr("nranks", n)});
  ASSERT_TRUE(gathered.ok()) << gathered.status().ToString();
  expected.clear();
  for (int64_t j = 0; j < n * shard; ++j) expected.push_back(Reduced(n, 4, j, ReduceOp::kAvg));
  ExpectReduced(Values((*gathered)[0]), expected, ReduceOp::kAvg, DataType::kFloat32, "gathered");
  // A kernel made for another number of ranks is refused before it runs.
  StatusOr<std::vector<DeviceTensor>> wrong =
      runner_.Run(kZerographDomain, "AllGather", {(*reduced)[0]}, 1, {Attr("nranks", n + 1)});
  EXPECT_FALSE(wrong.ok());
}

// Prints failures of ranks other than 0 with the rank in front (rank 0 keeps gtest's output).
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (result.failed()) {
      std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank_, result.file_name(), result.line_number(),
                   result.summary());
    }
  }

 private:
  int rank_;
};

}  // namespace
}  // namespace zerograph::runtime

int main(int argc, char** argv) {
  using namespace zerograph::runtime;
  ::testing::InitGoogleTest(&argc, argv);
  World world;
  auto make = [](ReduceScatterAlgorithm algorithm, size_t piece) {
    MpiCommunicatorOptions options;
    options.reduce_scatter = algorithm;
    options.ring_piece_bytes = piece;
    zerograph::StatusOr<std::unique_ptr<Communicator>> comm = CreateMpiCommunicator(options);
    if (!comm.ok()) {
      std::fprintf(stderr, "cannot start MPI: %s\n", comm.status().ToString().c_str());
      std::exit(1);
    }
    return std::move(comm).value();
  };
  world.ring = make(ReduceScatterAlgorithm::kRing, size_t{1} << 20);
  world.ring_small = make(ReduceScatterAlgorithm::kRing, 40);
  world.library = make(ReduceScatterAlgorithm::kLibrary, size_t{1} << 20);
  world.ring_timed = make(ReduceScatterAlgorithm::kRing, 4096);  // several pieces, not 10^4
  world.ring_timed->SetTimeout(std::chrono::seconds(120));
  world.library_timed = make(ReduceScatterAlgorithm::kLibrary, size_t{1} << 20);
  world.library_timed->SetTimeout(std::chrono::seconds(120));
  zerograph::runtime::world = &world;
  const int rank = world.ring->rank();
  if (rank != 0) {
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(rank));
  }
  const int result = RUN_ALL_TESTS();
  return result;
}
