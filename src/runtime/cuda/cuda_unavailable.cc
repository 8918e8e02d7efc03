// The CUDA backend's entry points in a build without it: no GPUs, and Unimplemented saying how to
// get the backend.

#include "zerograph/runtime/cuda.h"

#include <cstdlib>

namespace zerograph::runtime {
namespace {

constexpr const char* kNotBuilt =
    "this build has no CUDA backend (rebuild with a CUDA toolkit and NCCL installed: "
    "cmake -DZG_WITH_CUDA=ON, see cmake/cuda.cmake)";

}  // namespace

bool CudaBackendBuilt() { return false; }

int CudaDeviceCount() { return 0; }

StatusOr<std::unique_ptr<Device>> CreateCudaDevice(int) { return UnimplementedError(kNotBuilt); }

StatusOr<std::unique_ptr<JobRanks>> JobRanks::Discover() { return UnimplementedError(kNotBuilt); }

// Never reached: Discover makes no JobRanks in this build.
void JobRanks::Abort(int exit_code) const { std::_Exit(exit_code); }

StatusOr<std::unique_ptr<Communicator>> CreateNcclCommunicator(Device&, const JobRanks&,
                                                               const NcclCommunicatorOptions&) {
  return UnimplementedError(kNotBuilt);
}

}  // namespace zerograph::runtime
