#ifndef ZEROGRAPH_RUNTIME_COMMUNICATOR_H_
#define ZEROGRAPH_RUNTIME_COMMUNICATOR_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "zerograph/core/status.h"
#include "zerograph/ir/dtype.h"
#include "zerograph/runtime/device.h"
#include "zerograph/runtime/device_tensor.h"

namespace zerograph::runtime {

enum class ReduceOp {
  kSum,
  kAvg,  // the sum divided by the number of ranks
};

// "sum", "avg"; and back (InvalidArgument for anything else).
std::string_view ReduceOpName(ReduceOp op);
StatusOr<ReduceOp> ParseReduceOp(std::string_view name);

// The collectives of one group of ranks (docs/architecture.md §5): MPI on CPU, NCCL on GPU, or a
// single rank.
//
// Every collective is called in stream order: from a task running on `stream` (CPU: the call
// blocks that stream's worker thread until it is done), or, for a GPU communicator, on the host
// thread, enqueueing onto stream.native_handle() and returning. Every rank must call the same
// collectives in the same order; collectives called from two threads (a stream's and the main
// thread's Barrier) are only ordered if the caller orders them, e.g. by synchronizing the stream.
// Tensors are contiguous and live on device_type(). fp16 and bf16 reductions add in fp32; partial
// sums travel in the narrow type (as NCCL's do), so they are rounded once per step.
//
// The public members check shapes, dtypes and aliasing once and call the protected ones, which a
// backend implements; they are called with valid, non-overlapping (or exactly in-place) buffers.
class Communicator {
 public:
  virtual ~Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // The device type whose memory the collectives read and write.
  virtual DeviceType device_type() const = 0;
  // "local", "mpi", "nccl", for messages and benchmarks.
  virtual std::string_view backend_name() const = 0;

  // output (numel n) = reduction over ranks of input elements [rank·n, (rank+1)·n); input has
  // size()·n elements. In place when output is that slice of input. fp32, fp16, bf16.
  Status ReduceScatter(const DeviceTensor& input, DeviceTensor& output, ReduceOp op,
                       Stream& stream);
  // output (size()·n elements) = every rank's input (n elements) in rank order. In place when
  // input is this rank's slice of output. Any dtype.
  Status AllGather(const DeviceTensor& input, DeviceTensor& output, Stream& stream);
  // output = reduction of input over ranks, same shape; in place when output is input.
  // fp32, fp16, bf16, float64, int32, int64 (avg only for the floating types).
  Status AllReduce(const DeviceTensor& input, DeviceTensor& output, ReduceOp op, Stream& stream);
  // `tensor` on every rank = `tensor` on rank `root`. Any dtype.
  Status Broadcast(DeviceTensor& tensor, int root, Stream& stream);
  // Returns when every rank has called it (on the calling thread; no stream).
  Status Barrier();
  // Ends the processes of every rank with `exit_code` (MPI_Abort; NCCL: abort the communicator,
  // then exit). For an error that other ranks may not see, so they do not hang in a collective.
  [[noreturn]] void Abort(int exit_code);

  // How long a collective may wait for the other ranks before it fails with Unavailable naming
  // the step, the collective and, where the backend can tell, the ranks that never arrived
  // ("rank 1 did not reach step 5's all-reduce within 30 s"). Zero, the default: wait forever.
  // The MPI and NCCL communicators honour it; the local one never waits.
  void SetTimeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  // The training step the next collectives belong to, for those messages (-1: none yet).
  void SetStep(int64_t step) { step_.store(step, std::memory_order_relaxed); }

 protected:
  Communicator(int rank, int size) : rank_(rank), size_(size) {}

  // `count` is the element count of one rank's part (the output of ReduceScatter, the input of
  // AllGather). For in-place calls `send` equals the rank's part inside `recv` (or the reverse).
  virtual Status ReduceScatterImpl(const void* send, void* recv, size_t count, DataType dtype,
                                   ReduceOp op, Stream& stream) = 0;
  virtual Status AllGatherImpl(const void* send, void* recv, size_t count, DataType dtype,
                               Stream& stream) = 0;
  virtual Status AllReduceImpl(const void* send, void* recv, size_t count, DataType dtype,
                               ReduceOp op, Stream& stream) = 0;
  virtual Status BroadcastImpl(void* data, size_t count, DataType dtype, int root,
                               Stream& stream) = 0;
  virtual Status BarrierImpl() = 0;
  // Optional: tell the other ranks. Default: nothing (the process exits after it).
  virtual void AbortImpl(int /*exit_code*/) {}

  // "step 5's all-reduce", or "the all-reduce" before the first step.
  std::string CollectiveLabel(std::string_view collective) const;
  // "rank 1", "ranks 1, 3".
  static std::string RankList(std::span<const int> ranks);

 private:
  int rank_;
  int size_;
  std::chrono::milliseconds timeout_{0};
  // Set by the training loop's thread, read by the communication stream's.
  std::atomic<int64_t> step_{-1};
};

// How MpiCommunicator reduce-scatters.
enum class ReduceScatterAlgorithm {
  // A ring of MPI_Sendrecv with the additions done here. The default: on our 2-core VMs (OpenMPI
  // 4.1, fp32, bench/comm_bench.cc) it reached busbw 2.6-3.2 GB/s at 16-256 MB on 2 ranks against
  // 0.3-0.9 GB/s for MPI_Reduce_scatter_block (5-9x), and 1.4-1.6 vs 0.3 GB/s on 3 ranks.
  kRing,
  // MPI_Reduce_scatter_block (with our own MPI_Op for fp16 and bf16).
  kLibrary,
};

struct MpiCommunicatorOptions {
  ReduceScatterAlgorithm reduce_scatter = ReduceScatterAlgorithm::kRing;
  // The ring moves each rank's part in pieces of at most this many bytes, so its scratch memory
  // (two pieces) stays in cache; every step of the ring runs per piece.
  size_t ring_piece_bytes = size_t{1} << 20;
};

// True when this process was started by an MPI launcher (mpirun/mpiexec of OpenMPI, MPICH or
// Intel MPI, or srun with PMI/PMIx), judged from the environment the launcher sets.
bool LaunchedByMpi();

// For builds without MPI: Unimplemented when a launcher started this process as one of several
// ranks (OpenMPI's or PMI's size in the environment), each of which would otherwise train alone as
// "rank 0 of 1"; OK otherwise.
Status RefuseSeveralRanksWithoutMpi();

// One rank on CPU, no communication: every collective copies (avg of one rank is the value itself).
std::unique_ptr<Communicator> CreateLocalCommunicator();

// A communicator over MPI_COMM_WORLD (a duplicate of it) for CPU memory. Initializes MPI with
// MPI_THREAD_SERIALIZED unless already initialized, and finalizes it when the last MPI
// communicator is destroyed if it initialized it (MPI cannot be initialized twice in a process).
// SERIALIZED suffices because every MPI call of ours holds one lock: collectives run on the
// communication stream's thread while the main thread may call Barrier. Unimplemented when built
// without MPI; Unavailable when MPI fails.
StatusOr<std::unique_ptr<Communicator>> CreateMpiCommunicator(
    const MpiCommunicatorOptions& options = {});

// MPI when launched by an MPI launcher and built with MPI, else one local rank; Unimplemented when
// launched as several ranks by a build without MPI.
StatusOr<std::unique_ptr<Communicator>> CreateWorldCommunicator(
    const MpiCommunicatorOptions& options = {});

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_RUNTIME_COMMUNICATOR_H_
