// What the ranks of one job share (Job: the first failure, each rank's control block),
// the bootstrap the host backend watches (WatchedBootstrap), and what a failed job
// leaves allocated (quarantine()). Internal: core/ and job/run.cpp.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.hpp"
#include "heap/symmetric_heap.hpp"
#include "iris/device/context.hpp"
#include "job/bootstrap.hpp"
#include "trace/trace.hpp"

namespace iris {

// What a failed job leaves allocated because a peer's kernel may still touch it: kept
// (and reachable) here until the process ends, never freed under a running kernel.
struct Quarantine {
  std::mutex mu;
  std::vector<std::unique_ptr<SymmetricHeap>> heaps;
  std::vector<std::unique_ptr<Tracer>> tracers;
  std::vector<device::Control*> controls;
  std::vector<StreamHandle*> streams;
};

inline Quarantine& quarantine() {
  static Quarantine* q = new Quarantine;  // never destroyed: kernels may outlive static destructors
  return *q;
}

// What the ranks of one job share to stop together: the first failure, and each rank's
// control block, whose abort word makes that rank's device waits stop waiting.
struct Job {
  std::mutex mu;
  std::string failure;  // "rank r: why"
  std::atomic<bool> failed{false};
  // A rank whose GPU work did not stop (after an abort, or past the host timeout): the
  // process cannot tear its contexts down under a running kernel, so run() ends it.
  std::atomic<bool> stuck{false};
  std::string stuck_why;
  std::vector<device::Control*> controls;

  void add(device::Control* c) {
    std::lock_guard<std::mutex> lock(mu);
    controls.push_back(c);
    if (failed.load()) __atomic_store_n(&c->abort, 1u, __ATOMIC_RELEASE);
  }
  void remove(device::Control* c) {
    std::lock_guard<std::mutex> lock(mu);
    std::erase(controls, c);
  }
  // Records the first failure and stops every rank's device waits.
  void fail(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu);
    if (failure.empty()) failure = why;
    failed.store(true);
    for (device::Control* c : controls) __atomic_store_n(&c->abort, 1u, __ATOMIC_RELEASE);
  }
  std::string why() {
    std::lock_guard<std::mutex> lock(mu);
    return failure;
  }
};

// The host backend hears of each host collective as every rank enters and leaves it:
// its deadlock check counts a rank in a collective as blocked, and its race check takes
// collectives as barrier edges.
class WatchedBootstrap final : public Bootstrap {
 public:
  explicit WatchedBootstrap(std::unique_ptr<Bootstrap> inner) : inner_(std::move(inner)) {}
  // From here on, collectives are edges of `ctx`'s job (once its heap exists).
  void watch(const device::Context* ctx) { ctx_ = ctx; }

  int rank() const override { return inner_->rank(); }
  int world() const override { return inner_->world(); }
  int local_rank() const override { return inner_->local_rank(); }
  bool single_process() const override { return inner_->single_process(); }
  const char* name() const override { return inner_->name(); }
  void barrier() override {
    Edge e(ctx_);
    inner_->barrier();
  }
  void allgather(const void* mine, void* all, std::size_t bytes) override {
    Edge e(ctx_);
    inner_->allgather(mine, all, bytes);
  }
  void broadcast(void* data, std::size_t bytes, int root) override {
    Edge e(ctx_);
    inner_->broadcast(data, bytes, root);
  }
  void teardown_barrier() override {
    Edge e(ctx_);
    inner_->teardown_barrier();
  }
  void abort(std::string_view why) override { inner_->abort(why); }

 private:
  struct Edge {
    const device::Context* ctx;
    explicit Edge(const device::Context* c) : ctx(c) {
      if (ctx) backend::active().host_collective(*ctx, true);
    }
    ~Edge() {
      if (ctx) backend::active().host_collective(*ctx, false);
    }
  };
  std::unique_ptr<Bootstrap> inner_;
  const device::Context* ctx_ = nullptr;
};

}  // namespace iris
