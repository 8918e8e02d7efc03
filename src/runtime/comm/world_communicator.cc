#include <cstdlib>

#include "zerograph/core/str_cat.h"
#include "zerograph/runtime/communicator.h"

// The choice of the world's communicator, apart from the communicator's own checks
// (communicator.cc): a program that runs collectives through a communicator it is handed, as the
// CPU kernels do, then links no MPI unless it creates one.
namespace zerograph::runtime {

bool LaunchedByMpi() {
  // OpenMPI's mpirun; MPICH/Intel MPI hydra and srun --mpi=pmi2 (PMI); PMIx (OpenMPI 5, srun
  // --mpi=pmix).
  for (const char* name :
       {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK", "MPI_LOCALNRANKS"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

Status RefuseSeveralRanksWithoutMpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const char* size = std::getenv(name);
    if (size != nullptr && std::atoi(size) > 1) {
      return UnimplementedError(StrCat("launched as ", size,
                                       " ranks, but this build has no MPI to reach the others "
                                       "(reconfigure with ZG_WITH_MPI=ON and an MPI installed)"));
    }
  }
  return Status::Ok();
}

StatusOr<std::unique_ptr<Communicator>> CreateWorldCommunicator(
    const MpiCommunicatorOptions& options) {
#if ZG_WITH_MPI
  if (LaunchedByMpi()) return CreateMpiCommunicator(options);
#else
  (void)options;
  ZG_RETURN_IF_ERROR(RefuseSeveralRanksWithoutMpi());
#endif
  return CreateLocalCommunicator();
}

}  // namespace zerograph::runtime
