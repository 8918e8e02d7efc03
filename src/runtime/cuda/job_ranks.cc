#include <cstdlib>
#include <memory>

#include "runtime/cuda/job_ranks_mpi.h"
#include "zerograph/runtime/communicator.h"
#include "zerograph/runtime/cuda.h"

namespace zerograph::runtime {

#if ZG_WITH_MPI

StatusOr<std::unique_ptr<JobRanks>> JobRanks::Discover() {
  std::unique_ptr<JobRanks> ranks(new JobRanks());
  if (!LaunchedByMpi()) return ranks;
  auto mpi = std::make_shared<Mpi>();
  ZG_ASSIGN_OR_RETURN(mpi->session, MpiSession::Acquire());
  ZG_MPI_CHECK(-1, MPI_Comm_dup(MPI_COMM_WORLD, &mpi->world));
  ZG_MPI_CHECK(-1, MPI_Comm_set_errhandler(mpi->world, MPI_ERRORS_RETURN));
  ZG_MPI_CHECK(-1, MPI_Comm_rank(mpi->world, &ranks->rank_));
  ZG_MPI_CHECK(ranks->rank_, MPI_Comm_size(mpi->world, &ranks->size_));
  // The ranks sharing this machine's memory are the ranks sharing its GPUs.
  MPI_Comm machine = MPI_COMM_NULL;
  ZG_MPI_CHECK(ranks->rank_, MPI_Comm_split_type(mpi->world, MPI_COMM_TYPE_SHARED, ranks->rank_,
                                                 MPI_INFO_NULL, &machine));
  const int got_rank = MPI_Comm_rank(machine, &ranks->local_rank_);
  const int got_size = MPI_Comm_size(machine, &ranks->local_size_);
  MPI_Comm_free(&machine);
  ZG_MPI_CHECK(ranks->rank_, got_rank);
  ZG_MPI_CHECK(ranks->rank_, got_size);
  ranks->mpi_ = std::move(mpi);
  return ranks;
}

void JobRanks::Abort(int exit_code) const {
  if (mpi_ != nullptr) MPI_Abort(mpi_->world, exit_code);
  std::_Exit(exit_code);
}

#else  // !ZG_WITH_MPI

StatusOr<std::unique_ptr<JobRanks>> JobRanks::Discover() {
  ZG_RETURN_IF_ERROR(RefuseSeveralRanksWithoutMpi());
  return std::unique_ptr<JobRanks>(new JobRanks());
}

void JobRanks::Abort(int exit_code) const { std::_Exit(exit_code); }

#endif  // ZG_WITH_MPI

}  // namespace zerograph::runtime
