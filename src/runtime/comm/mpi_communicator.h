#ifndef ZEROGRAPH_SRC_RUNTIME_COMM_MPI_COMMUNICATOR_H_
#define ZEROGRAPH_SRC_RUNTIME_COMM_MPI_COMMUNICATOR_H_

#if ZG_WITH_MPI

#include <mpi.h>

#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "zerograph/core/status.h"
#include "zerograph/core/str_cat.h"
#include "zerograph/runtime/communicator.h"

namespace zerograph::runtime {

// Returns Unavailable naming the rank, the call, MPI's message and file:line when an MPI call
// fails (our communicator sets MPI_ERRORS_RETURN, so failures come back instead of aborting).
#define ZG_MPI_CHECK(rank, call)                                                                \
  do {                                                                                          \
    const int zg_mpi_error_ = (call);                                                           \
    if (zg_mpi_error_ != MPI_SUCCESS) {                                                         \
      return ::zerograph::UnavailableError(                                                     \
          ::zerograph::StrCat("rank ", (rank), ": ", #call,                                     \
                              " failed: ", ::zerograph::runtime::MpiErrorString(zg_mpi_error_), \
                              " (", __FILE__, ":", __LINE__, ")"));                             \
    }                                                                                           \
  } while (false)

std::string MpiErrorString(int error);

// Initializes MPI once per process and finalizes it when the last user lets go (and only when it
// was the one to initialize it).
class MpiSession {
 public:
  static StatusOr<std::shared_ptr<MpiSession>> Acquire();
  ~MpiSession();

 private:
  bool initialized_here_ = false;
};

// Collectives over a duplicate of MPI_COMM_WORLD, for host memory. Every MPI call holds `mutex_`
// (see CreateMpiCommunicator for why that makes MPI_THREAD_SERIALIZED enough).
class MpiCommunicator final : public Communicator {
 public:
  static StatusOr<std::unique_ptr<Communicator>> Create(const MpiCommunicatorOptions& options);
  ~MpiCommunicator() override;

  DeviceType device_type() const override { return DeviceType::kCpu; }
  std::string_view backend_name() const override { return "mpi"; }

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
  MpiCommunicator(std::shared_ptr<MpiSession> session, MPI_Comm comm, int rank, int size,
                  const MpiCommunicatorOptions& options);

  // The ring: N-1 MPI_Sendrecv steps per piece, each adding the received partial sum to the local
  // part of the chunk it belongs to (mpi_ring_reduce_scatter.cc).
  Status RingReduceScatter(const void* send, void* recv, size_t count, DataType dtype, ReduceOp op);
  Status LibraryReduceScatter(const void* send, void* recv, size_t count, DataType dtype,
                              ReduceOp op);
  // With a timeout (Communicator::SetTimeout), collectives start in their non-blocking form and
  // wait here (mpi_timeout.cc): polls `requests` until they complete or the timeout passes, then
  // returns Unavailable naming `collective` and the ranks that never began it or stopped.
  Status Wait(std::span<MPI_Request> requests, std::string_view collective);
  // Tells every other rank that this one began its next collective (numbered in `began_`), and
  // reads what they told; called first by each collective when a timeout is set.
  Status Announce();
  // Reads the other ranks' messages that have arrived (announcements, questions, answers) and
  // answers the questions.
  Status ReadMessages();
  // Sends `number` to `peer` without waiting, on `presence_`.
  Status Send(int peer, int tag, uint64_t number);
  // The MPI type and op for a reduction of `dtype` (fp16/bf16: 16-bit words with our own ops).
  MPI_Datatype ReduceType(DataType dtype) const;
  MPI_Op SumOp(DataType dtype) const;

  std::shared_ptr<MpiSession> session_;
  MPI_Comm comm_;
  MpiCommunicatorOptions options_;
  MPI_Op sum_fp16_ = MPI_OP_NULL;
  MPI_Op sum_bf16_ = MPI_OP_NULL;
  std::mutex mutex_;
  // Ring pieces: what arrives, and the partial sum to send on.
  std::vector<std::byte> incoming_;
  std::vector<std::byte> partial_;
  // The timeout's messages (mpi_timeout.cc) travel on a communicator of their own, so that they
  // never match a collective's or the ring's.
  MPI_Comm presence_ = MPI_COMM_NULL;
  uint64_t began_ = 0;              // collectives this rank began
  uint64_t questions_ = 0;          // times this rank asked the others whether they are there
  std::vector<uint64_t> heard_;     // per rank: the last collective it said it began
  std::vector<uint64_t> answered_;  // per rank: the last question it answered
  struct SentMessage {
    MPI_Request request = MPI_REQUEST_NULL;
    uint64_t number = 0;  // the send buffer: stays put in the deque until sent
  };
  std::deque<SentMessage> sent_;
};

}  // namespace zerograph::runtime

#endif  // ZG_WITH_MPI
#endif  // ZEROGRAPH_SRC_RUNTIME_COMM_MPI_COMMUNICATOR_H_
