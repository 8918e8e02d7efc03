# MPI is optional: without it every program runs as one rank. Set ZG_WITH_MPI=OFF to build without it.
option(ZG_WITH_MPI "Build the MPI communicator (multi-rank on CPU)" ON)
if(ZG_WITH_MPI)
  find_package(MPI COMPONENTS CXX)
  if(MPI_CXX_FOUND)
    target_compile_definitions(zerograph_options INTERFACE ZG_WITH_MPI=1)
    message(STATUS "zerograph: MPI found (${MPIEXEC_EXECUTABLE})")
  else()
    set(ZG_WITH_MPI OFF)
    message(STATUS "zerograph: MPI not found, building single-rank only "
                   "(install libopenmpi-dev or set MPI_HOME)")
  endif()
endif()
