#include "zerograph/runtime/communicator.h"

#if ZG_WITH_MPI

#include <climits>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "runtime/comm/mpi_communicator.h"

#include <cstdlib>
#include "runtime/comm/reduce.h"
#include "zerograph/runtime/half.h"

namespace zerograph::runtime {
namespace {

// MPI has no 16-bit float types: fp16 and bf16 travel as 16-bit words and add through these.
void SumFloat16(void* in, void* inout, int* len, MPI_Datatype*) {
  AddElements(DataType::kFloat16, in, inout, inout, static_cast<size_t>(*len));
}
void SumBFloat16(void* in, void* inout, int* len, MPI_Datatype*) {
  AddElements(DataType::kBFloat16, in, inout, inout, static_cast<size_t>(*len));
}

// A type of the element size for moving data unreduced.
MPI_Datatype CopyType(DataType dtype) {
  switch (ElementSize(dtype)) {
    case 1:
      return MPI_BYTE;
    case 2:
      return MPI_UINT16_T;
    case 4:
      return MPI_UINT32_T;
    case 8:
      return MPI_UINT64_T;
    default:
      return MPI_DATATYPE_NULL;
  }
}

// MPI counts are ints.
Status CheckCount(size_t count, std::string_view what) {
  ZG_RETURN_IF_NOT(count <= static_cast<size_t>(INT_MAX), what, " of ", count,
                   " elements per rank exceeds MPI's int count");
  return Status::Ok();
}

std::mutex& SessionMutex() {
  static std::mutex mutex;
  return mutex;
}

std::weak_ptr<MpiSession>& CurrentSession() {
  static std::weak_ptr<MpiSession> session;
  return session;
}

}  // namespace

std::string MpiErrorString(int error) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(error, text, &length) != MPI_SUCCESS) return StrCat("MPI error ", error);
  return std::string(text, static_cast<size_t>(length));
}

StatusOr<std::shared_ptr<MpiSession>> MpiSession::Acquire() {
  std::lock_guard<std::mutex> lock(SessionMutex());
  if (std::shared_ptr<MpiSession> session = CurrentSession().lock()) return session;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) {
    return UnavailableError("MPI was finalized already and cannot start again in this process");
  }
  auto session = std::shared_ptr<MpiSession>(new MpiSession());
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = MPI_THREAD_SINGLE;
  if (!initialized) {
    // Collectives run on the communication stream's thread, beside compute: a blocking call that
    // busy-polls would take the core compute needs (Open MPI polls unless told to yield, even
    // when oversubscribed). The user's own setting wins.
    ::setenv("OMPI_MCA_mpi_yield_when_idle", "1", /*overwrite=*/0);
    ZG_MPI_CHECK(-1, MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided));
    session->initialized_here_ = true;
  } else {
    ZG_MPI_CHECK(-1, MPI_Query_thread(&provided));
  }
  if (provided < MPI_THREAD_SERIALIZED) {
    return UnavailableError(StrCat(
        "MPI provides thread level ", provided,
        "; the communicator needs MPI_THREAD_SERIALIZED (collectives run on a stream's thread)"));
  }
  CurrentSession() = session;
  return session;
}

MpiSession::~MpiSession() {
  if (initialized_here_) MPI_Finalize();
}

