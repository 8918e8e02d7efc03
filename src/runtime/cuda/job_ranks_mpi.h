#ifndef ZEROGRAPH_SRC_RUNTIME_CUDA_JOB_RANKS_MPI_H_
#define ZEROGRAPH_SRC_RUNTIME_CUDA_JOB_RANKS_MPI_H_

#if ZG_WITH_MPI

#include <memory>

#include "runtime/comm/mpi_communicator.h"
#include "zerograph/runtime/cuda.h"

namespace zerograph::runtime {

// What JobRanks keeps when launched by MPI: the session (MPI stays initialized) and a duplicate of
// MPI_COMM_WORLD for the NCCL bootstrap and for MPI_Abort.
struct JobRanks::Mpi {
  std::shared_ptr<MpiSession> session;
  MPI_Comm world = MPI_COMM_NULL;

  ~Mpi() {
    if (world != MPI_COMM_NULL) MPI_Comm_free(&world);
  }
};

}  // namespace zerograph::runtime

#endif  // ZG_WITH_MPI

#endif  // ZEROGRAPH_SRC_RUNTIME_CUDA_JOB_RANKS_MPI_H_
