// The NCCL communicator: one GPU per rank, the ncclUniqueId from rank 0 over MPI, a communicator
// initialized without blocking (ncclConfig_t::blocking = 0) so every wait on it can time out, and
// a watchdog on the device that turns NCCL's asynchronous errors and hangs into errors of the
// stream being waited for.

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/job_ranks_mpi.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/runtime/communicator.h"
#include "zerograph/runtime/cuda.h"

namespace zerograph::runtime {
namespace {

constexpr auto kStatePoll = std::chrono::microseconds(100);

// The NCCL type of a reduction over `dtype` (the base class admits only these).
ncclDataType_t ReductionType(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat16:
      return ncclFloat16;
    case DataType::kBFloat16:
      return ncclBfloat16;
    case DataType::kFloat64:
      return ncclFloat64;
    case DataType::kInt32:
      return ncclInt32;
    case DataType::kInt64:
      return ncclInt64;
    default:
      return ncclFloat32;
  }
}

ncclRedOp_t NcclOp(ReduceOp op) { return op == ReduceOp::kAvg ? ncclAvg : ncclSum; }

std::chrono::seconds TimeoutFromEnvironment(std::chrono::seconds fallback) {
  const char* text = std::getenv("ZG_NCCL_TIMEOUT_S");
  if (text == nullptr) return fallback;
  char* end = nullptr;
  const long seconds = std::strtol(text, &end, 10);
  return end != text && *end == '\0' && seconds > 0 ? std::chrono::seconds(seconds) : fallback;
}

class NcclCommunicator final : public Communicator {
 public:
  static StatusOr<std::unique_ptr<Communicator>> Create(CudaDevice& device, const JobRanks& ranks,
                                                        std::chrono::seconds timeout);
  ~NcclCommunicator() override;

  DeviceType device_type() const override { return DeviceType::kCuda; }
  std::string_view backend_name() const override { return "nccl"; }

 protected:
  Status ReduceScatterImpl(const void* send, void* recv, size_t count, DataType dtype, ReduceOp op,
                           Stream& stream) override;
  Status AllGatherImpl(const void* send, void* recv, size_t count, DataType dtype,
                       Stream& stream) override;
  Status AllReduceImpl(const void* send, void* recv, size_t count, DataType dtype, ReduceOp op,
                       Stream& stream) override;
  Status BroadcastImpl(void* data, size_t count, DataType dtype, int root, Stream& stream) override;
  Status BarrierImpl() override;
  void AbortImpl(int exit_code) override;

 private:
  NcclCommunicator(CudaDevice& device, const JobRanks& ranks, std::chrono::seconds timeout)
      : Communicator(ranks.rank(), ranks.size()),
        device_(device),
        mpi_(ranks.mpi()),
        timeout_(timeout) {}

  std::string Where() const { return StrCat("rank ", rank(), " (", device_.name(), ")"); }
  // The id every rank joins with: rank 0's, broadcast over MPI.
  StatusOr<ncclUniqueId> ShareUniqueId();
  // The communicator's state: an error NCCL hit asynchronously, or OK (also while in progress).
  Status AsyncError() const;
  // After a call that returned `result`: an error, or waits while the (non-blocking) communicator
  // is still busy with the call, up to the timeout.
  Status Settle(ncclResult_t result, std::string_view call);

