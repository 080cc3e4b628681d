// Ranks as threads of one process: each collective is a round in which every rank
// posts its call (and payload) under one mutex; the last to arrive completes the round.
// Also the collective error messages, which bootstrap_mpi.cpp shares.
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <sstream>
#include <vector>

#include "job/bootstrap.hpp"
#include "iris/error.hpp"

namespace iris {

std::string describe(const CollectiveCall& call) {
  std::string out;
  switch (call.kind) {
    case CollectiveKind::barrier: out = "barrier"; break;
    case CollectiveKind::allgather: out = "allgather"; break;
    case CollectiveKind::broadcast: out = "broadcast"; break;
    case CollectiveKind::teardown: out = "teardown"; break;
  }
  out += " #" + std::to_string(call.seq);
  switch (call.kind) {
    case CollectiveKind::barrier: break;
    case CollectiveKind::allgather: out += " (" + std::to_string(call.bytes) + " bytes)"; break;
    case CollectiveKind::broadcast:
      out += " (" + std::to_string(call.bytes) + " bytes from rank " + std::to_string(call.root) + ")";
      break;
    case CollectiveKind::teardown: out += " (it left its body)"; break;
  }
  return out;
}

std::string collective_mismatch(int a, const CollectiveCall& ca, int b, const CollectiveCall& cb) {
  return "host collective mismatch: rank " + std::to_string(a) + " is at " + describe(ca) + " but rank " +
         std::to_string(b) + " is at " + describe(cb) +
         "; every rank must make the same host collectives (barriers, exchanges, broadcasts, heap "
         "allocations) in the same order";
}

std::string collective_timeout(int rank, const CollectiveCall& call, double seconds, const std::vector<int>& missing) {
  std::ostringstream os;
  os << "host collective timed out: rank " << rank << " waited " << seconds << " s at " << describe(call);
  if (missing.empty()) {
    os << " for a peer that has not arrived; raise IRIS_HOST_TIMEOUT (seconds, 0 waits forever) if the ranks "
          "are just slow, or check which rank is stuck";
    return os.str();
  }
  std::string who = missing.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < missing.size(); ++i) who += (i ? ", " : "") + std::to_string(missing[i]);
  const bool one = missing.size() == 1;
  os << " for " << who << ", which " << (one ? "has" : "have") << " not arrived; raise IRIS_HOST_TIMEOUT (seconds, "
     << "0 waits forever) if " << (one ? "it is" : "they are") << " just slow, or check what " << who << " "
     << (one ? "is" : "are") << " doing";
  return os.str();
}

class ThreadGroup {
 public:
  ThreadGroup(int world, double timeout)
      : world_(world), timeout_(timeout), posted_round_(static_cast<size_t>(world), kNever) {
    for (auto& p : posts_) p.resize(static_cast<size_t>(world));
  }

  int world() const { return world_; }

  // One round: posts `call` (with `payload`, call.bytes long, or null), waits for every
  // rank, then hands the round's posts (indexed by rank) to `read` under the lock.
  template <class Read>
  void exchange(int rank, const CollectiveCall& call, const void* payload, Read&& read) {
    std::unique_lock<std::mutex> lock(mu_);
    throw_if_failed();
    const unsigned long long round = round_;
    std::vector<Post>& posts = posts_[round % 2];
    // Two buffers suffice: a rank can post in round k + 2 only once every rank posted
    // in round k + 1, that is after every rank has read round k.
    for (int q = 0; q < world_; ++q) {
      const Post& other = posts[static_cast<size_t>(q)];
      if (posted_round_[static_cast<size_t>(q)] == round && !(other.call == call)) {
        fail(q < rank ? collective_mismatch(q, other.call, rank, call) : collective_mismatch(rank, call, q, other.call));
        throw_if_failed();
      }
    }
    Post& mine = posts[static_cast<size_t>(rank)];
    mine.call = call;
    mine.data.resize(payload ? call.bytes : 0);
    if (payload && call.bytes) std::memcpy(mine.data.data(), payload, call.bytes);
    posted_round_[static_cast<size_t>(rank)] = round;

    if (++arrived_ == world_) {
      arrived_ = 0;
      ++round_;
      cv_.notify_all();
    } else {
      auto done = [&] { return round_ != round || !failure_.empty(); };
      if (timeout_ > 0) {
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_);
        if (!cv_.wait_until(lock, deadline, done)) {
          fail(collective_timeout(rank, call, timeout_, missing_ranks(round)));
        }
      } else {
        cv_.wait(lock, done);
      }
      // A round that completed is good even if a rank failed since: its data is whole.
      if (round_ == round) throw_if_failed();
    }
    read(static_cast<const std::vector<Post>&>(posts));
  }

  void abort(std::string_view why) {
    std::lock_guard<std::mutex> lock(mu_);
    fail("another rank failed: " + std::string(why));
  }

  struct Post {
    CollectiveCall call;
    std::vector<unsigned char> data;
  };

 private:
  static constexpr unsigned long long kNever = ~0ull;

  // The first failure sticks: every rank, waiting or arriving later, throws it.
  void fail(std::string why) {
    if (failure_.empty()) failure_ = std::move(why);
    cv_.notify_all();
  }
  void throw_if_failed() const {
    if (!failure_.empty()) throw Error(failure_);
  }

  std::vector<int> missing_ranks(unsigned long long round) const {
    std::vector<int> missing;
    for (int q = 0; q < world_; ++q) {
      if (posted_round_[static_cast<size_t>(q)] != round) missing.push_back(q);
    }
    return missing;
  }

  const int world_;
  const double timeout_;  // seconds; 0 waits forever
  std::mutex mu_;
  std::condition_variable cv_;
  unsigned long long round_ = 0;  // the round now open
  int arrived_ = 0;               // ranks posted in it
  std::vector<Post> posts_[2];    // by round parity, then rank
  std::vector<unsigned long long> posted_round_;  // by rank: the last round it posted in
  std::string failure_;
};

