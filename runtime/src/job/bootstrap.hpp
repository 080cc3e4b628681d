// Bootstrap: how the ranks of one job find each other and exchange small host data
// before (and besides) the GPU traffic. Two implementations: ranks as threads of one
// process (the default, no launcher), and one process per rank under mpirun.
//
// Every host collective carries a kind and a per-rank sequence number, and ranks check
// they agree before exchanging data: a rank that left its body early, or calls
// collectives in another order, gets an iris::Error naming both calls instead of
// reading a peer's stale data or hanging. Waits end after the host timeout
// (Options::host_timeout) with an error naming the ranks that have not arrived.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace iris {

// What a host collective is; every rank must make the same calls in the same order.
enum class CollectiveKind : std::uint8_t {
  barrier,
  allgather,
  broadcast,
  teardown,  // the barrier a rank's Context passes after its body, before freeing its heap
};

// One rank's call of a host collective: what all ranks must agree on.
struct CollectiveCall {
  CollectiveKind kind = CollectiveKind::barrier;
  std::uint64_t seq = 0;    // this rank's collectives so far, this one included
  std::uint64_t bytes = 0;  // payload per rank (allgather) or in all (broadcast)
  std::int32_t root = -1;   // broadcast only

  bool operator==(const CollectiveCall&) const = default;
};

// "allgather #7 (8 bytes)", "broadcast #2 (4 bytes from rank 0)", "teardown #9 (it left
// its body)".
std::string describe(const CollectiveCall& call);
// The error for ranks `a` and `b` disagreeing on a collective.
std::string collective_mismatch(int a, const CollectiveCall& ca, int b, const CollectiveCall& cb);
// The error for `rank` giving up on `call` after `seconds` while the ranks `missing`
// have not arrived; an empty `missing` means they are unknown.
std::string collective_timeout(int rank, const CollectiveCall& call, double seconds, const std::vector<int>& missing);

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
  // The last collective of a rank (its Context's teardown): a barrier of its own kind,
  // so that a peer still calling collectives from its body gets a mismatch error.
  virtual void teardown_barrier() = 0;
  // Called when this rank fails: peers blocked in (or later entering) a collective
  // throw instead of waiting forever. Under MPI this ends the job.
  virtual void abort(std::string_view why) = 0;
};

// Shared state of one group of thread ranks; create once, hand to every rank.
// `host_timeout`: seconds a rank waits in a collective for its peers (0: forever).
class ThreadGroup;
std::shared_ptr<ThreadGroup> make_thread_group(int world, double host_timeout = 0);
std::unique_ptr<Bootstrap> make_thread_bootstrap(std::shared_ptr<ThreadGroup> group, int rank);
// Wakes every rank of the group blocked in a collective; they throw iris::Error.
void abort_thread_group(ThreadGroup& group, std::string_view why);

// True when this process was started by mpirun/srun with a world of its own.
bool launched_by_mpi();
// Initializes MPI (once per process). Throws iris::Error when built without MPI, or
// when the ranks span more than one node. `host_timeout` as for make_thread_group.
std::unique_ptr<Bootstrap> make_mpi_bootstrap(double host_timeout = 0);
// Ends the whole MPI job (MPI_Abort).
[[noreturn]] void abort_mpi_job();
// Finalizes MPI if make_mpi_bootstrap initialized it (registered with atexit).
void finalize_mpi();

}  // namespace iris
