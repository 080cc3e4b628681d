// Bootstrap: how the ranks of one job find each other and exchange small host data
// before (and besides) the GPU traffic. Two implementations: ranks as threads of one
// process (the default, no launcher), and one process per rank under mpirun.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace iris {

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual int rank() const = 0;
  virtual int world() const = 0;
  // Rank among the ranks of this host (picks the GPU).
  virtual int local_rank() const = 0;
  // True when all ranks share one address space (device pointers can be passed as is).
  virtual bool single_process() const = 0;
  virtual const char* name() const = 0;

  virtual void barrier() = 0;
  // `all` receives world() * bytes: rank r's `mine` at offset r * bytes.
  virtual void allgather(const void* mine, void* all, std::size_t bytes) = 0;
  // Root's `data` overwrites everyone's.
  virtual void broadcast(void* data, std::size_t bytes, int root) = 0;
  // Called when this rank fails: peers blocked in (or later entering) a collective
  // throw instead of waiting forever. Under MPI this ends the job.
  virtual void abort(std::string_view why) = 0;
};

// Shared state of one group of thread ranks; create once, hand to every rank.
class ThreadGroup;
std::shared_ptr<ThreadGroup> make_thread_group(int world);
std::unique_ptr<Bootstrap> make_thread_bootstrap(std::shared_ptr<ThreadGroup> group, int rank);
// Wakes every rank of the group blocked in a collective; they throw iris::Error.
void abort_thread_group(ThreadGroup& group, std::string_view why);

// True when this process was started by mpirun/srun with a world of its own.
bool launched_by_mpi();
// Initializes MPI (once per process). Throws iris::Error when built without MPI.
std::unique_ptr<Bootstrap> make_mpi_bootstrap();
// Ends the whole MPI job (MPI_Abort).
[[noreturn]] void abort_mpi_job();
// Finalizes MPI if make_mpi_bootstrap initialized it (registered with atexit).
void finalize_mpi();

}  // namespace iris
