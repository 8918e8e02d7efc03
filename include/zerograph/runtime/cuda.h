#ifndef ZEROGRAPH_RUNTIME_CUDA_H_
#define ZEROGRAPH_RUNTIME_CUDA_H_

#include <chrono>
#include <memory>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/runtime/communicator.h"
#include "zerograph/runtime/device.h"
#include "zerograph/runtime/device_tensor.h"
#include "zerograph/runtime/stream.h"

// The CUDA backend (docs/architecture.md §5): a GPU as a Device, NCCL as the Communicator. Declared
// in every build; a build without CUDA answers Unimplemented (and 0 GPUs), so callers need no #if.

namespace zerograph::runtime {

// Whether this build has the CUDA + NCCL backend.
bool CudaBackendBuilt();

// GPUs this process can use; 0 without the backend, without a driver or without a GPU. Never
// fails and prints nothing, so it can pick a default.
int CudaDeviceCount();

// GPU `ordinal` as a device: memory from a caching allocator, a cudaStream_t per stream, events
// without timing. Unimplemented without the backend; Unavailable when the GPU cannot be used.
StatusOr<std::unique_ptr<Device>> CreateCudaDevice(int ordinal);

// This process's place in the job: its rank among all ranks and among the ranks of its machine
// (the GPU it should use). Found over MPI when launched by an MPI launcher (the machine's ranks
// from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)), else rank 0 of 1. Keeps MPI initialized while
// it lives, for the NCCL communicator made from it.
class JobRanks {
 public:
  // Unimplemented without the backend, or when launched as several ranks by a build without MPI;
  // Unavailable when MPI fails.
  static StatusOr<std::unique_ptr<JobRanks>> Discover();
  JobRanks(const JobRanks&) = delete;
  JobRanks& operator=(const JobRanks&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Rank among the ranks on this machine, from 0: the GPU ordinal to use.
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }

  // Ends the process of every rank with `exit_code` (MPI_Abort when launched by MPI): for a rank
  // that fails before the NCCL communicator exists, which the other ranks would wait for.
  [[noreturn]] void Abort(int exit_code) const;

  // What the backend keeps (the MPI session and communicator); opaque here.
  struct Mpi;
  const std::shared_ptr<Mpi>& mpi() const { return mpi_; }

 private:
  JobRanks() = default;
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  std::shared_ptr<Mpi> mpi_;  // null when not launched by MPI
};

struct NcclCommunicatorOptions {
  // How long the host waits for the GPU (a stream, an event, a barrier) while the communicator
  // lives before it calls the wait a hang, reports it and lets the caller abort. A rank that died
  // leaves the others blocked in a collective for ever otherwise. The environment variable
  // ZG_NCCL_TIMEOUT_S, when set, overrides it.
  std::chrono::seconds timeout{600};
};

// The collectives of every rank of `ranks` over NCCL on `device` (a CUDA device): rank 0's
// ncclUniqueId is broadcast over MPI (made here when there is one rank), the communicator is
// initialized without blocking and waited for with the timeout. Collectives enqueue on the
// stream's cudaStream_t and return; Barrier and Abort reach every rank (Abort: ncclCommAbort,
// then MPI_Abort). Unimplemented without the backend; Unavailable when NCCL fails.
StatusOr<std::unique_ptr<Communicator>> CreateNcclCommunicator(
    Device& device, const JobRanks& ranks, const NcclCommunicatorOptions& options = {});

}  // namespace zerograph::runtime

#endif  // ZEROGRAPH_RUNTIME_CUDA_H_
