// Ranks as threads of one process: a barrier over a condition variable and a shared
// staging area for allgather/broadcast.
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <vector>

#include "bootstrap.hpp"
#include "iris/error.hpp"

namespace iris {

class ThreadGroup {
 public:
  explicit ThreadGroup(int world) : world_(world), slots_(static_cast<size_t>(world)) {}

  int world() const { return world_; }

  void barrier() {
    std::unique_lock<std::mutex> lock(mu_);
    throw_if_aborted();
    const unsigned long long gen = generation_;
    if (++arrived_ == world_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != gen || !abort_reason_.empty(); });
    if (generation_ == gen) throw_if_aborted();
  }

  void put_slot(int rank, const void* data, size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    auto& slot = slots_[static_cast<size_t>(rank)];
    slot.resize(bytes);
    if (bytes) std::memcpy(slot.data(), data, bytes);
  }

  void get_slot(int rank, void* out, size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto& slot = slots_[static_cast<size_t>(rank)];
    if (slot.size() != bytes) {
      throw Error("bootstrap: ranks disagree on the size of a collective exchange (rank " +
                  std::to_string(rank) + " sent " + std::to_string(slot.size()) +
                  " bytes, expected " + std::to_string(bytes) + ")");
    }
    if (bytes) std::memcpy(out, slot.data(), bytes);
  }

  void abort(std::string_view why) {
    std::lock_guard<std::mutex> lock(mu_);
    if (abort_reason_.empty()) abort_reason_ = std::string(why);
    cv_.notify_all();
  }

 private:
  void throw_if_aborted() {
    if (!abort_reason_.empty()) throw Error("another rank failed: " + abort_reason_);
  }

  const int world_;
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  unsigned long long generation_ = 0;
  std::vector<std::vector<unsigned char>> slots_;
  std::string abort_reason_;
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

  void barrier() override { group_->barrier(); }

  void allgather(const void* mine, void* all, size_t bytes) override {
    group_->put_slot(rank_, mine, bytes);
    group_->barrier();
    for (int r = 0; r < world(); ++r) group_->get_slot(r, static_cast<char*>(all) + r * bytes, bytes);
    group_->barrier();  // slots may be reused by the next exchange only after all have read
  }

  void broadcast(void* data, size_t bytes, int root) override {
    if (root < 0 || root >= world()) {
      throw Error("broadcast root " + std::to_string(root) + " is out of range [0, " +
                  std::to_string(world()) + ")");
    }
    if (rank_ == root) group_->put_slot(root, data, bytes);
    group_->barrier();
    if (rank_ != root) group_->get_slot(root, data, bytes);
    group_->barrier();
  }

  void abort(std::string_view why) override { group_->abort(why); }

 private:
  std::shared_ptr<ThreadGroup> group_;
  int rank_;
};

}  // namespace

std::shared_ptr<ThreadGroup> make_thread_group(int world) {
  if (world <= 0) throw Error("a thread group needs at least one rank (got " + std::to_string(world) + ")");
  return std::make_shared<ThreadGroup>(world);
}

void abort_thread_group(ThreadGroup& group, std::string_view why) { group.abort(why); }

std::unique_ptr<Bootstrap> make_thread_bootstrap(std::shared_ptr<ThreadGroup> group, int rank) {
  if (rank < 0 || rank >= group->world()) {
    throw Error("rank " + std::to_string(rank) + " is out of range [0, " + std::to_string(group->world()) + ")");
  }
  return std::make_unique<ThreadBootstrap>(std::move(group), rank);
}

}  // namespace iris
