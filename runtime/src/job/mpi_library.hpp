// OpenMPI, reached through dlopen only when mpirun started the job: libiris, and every
// program linking it, needs no libmpi, and a threads-only program never loads it.
// Only types and function signatures come from mpi.h (docs/decisions/0005-packaging-and-mpi.md).
#pragma once

#include <mpi.h>

#if !defined(OPEN_MPI)
#error "libiris reaches MPI through OpenMPI's ABI (libmpi.so.40): build with OpenMPI's mpi.h, or with IRIS_WITH_MPI=OFF"
#endif

namespace iris::mpi {

struct Api {
#define IRIS_MPI_FUNCTION(name) decltype(&::name) name = nullptr;
#define IRIS_MPI_OBJECT(type, member, symbol) type member = nullptr;
#include "job/mpi_library.def"
};

// The loaded library (loaded on first call, once per process). Throws iris::Error
// naming the library, why it could not be used and IRIS_MPI_LIBRARY when libmpi
// cannot be loaded or lacks an entry point. IRIS_MPI_LIBRARY names another file to
// load instead of libmpi.so.40.
const Api& api();

// The library if api() has loaded it, else nullptr; never loads it (for abort paths).
const Api* loaded_api();

}  // namespace iris::mpi