  CudaDevice& device_;
  std::shared_ptr<JobRanks::Mpi> mpi_;
  std::chrono::seconds timeout_;
  ncclComm_t comm_ = nullptr;
  int watchdog_ = -1;
  // Barrier: a one-element all-reduce on its own stream.
  std::unique_ptr<Stream> barrier_stream_;
  std::shared_ptr<Buffer> barrier_word_;
};

#define ZG_NCCL_SETTLE(call) ZG_RETURN_IF_ERROR(Settle((call), #call))

StatusOr<ncclUniqueId> NcclCommunicator::ShareUniqueId() {
  struct Offer {
    int ok = 0;
    ncclUniqueId id{};
  } offer;
  Status made;
  if (rank() == 0) {
    const ncclResult_t result = ncclGetUniqueId(&offer.id);
    if (result == ncclSuccess) {
      offer.ok = 1;
    } else {
      made = UnavailableError(
          StrCat(Where(), ": ncclGetUniqueId failed: ", ncclGetErrorString(result)));
    }
  }
#if ZG_WITH_MPI
  // Every rank learns whether rank 0 made one, so none waits for an id that never comes.
  if (mpi_ != nullptr) {
    ZG_MPI_CHECK(rank(), MPI_Bcast(&offer, sizeof(offer), MPI_BYTE, 0, mpi_->world));
  }
#endif
  ZG_RETURN_IF_ERROR(made);
  if (offer.ok == 0) {
    return UnavailableError(
        StrCat(Where(), ": rank 0 could not make an NCCL id (see its message)"));
  }
  return offer.id;
}

StatusOr<std::unique_ptr<Communicator>> NcclCommunicator::Create(CudaDevice& device,
                                                                 const JobRanks& ranks,
                                                                 std::chrono::seconds timeout) {
  std::unique_ptr<NcclCommunicator> comm(new NcclCommunicator(device, ranks, timeout));
  ZG_RETURN_IF_ERROR(device.MakeCurrent());
  ZG_ASSIGN_OR_RETURN(ncclUniqueId id, comm->ShareUniqueId());
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  Status initialized =
      comm->Settle(ncclCommInitRankConfig(&comm->comm_, ranks.size(), id, ranks.rank(), &config),
                   "ncclCommInitRankConfig");
#if ZG_WITH_MPI
  // All ranks agree before any collective: a rank that failed to join makes every rank fail.
  if (comm->mpi_ != nullptr) {
    int failed = initialized.ok() ? 0 : 1;
    ZG_MPI_CHECK(ranks.rank(),
                 MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_SUM, comm->mpi_->world));
    if (initialized.ok() && failed > 0) {
      initialized = UnavailableError(StrCat(comm->Where(), ": ", failed,
                                            " other rank(s) could not join NCCL (see their "
                                            "messages)"));
    }
  }
#endif
  ZG_RETURN_IF_ERROR(initialized);
  ZG_ASSIGN_OR_RETURN(comm->barrier_stream_, device.CreateStream("nccl-barrier"));
  ZG_ASSIGN_OR_RETURN(comm->barrier_word_, device.Allocate(sizeof(int32_t)));
  NcclCommunicator* raw = comm.get();
  comm->watchdog_ = device.AddWatchdog({[raw] { return raw->AsyncError(); }, timeout});
  return std::unique_ptr<Communicator>(std::move(comm));
}

NcclCommunicator::~NcclCommunicator() {
  if (watchdog_ >= 0) device_.RemoveWatchdog(watchdog_);
  if (comm_ == nullptr) return;
  device_.MakeCurrent().IgnoreError();
  // Finalize flushes what is queued; a communicator that failed, or does not finish in time,
  // is aborted instead.
  if (AsyncError().ok() && Settle(ncclCommFinalize(comm_), "ncclCommFinalize").ok()) {
    ncclCommDestroy(comm_);
  } else {
    ncclCommAbort(comm_);
  }
}

Status NcclCommunicator::AsyncError() const {
  ncclResult_t state = ncclSuccess;
  ZG_NCCL_CHECK(Where(), ncclCommGetAsyncError(comm_, &state));
  if (state == ncclSuccess || state == ncclInProgress) return Status::Ok();
  return UnavailableError(
      StrCat(Where(), ": NCCL failed: ", ncclGetErrorString(state), ": ", ncclGetLastError(comm_)));
}

