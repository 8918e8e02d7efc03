// comm-bench: the MPI communicator's reduce-scatter algorithms against each other, as
// nccl-tests reports them (algbw = input bytes / time, busbw = algbw · (N−1)/N), plus
// MPI_Allgather for scale. Run under mpirun; rank 0 prints one line per algorithm and size.
//
//   mpirun -np 2 --allow-run-as-root --oversubscribe comm-bench --sizes-mb 1,16,64,256
//
// The result picks ReduceScatterAlgorithm's default (include/zerograph/runtime/communicator.h).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "zerograph/runtime/communicator.h"
#include "zerograph/runtime/device.h"
#include "zerograph/runtime/device_tensor.h"

namespace zerograph::runtime {
namespace {

struct Options {
  std::vector<double> sizes_mb = {1, 16, 64, 256};
  std::vector<double> piece_kb = {256, 1024, 4096};
  int iters = 5;
  int warmup = 1;
};

struct Algorithm {
  std::string name;
  std::unique_ptr<Communicator> comm;
};

// Seconds per call of `op`, the slowest rank's: barriers bracket the timed loop.
template <typename Op>
StatusOr<double> Time(Communicator& comm, const Options& options, Op&& op) {
  for (int i = 0; i < options.warmup; ++i) ZG_RETURN_IF_ERROR(op());
  ZG_RETURN_IF_ERROR(comm.Barrier());
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < options.iters; ++i) ZG_RETURN_IF_ERROR(op());
  ZG_RETURN_IF_ERROR(comm.Barrier());
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count() / options.iters;
}

Status Run(const Options& options) {
  std::vector<Algorithm> algorithms;
  for (double kb : options.piece_kb) {
    MpiCommunicatorOptions ring;
    ring.reduce_scatter = ReduceScatterAlgorithm::kRing;
    ring.ring_piece_bytes = static_cast<size_t>(kb * 1024);
    ZG_ASSIGN_OR_RETURN(std::unique_ptr<Communicator> comm, CreateMpiCommunicator(ring));
    algorithms.push_back({"ring/" + std::to_string(static_cast<int>(kb)) + "KiB", std::move(comm)});
  }
  MpiCommunicatorOptions library;
  library.reduce_scatter = ReduceScatterAlgorithm::kLibrary;
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<Communicator> library_comm, CreateMpiCommunicator(library));
  algorithms.push_back({"MPI_Reduce_scatter_block", std::move(library_comm)});

  Communicator& world = *algorithms.front().comm;
  const int n = world.size();
  std::unique_ptr<Device> device = CreateCpuDevice();
  ZG_ASSIGN_OR_RETURN(std::unique_ptr<Stream> stream, device->CreateStream("comm"));
  if (world.rank() == 0) {
    std::printf("# comm-bench: %d ranks, fp32, %d iterations after %d warm-up\n", n, options.iters,
                options.warmup);
    std::printf("%-26s %10s %10s %10s %10s\n", "collective", "size_MB", "time_ms", "algbw_GB/s",
                "busbw_GB/s");
  }
  for (double mb : options.sizes_mb) {
    // The input of a reduce-scatter (the fused buffer); a multiple of the ranks.
    const int64_t count = std::max<int64_t>(1, static_cast<int64_t>(mb * 1e6 / 4) / n);
    ZG_ASSIGN_OR_RETURN(DeviceTensor input,
                        DeviceTensor::Allocate(*device, DataType::kFloat32, {count * n}));
    ZG_ASSIGN_OR_RETURN(DeviceTensor output,
                        DeviceTensor::Allocate(*device, DataType::kFloat32, {count}));
    // Touch every page before timing (first touch costs more than the copy on these VMs).
    float* data = input.data_as<float>();
    for (int64_t i = 0; i < input.numel(); ++i) data[i] = static_cast<float>(i % 97) * 0.25f;
    std::memset(output.data(), 0, output.byte_size());
    const double bytes = static_cast<double>(input.byte_size());
    auto report = [&](const std::string& name, double seconds) {
      if (world.rank() != 0) return;
      const double algbw = bytes / seconds / 1e9;
      std::printf("%-26s %10.1f %10.2f %10.2f %10.2f\n", name.c_str(), bytes / 1e6, seconds * 1e3,
                  algbw, algbw * (n - 1) / n);
      std::fflush(stdout);
    };
    for (Algorithm& algorithm : algorithms) {
      ZG_ASSIGN_OR_RETURN(double seconds, Time(*algorithm.comm, options, [&] {
                            return algorithm.comm->ReduceScatter(input, output, ReduceOp::kSum,
                                                                 *stream);
                          }));
      report("reduce_scatter " + algorithm.name, seconds);
    }
    ZG_ASSIGN_OR_RETURN(double seconds, Time(world, options, [&] {
                          return world.AllGather(output, input, *stream);
                        }));
    report("all_gather MPI_Allgather", seconds);
  }
  return Status::Ok();
}

}  // namespace
}  // namespace zerograph::runtime

int main(int argc, char** argv) {
  zerograph::runtime::Options options;
  CLI::App app("Reduce-scatter algorithms of the MPI communicator, nccl-tests style.");
  app.add_option("--sizes-mb", options.sizes_mb, "Input sizes per rank in MB")->delimiter(',');
  app.add_option("--ring-piece-kb", options.piece_kb, "Ring piece sizes in KiB")->delimiter(',');
  app.add_option("--iters", options.iters, "Timed iterations")->check(CLI::PositiveNumber);
  app.add_option("--warmup", options.warmup, "Untimed iterations first")
      ->check(CLI::NonNegativeNumber);
  CLI11_PARSE(app, argc, argv);
  zerograph::Status status = zerograph::runtime::Run(options);
  if (!status.ok()) {
    std::fprintf(stderr, "error: %s\n", status.ToString().c_str());
    return status.ExitCode();
  }
  return 0;
}
