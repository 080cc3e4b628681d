// One process per rank under mpirun: the bootstrap is a duplicate of MPI_COMM_WORLD,
// and the local rank (which GPU to use) comes from a shared-memory split of it.
//
// Each collective starts with every rank sending every peer a small header (kind, seq,
// bytes, root) by nonblocking point-to-point: once all headers are in, the ranks know
// they are at the same call (else all of them throw the same mismatch error), and the
// ranks still missing at the deadline are named. The payload then moves by a
// nonblocking MPI collective. Waits poll with a short backoff, so a deadline holds.
//
// MPI itself is OpenMPI reached through dlopen (mpi_library.hpp), loaded only here:
// libiris links no libmpi, and a threads-only program never loads it.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "job/bootstrap.hpp"
#include "iris/error.hpp"

#if IRIS_WITH_MPI
#include "job/mpi_library.hpp"
#endif

namespace iris {

bool launched_by_mpi() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"}) {
    if (secure_getenv(var)) return true;
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
  mpi::api().MPI_Error_string(rc, text, &len);
  throw Error(std::string(what) + " failed: " + std::string(text, static_cast<size_t>(len)));
}

// A CollectiveCall as sent between ranks.
struct WireCall {
  std::uint64_t kind, seq, bytes;
  std::int64_t root;
};

WireCall to_wire(const CollectiveCall& c) {
  return {static_cast<std::uint64_t>(c.kind), c.seq, c.bytes, c.root};
}
CollectiveCall from_wire(const WireCall& w) {
  return {static_cast<CollectiveKind>(w.kind), w.seq, w.bytes, static_cast<std::int32_t>(w.root)};
}

constexpr int kHeaderTag = 0x1715;

class MpiBootstrap final : public Bootstrap {
 public:
  explicit MpiBootstrap(double timeout) : timeout_(timeout) {
    mpi_check(mpi_.MPI_Comm_rank(mpi_.comm_world, &rank_), "MPI_Comm_rank");
    mpi_check(mpi_.MPI_Comm_size(mpi_.comm_world, &world_), "MPI_Comm_size");
    MPI_Comm local;
    mpi_check(mpi_.MPI_Comm_split_type(mpi_.comm_world, MPI_COMM_TYPE_SHARED, rank_, mpi_.info_null, &local),
              "MPI_Comm_split_type");
    int local_size = 0;
    mpi_check(mpi_.MPI_Comm_rank(local, &local_rank_), "MPI_Comm_rank");
    mpi_check(mpi_.MPI_Comm_size(local, &local_size), "MPI_Comm_size");
    mpi_.MPI_Comm_free(&local);
    if (local_size != world_) {
      // Every rank sees the same split, so every rank throws this (none waits on another).
      int leaders = 0, leader = local_rank_ == 0 ? 1 : 0;
      mpi_check(mpi_.MPI_Allreduce(&leader, &leaders, 1, mpi_.int_type, mpi_.op_sum, mpi_.comm_world), "MPI_Allreduce");
      throw Error("mpirun placed the " + std::to_string(world_) + " ranks on " + std::to_string(leaders) +
                  " nodes (" + std::to_string(local_size) + " on this one); libiris's symmetric heap needs every "
                  "rank on one node, where the GPUs can map each other's memory: start all ranks on one node");
    }
    // libiris's messages never match the application's.
    mpi_check(mpi_.MPI_Comm_dup(mpi_.comm_world, &comm_), "MPI_Comm_dup");
  }
  ~MpiBootstrap() override {
    int finalized = 0;
    mpi_.MPI_Finalized(&finalized);
    if (!finalized) mpi_.MPI_Comm_free(&comm_);
  }
  int rank() const override { return rank_; }
  int world() const override { return world_; }
  int local_rank() const override { return local_rank_; }
  bool single_process() const override { return world_ == 1; }
  const char* name() const override { return "mpi"; }

  void barrier() override { agree({CollectiveKind::barrier, ++seq_, 0, -1}); }
  void teardown_barrier() override { agree({CollectiveKind::teardown, ++seq_, 0, -1}); }

  void allgather(const void* mine, void* all, size_t bytes) override {
    const CollectiveCall call{CollectiveKind::allgather, ++seq_, bytes, -1};
    const int count = mpi_count(bytes);
    const auto deadline = agree(call);
    std::vector<MPI_Request> req(1);
    mpi_check(mpi_.MPI_Iallgather(mine, count, mpi_.byte_type, all, count, mpi_.byte_type, comm_, &req[0]),
              "MPI_Iallgather");
    wait_payload(req, call, deadline);
  }

  void broadcast(void* data, size_t bytes, int root) override {
    if (root < 0 || root >= world_) {
      throw Error("broadcast root " + std::to_string(root) + " is out of range [0, " + std::to_string(world_) + ")");
    }
    const CollectiveCall call{CollectiveKind::broadcast, ++seq_, bytes, root};
    const int count = mpi_count(bytes);
    const auto deadline = agree(call);
    std::vector<MPI_Request> req(1);
    mpi_check(mpi_.MPI_Ibcast(data, count, mpi_.byte_type, root, comm_, &req[0]), "MPI_Ibcast");
    wait_payload(req, call, deadline);
  }

  void abort(std::string_view) override { mpi_.MPI_Abort(mpi_.comm_world, 1); }

 private:
  using Clock = std::chrono::steady_clock;