Status NcclCommunicator::Settle(ncclResult_t result, std::string_view call) {
  if (result != ncclSuccess && result != ncclInProgress) {
    return UnavailableError(StrCat(Where(), ": ", call, " failed: ", ncclGetErrorString(result),
                                   comm_ != nullptr ? StrCat(": ", ncclGetLastError(comm_)) : ""));
  }
  if (result == ncclSuccess || comm_ == nullptr) return Status::Ok();
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  while (true) {
    ncclResult_t state = ncclInProgress;
    ZG_NCCL_CHECK(Where(), ncclCommGetAsyncError(comm_, &state));
    if (state == ncclSuccess) return Status::Ok();
    if (state != ncclInProgress) {
      return UnavailableError(StrCat(Where(), ": ", call, " failed: ", ncclGetErrorString(state),
                                     ": ", ncclGetLastError(comm_)));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return UnavailableError(StrCat(Where(), ": ", call, " is not done after ", timeout_.count(),
                                     " s; another rank probably failed or never joined (the "
                                     "limit is ZG_NCCL_TIMEOUT_S)"));
    }
    std::this_thread::sleep_for(kStatePoll);
  }
}

Status NcclCommunicator::ReduceScatterImpl(const void* send, void* recv, size_t count,
                                           DataType dtype, ReduceOp op, Stream& stream) {
  ZG_RETURN_IF_ERROR(device_.MakeCurrent());
  ZG_NCCL_SETTLE(ncclReduceScatter(send, recv, count, ReductionType(dtype), NcclOp(op), comm_,
                                   static_cast<cudaStream_t>(stream.native_handle())));
  return Status::Ok();
}

// All-gather and broadcast move bytes unchanged, so any dtype travels as bytes.
Status NcclCommunicator::AllGatherImpl(const void* send, void* recv, size_t count, DataType dtype,
                                       Stream& stream) {
  ZG_RETURN_IF_ERROR(device_.MakeCurrent());
  ZG_NCCL_SETTLE(ncclAllGather(send, recv, count * ElementSize(dtype), ncclUint8, comm_,
                               static_cast<cudaStream_t>(stream.native_handle())));
  return Status::Ok();
}

Status NcclCommunicator::AllReduceImpl(const void* send, void* recv, size_t count, DataType dtype,
                                       ReduceOp op, Stream& stream) {
  ZG_RETURN_IF_ERROR(device_.MakeCurrent());
  ZG_NCCL_SETTLE(ncclAllReduce(send, recv, count, ReductionType(dtype), NcclOp(op), comm_,
                               static_cast<cudaStream_t>(stream.native_handle())));
  return Status::Ok();
}

Status NcclCommunicator::BroadcastImpl(void* data, size_t count, DataType dtype, int root,
                                       Stream& stream) {
  ZG_RETURN_IF_ERROR(device_.MakeCurrent());
  ZG_NCCL_SETTLE(ncclBroadcast(data, data, count * ElementSize(dtype), ncclUint8, root, comm_,
                               static_cast<cudaStream_t>(stream.native_handle())));
  return Status::Ok();
}

Status NcclCommunicator::BarrierImpl() {
  ZG_RETURN_IF_ERROR(device_.MakeCurrent());
  // Every rank's contribution must arrive before the sum completes; the wait polls the watchdog.
  ZG_NCCL_SETTLE(ncclAllReduce(barrier_word_->data(), barrier_word_->data(), 1, ncclInt32, ncclSum,
                               comm_, static_cast<cudaStream_t>(barrier_stream_->native_handle())));
  return barrier_stream_->Synchronize();
}

void NcclCommunicator::AbortImpl(int exit_code) {
  // The other ranks' collectives with this one fail instead of waiting for it.
  if (comm_ != nullptr) ncclCommAbort(comm_);
  comm_ = nullptr;
#if ZG_WITH_MPI
  if (mpi_ != nullptr) MPI_Abort(mpi_->world, exit_code);
#else
  (void)exit_code;
#endif
}

}  // namespace

StatusOr<std::unique_ptr<Communicator>> CreateNcclCommunicator(
    Device& device, const JobRanks& ranks, const NcclCommunicatorOptions& options) {
  ZG_RETURN_IF_NOT(device.type() == DeviceType::kCuda,
                   "the NCCL communicator needs a CUDA "
                   "device, not ",
                   device.name());
  return NcclCommunicator::Create(static_cast<CudaDevice&>(device), ranks,
                                  TimeoutFromEnvironment(options.timeout));
}

}  // namespace zerograph::runtime