StatusOr<std::unique_ptr<Communicator>> MpiCommunicator::Create(
    const MpiCommunicatorOptions& options) {
  ZG_RETURN_IF_NOT(options.ring_piece_bytes > 0, "ring_piece_bytes must be positive");
  ZG_ASSIGN_OR_RETURN(std::shared_ptr<MpiSession> session, MpiSession::Acquire());
  MPI_Comm comm = MPI_COMM_NULL;
  ZG_MPI_CHECK(-1, MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  ZG_MPI_CHECK(-1, MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  int rank = 0;
  int size = 1;
  ZG_MPI_CHECK(-1, MPI_Comm_rank(comm, &rank));
  ZG_MPI_CHECK(rank, MPI_Comm_size(comm, &size));
  auto communicator = std::unique_ptr<MpiCommunicator>(
      new MpiCommunicator(std::move(session), comm, rank, size, options));
  ZG_MPI_CHECK(rank, MPI_Comm_dup(comm, &communicator->presence_));
  ZG_MPI_CHECK(rank, MPI_Op_create(&SumFloat16, /*commute=*/1, &communicator->sum_fp16_));
  ZG_MPI_CHECK(rank, MPI_Op_create(&SumBFloat16, /*commute=*/1, &communicator->sum_bf16_));
  return std::unique_ptr<Communicator>(std::move(communicator));
}

MpiCommunicator::MpiCommunicator(std::shared_ptr<MpiSession> session, MPI_Comm comm, int rank,
                                 int size, const MpiCommunicatorOptions& options)
    : Communicator(rank, size), session_(std::move(session)), comm_(comm), options_(options) {}

MpiCommunicator::~MpiCommunicator() {
  if (sum_fp16_ != MPI_OP_NULL) MPI_Op_free(&sum_fp16_);
  if (sum_bf16_ != MPI_OP_NULL) MPI_Op_free(&sum_bf16_);
  MPI_Comm_free(&comm_);
  if (presence_ != MPI_COMM_NULL) MPI_Comm_free(&presence_);
}

MPI_Datatype MpiCommunicator::ReduceType(DataType dtype) const {
  switch (dtype) {
    case DataType::kFloat32:
      return MPI_FLOAT;
    case DataType::kFloat64:
      return MPI_DOUBLE;
    case DataType::kInt32:
      return MPI_INT32_T;
    case DataType::kInt64:
      return MPI_INT64_T;
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return MPI_UINT16_T;
    default:
      return MPI_DATATYPE_NULL;
  }
}

MPI_Op MpiCommunicator::SumOp(DataType dtype) const {
  if (dtype == DataType::kFloat16) return sum_fp16_;
  if (dtype == DataType::kBFloat16) return sum_bf16_;
  return MPI_SUM;
}

Status MpiCommunicator::ReduceScatterImpl(const void* send, void* recv, size_t count,
                                          DataType dtype, ReduceOp op, Stream&) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (timeout().count() > 0) ZG_RETURN_IF_ERROR(Announce());
  if (options_.reduce_scatter == ReduceScatterAlgorithm::kRing) {
    return RingReduceScatter(send, recv, count, dtype, op);
  }
  return LibraryReduceScatter(send, recv, count, dtype, op);
}

Status MpiCommunicator::LibraryReduceScatter(const void* send, void* recv, size_t count,
                                             DataType dtype, ReduceOp op) {
  ZG_RETURN_IF_ERROR(CheckCount(count, "reduce-scatter"));
  // MPI's in-place form wants the result at the front of the buffer, not at this rank's part:
  // reduce into a scratch part instead.
  const size_t bytes = count * ElementSize(dtype);
  const bool in_place =
      static_cast<const std::byte*>(send) + rank() * bytes == static_cast<std::byte*>(recv);
  void* target = recv;
  if (in_place) {
    incoming_.resize(bytes);
    target = incoming_.data();
  }
  if (timeout().count() == 0) {
    ZG_MPI_CHECK(rank(), MPI_Reduce_scatter_block(send, target, static_cast<int>(count),
                                                  ReduceType(dtype), SumOp(dtype), comm_));
  } else {
    MPI_Request request;
    ZG_MPI_CHECK(rank(),
                 MPI_Ireduce_scatter_block(send, target, static_cast<int>(count), ReduceType(dtype),
                                           SumOp(dtype), comm_, &request));
    ZG_RETURN_IF_ERROR(Wait({&request, 1}, "reduce-scatter"));
  }
  if (in_place) std::memcpy(recv, target, bytes);
  if (op == ReduceOp::kAvg) DivideElements(dtype, recv, count, size());
  return Status::Ok();
}

Status MpiCommunicator::AllGatherImpl(const void* send, void* recv, size_t count, DataType dtype,
                                      Stream&) {
  ZG_RETURN_IF_ERROR(CheckCount(count, "all-gather"));
  std::lock_guard<std::mutex> lock(mutex_);
  const MPI_Datatype type = CopyType(dtype);
  ZG_RET_CHECK(type != MPI_DATATYPE_NULL, "all-gather of ", DataTypeName(dtype));
  const int n = static_cast<int>(count);
  const bool in_place = static_cast<const std::byte*>(recv) + rank() * count * ElementSize(dtype) ==
                        static_cast<const std::byte*>(send);
  const void* source = in_place ? MPI_IN_PLACE : send;
  const int send_count = in_place ? 0 : n;
  const MPI_Datatype send_type = in_place ? MPI_DATATYPE_NULL : type;
  if (timeout().count() == 0) {
    ZG_MPI_CHECK(rank(), MPI_Allgather(source, send_count, send_type, recv, n, type, comm_));
    return Status::Ok();
  }
  ZG_RETURN_IF_ERROR(Announce());
  MPI_Request request;
  ZG_MPI_CHECK(rank(),
               MPI_Iallgather(source, send_count, send_type, recv, n, type, comm_, &request));
  return Wait({&request, 1}, "all-gather");
}

Status MpiCommunicator::AllReduceImpl(const void* send, void* recv, size_t count, DataType dtype,
                                      ReduceOp op, Stream&) {
  ZG_RETURN_IF_ERROR(CheckCount(count, "all-reduce"));
  std::lock_guard<std::mutex> lock(mutex_);
  const void* source = send == recv ? MPI_IN_PLACE : send;
  if (timeout().count() == 0) {
    ZG_MPI_CHECK(rank(), MPI_Allreduce(source, recv, static_cast<int>(count), ReduceType(dtype),
                                       SumOp(dtype), comm_));
  } else {
    ZG_RETURN_IF_ERROR(Announce());
    MPI_Request request;
    ZG_MPI_CHECK(rank(), MPI_Iallreduce(source, recv, static_cast<int>(count), ReduceType(dtype),
                                        SumOp(dtype), comm_, &request));
    ZG_RETURN_IF_ERROR(Wait({&request, 1}, "all-reduce"));
  }
  if (op == ReduceOp::kAvg) DivideElements(dtype, recv, count, size());
  return Status::Ok();
}

Status MpiCommunicator::BroadcastImpl(void* data, size_t count, DataType dtype, int root, Stream&) {
  ZG_RETURN_IF_ERROR(CheckCount(count, "broadcast"));
  std::lock_guard<std::mutex> lock(mutex_);
  const MPI_Datatype type = CopyType(dtype);
  ZG_RET_CHECK(type != MPI_DATATYPE_NULL, "broadcast of ", DataTypeName(dtype));
  if (timeout().count() == 0) {
    ZG_MPI_CHECK(rank(), MPI_Bcast(data, static_cast<int>(count), type, root, comm_));
    return Status::Ok();
  }
  ZG_RETURN_IF_ERROR(Announce());
  MPI_Request request;
  ZG_MPI_CHECK(rank(), MPI_Ibcast(data, static_cast<int>(count), type, root, comm_, &request));
  return Wait({&request, 1}, "broadcast");
}

Status MpiCommunicator::BarrierImpl() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (timeout().count() == 0) {
    ZG_MPI_CHECK(rank(), MPI_Barrier(comm_));
    return Status::Ok();
  }
  ZG_RETURN_IF_ERROR(Announce());
  MPI_Request request;
  ZG_MPI_CHECK(rank(), MPI_Ibarrier(comm_, &request));
  return Wait({&request, 1}, "barrier");
}

void MpiCommunicator::AbortImpl(int exit_code) { MPI_Abort(comm_, exit_code); }

StatusOr<std::unique_ptr<Communicator>> CreateMpiCommunicator(
    const MpiCommunicatorOptions& options) {
  return MpiCommunicator::Create(options);
}

}  // namespace zerograph::runtime

#else  // !ZG_WITH_MPI

namespace zerograph::runtime {

StatusOr<std::unique_ptr<Communicator>> CreateMpiCommunicator(const MpiCommunicatorOptions&) {
  return UnimplementedError(
      "this build has no MPI (reconfigure with ZG_WITH_MPI=ON and an MPI installed)");
}

}  // namespace zerograph::runtime

#endif  // ZG_WITH_MPI