  static int mpi_count(size_t bytes) {
    if (bytes > static_cast<size_t>(std::numeric_limits<int>::max())) {
      throw Error("host collective of " + std::to_string(bytes) + " bytes is too large for MPI (at most " +
                  std::to_string(std::numeric_limits<int>::max()) + ")");
    }
    return static_cast<int>(bytes);
  }

  Clock::time_point deadline() const {
    if (timeout_ <= 0) return Clock::time_point::max();
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_));
  }

  // Polls until every request completes (true) or `until` passes (false).
  bool wait_until(std::vector<MPI_Request>& reqs, Clock::time_point until) const {
    std::chrono::microseconds nap(0);
    for (int polls = 0;; ++polls) {
      int done = 0;
      mpi_check(mpi_.MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE),
                "MPI_Testall");
      if (done) return true;
      if (Clock::now() >= until) return false;
      // Spin briefly (collectives are usually matched at once), then back off to 1 ms.
      if (polls > 100) nap = std::min(std::chrono::microseconds(1000), std::max(nap * 2, std::chrono::microseconds(10)));
      if (nap.count()) std::this_thread::sleep_for(nap);
    }
  }

  // Exchanges headers with every peer and checks that all are at `call`; returns the
  // deadline, which the payload shares.
  Clock::time_point agree(const CollectiveCall& call) {
    const Clock::time_point until = deadline();
    // On the heap: a timeout leaves these requests pending (see below).
    struct Exchange {
      WireCall mine;
      std::vector<WireCall> all;
      std::vector<int> peers;
      std::vector<MPI_Request> reqs;  // receives (by peer), then sends
    };
    auto x = std::make_unique<Exchange>();
    x->mine = to_wire(call);
    x->all.resize(static_cast<size_t>(world_));
    x->all[static_cast<size_t>(rank_)] = x->mine;
    for (int r = 0; r < world_; ++r) {
      if (r == rank_) continue;
      x->peers.push_back(r);
      x->reqs.emplace_back();
      mpi_check(mpi_.MPI_Irecv(&x->all[static_cast<size_t>(r)], sizeof(WireCall), mpi_.byte_type, r, kHeaderTag,
                               comm_, &x->reqs.back()),
                "MPI_Irecv");
    }
    for (int r : x->peers) {
      x->reqs.emplace_back();
      mpi_check(mpi_.MPI_Isend(&x->mine, sizeof(WireCall), mpi_.byte_type, r, kHeaderTag, comm_, &x->reqs.back()),
                "MPI_Isend");
    }
    if (!wait_until(x->reqs, until)) {
      std::vector<int> missing;
      for (size_t i = 0; i < x->peers.size(); ++i) {
        int got = 0;
        mpi_check(mpi_.MPI_Test(&x->reqs[i], &got, MPI_STATUS_IGNORE), "MPI_Test");
        if (!got) missing.push_back(x->peers[i]);
      }
      // A late peer still matches these requests, so their buffers must outlive this
      // call: leave them (a few bytes, on a path after which the job is aborted).
      (void)x.release();
      throw Error(collective_timeout(rank_, call, timeout_, missing));
    }
    const CollectiveCall first = from_wire(x->all[0]);
    for (int r = 1; r < world_; ++r) {
      const CollectiveCall theirs = from_wire(x->all[static_cast<size_t>(r)]);
      if (!(theirs == first)) throw Error(collective_mismatch(0, first, r, theirs));
    }
    return until;
  }

  void wait_payload(std::vector<MPI_Request>& req, const CollectiveCall& call, Clock::time_point until) {
    if (!wait_until(req, until)) {
      throw Error(collective_timeout(rank_, call, timeout_, {}) + " (every rank had arrived; its data did not)");
    }
  }

  const mpi::Api& mpi_ = mpi::api();
  int rank_ = 0, world_ = 1, local_rank_ = 0;
  double timeout_;  // seconds; 0 waits forever
  MPI_Comm comm_ = mpi_.comm_null;
  std::uint64_t seq_ = 0;
};

}  // namespace

std::unique_ptr<Bootstrap> make_mpi_bootstrap(double host_timeout) {
  if (!(host_timeout >= 0)) {
    throw Error("host timeout must be a number of seconds >= 0 (0: forever), got " + std::to_string(host_timeout));
  }
  const mpi::Api& m = mpi::api();  // throws when OpenMPI cannot be loaded
  int initialized = 0;
  m.MPI_Initialized(&initialized);
  if (!initialized) {
    mpi_check(m.MPI_Init(nullptr, nullptr), "MPI_Init");
    g_we_initialized = true;
    // MPI cannot be initialized twice in a process, and one process may call
    // iris::run several times (a test binary does): finalize once, at exit.
    std::atexit(finalize_mpi);
  }
  return std::make_unique<MpiBootstrap>(host_timeout);
}

void abort_mpi_job() {
  if (const mpi::Api* m = mpi::loaded_api()) m->MPI_Abort(m->comm_world, 1);
  std::abort();
}

void finalize_mpi() {
  const mpi::Api* m = mpi::loaded_api();
  if (!g_we_initialized || !m) return;
  int finalized = 0;
  m->MPI_Finalized(&finalized);
  if (!finalized) m->MPI_Finalize();
}

#else

std::unique_ptr<Bootstrap> make_mpi_bootstrap(double) {
  throw Error("this libiris was built without MPI support (IRIS_WITH_MPI=OFF); run without mpirun");
}
void abort_mpi_job() { std::abort(); }
void finalize_mpi() {}

#endif

}  // namespace iris
