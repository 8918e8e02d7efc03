# The CUDA backend is optional: found at /usr/local/cuda (or CUDAToolkit_ROOT) it is built, else CPU only.
option(ZG_WITH_CUDA "Build the CUDA + NCCL backend when a CUDA toolkit is found" ON)
if(ZG_WITH_CUDA)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # sm_90 for H100/H200 and sm_80 for A100, unless the user chose.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit)
  endif()
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
  find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND AND NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    add_library(zerograph::nccl UNKNOWN IMPORTED)
    set_target_properties(zerograph::nccl PROPERTIES
      IMPORTED_LOCATION "${NCCL_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
    target_compile_definitions(zerograph_options INTERFACE ZG_WITH_CUDA=1)
    message(STATUS "zerograph: CUDA ${CUDAToolkit_VERSION} and NCCL found, GPU backend enabled "
                   "(architectures ${CMAKE_CUDA_ARCHITECTURES})")
  else()
    set(ZG_WITH_CUDA OFF)
    message(STATUS "zerograph: CUDA or NCCL not found, CPU only "
                   "(set CMAKE_CUDA_COMPILER and NCCL_LIBRARY / NCCL_INCLUDE_DIR to enable)")
  endif()
endif()
