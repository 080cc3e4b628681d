// One process per rank under mpirun: the bootstrap is MPI_COMM_WORLD, and the local
// rank (which GPU to use) comes from a shared-memory split of it.
#include <cstdlib>
#include <string>

#include "bootstrap.hpp"
#include "iris/error.hpp"

#if IRIS_WITH_MPI
#include <mpi.h>
#endif

namespace iris {

bool launched_by_mpi() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"}) {
    if (std::getenv(var)) return true;
  }
  return false;
}

#if IRIS_WITH_MPI
namespace {

bool g_we_initialized = false;

void mpi_check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(std::string(what) + " failed: " + std::string(text, static_cast<size_t>(len)));
}

class MpiBootstrap final : public Bootstrap {
 public:
  MpiBootstrap() {
    mpi_check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    mpi_check(MPI_Comm_size(MPI_COMM_WORLD, &world_), "MPI_Comm_size");
    MPI_Comm local;
    mpi_check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
              "MPI_Comm_split_type");
    mpi_check(MPI_Comm_rank(local, &local_rank_), "MPI_Comm_rank");
    MPI_Comm_free(&local);
  }
  int rank() const override { return rank_; }
  int world() const override { return world_; }
  int local_rank() const override { return local_rank_; }
  bool single_process() const override { return world_ == 1; }
  const char* name() const override { return "mpi"; }

  void barrier() override { mpi_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }
  void allgather(const void* mine, void* all, size_t bytes) override {
    mpi_check(MPI_Allgather(mine, static_cast<int>(bytes), MPI_BYTE, all, static_cast<int>(bytes), MPI_BYTE,
                            MPI_COMM_WORLD),
              "MPI_Allgather");
  }
  void broadcast(void* data, size_t bytes, int root) override {
    if (root < 0 || root >= world_) {
      throw Error("broadcast root " + std::to_string(root) + " is out of range [0, " + std::to_string(world_) + ")");
    }
    mpi_check(MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
  }
  void abort(std::string_view) override { MPI_Abort(MPI_COMM_WORLD, 1); }

 private:
  int rank_ = 0, world_ = 1, local_rank_ = 0;
};

}  // namespace

std::unique_ptr<Bootstrap> make_mpi_bootstrap() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    mpi_check(MPI_Init(nullptr, nullptr), "MPI_Init");
    g_we_initialized = true;
    // MPI cannot be initialized twice in a process, and one process may call
    // iris::run several times (a test binary does): finalize once, at exit.
    std::atexit(finalize_mpi);
  }
  return std::make_unique<MpiBootstrap>();
}

void abort_mpi_job() {
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

void finalize_mpi() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (g_we_initialized && !finalized) MPI_Finalize();
}

#else

std::unique_ptr<Bootstrap> make_mpi_bootstrap() {
  throw Error("this libiris was built without MPI support (IRIS_WITH_MPI=OFF); run without mpirun");
}
void abort_mpi_job() { std::abort(); }
void finalize_mpi() {}

#endif

}  // namespace iris
