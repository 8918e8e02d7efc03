#if ZG_WITH_MPI

#include <algorithm>
#include <climits>
#include <cstring>

#include "runtime/comm/mpi_communicator.h"
#include "runtime/comm/reduce.h"

namespace zerograph::runtime {

// Rank r owns chunk r of the input (chunk c = elements [c·count, (c+1)·count)). At step s it sends
// the partial sum of chunk (r-s-1) mod N to the right and receives the partial sum of chunk
// (r-s-2) mod N from the left, adding its own contribution; after N-1 steps the chunk it received
// last, (r-N) mod N = r, holds every rank's contribution:
//
//   N = 3, chunks a b c      step 0            step 1
//   rank 0 sends c ─────►  rank 1: c0+c1  ─►  rank 2: c0+c1+c2   (rank 2 owns c)
//
// Each chunk moves in pieces (options_.ring_piece_bytes), all steps of one piece before the next,
// so the scratch is two pieces whatever the size. In place (recv is chunk r of send) works: chunk
// r is only read as the local term of the last step, which writes the same elements.
Status MpiCommunicator::RingReduceScatter(const void* send, void* recv, size_t count,
                                          DataType dtype, ReduceOp op) {
  const int n_ranks = size();
  const int r = rank();
  const size_t element_size = ElementSize(dtype);
  if (n_ranks == 1) {
    if (send != recv) std::memcpy(recv, send, count * element_size);
    return Status::Ok();
  }
  const auto* input = static_cast<const std::byte*>(send);
  auto* output = static_cast<std::byte*>(recv);
  const size_t piece = std::clamp<size_t>(options_.ring_piece_bytes / element_size, 1, INT_MAX);
  incoming_.resize(std::min(piece, count) * element_size);
  partial_.resize(std::min(piece, count) * element_size);
  const int left = (r - 1 + n_ranks) % n_ranks;
  const int right = (r + 1) % n_ranks;
  const MPI_Datatype type = ReduceType(dtype);
  const int divisor = op == ReduceOp::kAvg ? n_ranks : 1;
  constexpr int kTag = 7301;

  for (size_t start = 0; start < count; start += piece) {
    const size_t n = std::min(piece, count - start);
    const int n_int = static_cast<int>(n);
    auto chunk_piece = [&](int chunk) {
      return input + (static_cast<size_t>(chunk) * count + start) * element_size;
    };
    for (int step = 0; step < n_ranks - 1; ++step) {
      const int send_chunk = (r - step - 1 + 2 * n_ranks) % n_ranks;
      const int recv_chunk = (r - step - 2 + 2 * n_ranks) % n_ranks;
      const void* outgoing = step == 0 ? chunk_piece(send_chunk) : partial_.data();
      if (timeout().count() == 0) {
        ZG_MPI_CHECK(r, MPI_Sendrecv(outgoing, n_int, type, right, kTag, incoming_.data(), n_int,
                                     type, left, kTag, comm_, MPI_STATUS_IGNORE));
      } else {
        // The same exchange, bounded by the timeout (mpi_timeout.cc).
        MPI_Request requests[2];
        ZG_MPI_CHECK(r, MPI_Irecv(incoming_.data(), n_int, type, left, kTag, comm_, &requests[0]));
        ZG_MPI_CHECK(r, MPI_Isend(outgoing, n_int, type, right, kTag, comm_, &requests[1]));
        ZG_RETURN_IF_ERROR(Wait(requests, "reduce-scatter"));
      }
      const bool last = step == n_ranks - 2;
      void* sum = last ? static_cast<void*>(output + start * element_size) : partial_.data();
      AddElements(dtype, incoming_.data(), chunk_piece(recv_chunk), sum, n, last ? divisor : 1);
    }
  }
  return Status::Ok();
}

}  // namespace zerograph::runtime

#endif  // ZG_WITH_MPI