namespace {

class ThreadBootstrap final : public Bootstrap {
 public:
  ThreadBootstrap(std::shared_ptr<ThreadGroup> group, int rank) : group_(std::move(group)), rank_(rank) {}
  int rank() const override { return rank_; }
  int world() const override { return group_->world(); }
  int local_rank() const override { return rank_; }
  bool single_process() const override { return true; }
  const char* name() const override { return "threads"; }

  void barrier() override { meet(CollectiveKind::barrier); }
  void teardown_barrier() override { meet(CollectiveKind::teardown); }

  void allgather(const void* mine, void* all, size_t bytes) override {
    const CollectiveCall call{CollectiveKind::allgather, ++seq_, bytes, -1};
    group_->exchange(rank_, call, mine, [&](const std::vector<ThreadGroup::Post>& posts) {
      for (int r = 0; r < world(); ++r) {
        if (bytes) std::memcpy(static_cast<char*>(all) + r * bytes, posts[static_cast<size_t>(r)].data.data(), bytes);
      }
    });
  }

  void broadcast(void* data, size_t bytes, int root) override {
    if (root < 0 || root >= world()) {
      throw Error("broadcast root " + std::to_string(root) + " is out of range [0, " +
                  std::to_string(world()) + ")");
    }
    const CollectiveCall call{CollectiveKind::broadcast, ++seq_, bytes, root};
    group_->exchange(rank_, call, rank_ == root ? data : nullptr, [&](const std::vector<ThreadGroup::Post>& posts) {
      if (rank_ != root && bytes) std::memcpy(data, posts[static_cast<size_t>(root)].data.data(), bytes);
    });
  }

  void abort(std::string_view why) override { group_->abort(why); }

 private:
  // A collective without payload.
  void meet(CollectiveKind kind) {
    group_->exchange(rank_, CollectiveCall{kind, ++seq_, 0, -1}, nullptr, [](const auto&) {});
  }

  std::shared_ptr<ThreadGroup> group_;
  int rank_;
  std::uint64_t seq_ = 0;
};

}  // namespace

std::shared_ptr<ThreadGroup> make_thread_group(int world, double host_timeout) {
  if (world <= 0) throw Error("a thread group needs at least one rank (got " + std::to_string(world) + ")");
  if (!(host_timeout >= 0)) {
    throw Error("host timeout must be a number of seconds >= 0 (0: forever), got " + std::to_string(host_timeout));
  }
  return std::make_shared<ThreadGroup>(world, host_timeout);
}

void abort_thread_group(ThreadGroup& group, std::string_view why) { group.abort(why); }

std::unique_ptr<Bootstrap> make_thread_bootstrap(std::shared_ptr<ThreadGroup> group, int rank) {
  if (rank < 0 || rank >= group->world()) {
    throw Error("rank " + std::to_string(rank) + " is out of range [0, " + std::to_string(group->world()) + ")");
  }
  return std::make_unique<ThreadBootstrap>(std::move(group), rank);
}

}  // namespace iris
