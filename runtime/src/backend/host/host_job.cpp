// Jobs, launches and blocked waits on the host backend (see host_job.hpp).
#include "backend/host/host_job.hpp"

#include <algorithm>
#include <chrono>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "backend/host/job_table.hpp"

namespace iris::host {
namespace {

using u64 = std::uint64_t;
using device::Cmp;

struct BlockedWait {
  int rank = 0;
  int block = 0;
  Flag flag;
  Cmp cmp = Cmp::eq;
  u64 value = 0;
  const char* site = nullptr;
  int kind = 0;   // WaitSite::kind: 1 is the device barrier (its flag counts the peer's barriers)
  int peer = -1;
};

// One job: its ranks are threads of this process sharing one set of heaps, so rank 0's
// heap base names it.
struct Job {
  std::mutex mu;
  int world = 1;
  int launches[device::kMaxRanks] = {};
  int running[device::kMaxRanks] = {};  // workers not blocked in a wait
  bool collective[device::kMaxRanks] = {};  // in a host collective
  std::uint64_t entered[device::kMaxRanks] = {};  // host collectives each rank has entered
  std::list<BlockedWait*> waits;
  std::string deadlock;
  std::atomic<bool> dead{false};
};

Job& job_of(const device::Context& ctx) { return JobTable<Job>::of(ctx); }

u64 load(const Flag& f) {
  if (f.bytes == 8) return std::atomic_ref<u64>(*static_cast<u64*>(const_cast<void*>(f.ptr))).load(std::memory_order_acquire);
  if (f.bytes == 2) {
    return std::atomic_ref<std::uint16_t>(*static_cast<std::uint16_t*>(const_cast<void*>(f.ptr))).load(std::memory_order_acquire);
  }
  return std::atomic_ref<std::uint32_t>(*static_cast<std::uint32_t*>(const_cast<void*>(f.ptr)))
      .load(std::memory_order_acquire);
}

// The flag's value as the signed or unsigned number of its width.
long long as_number(const Flag& f, u64 bits) {
  if (f.bytes == 4) return f.is_signed ? static_cast<std::int32_t>(bits) : static_cast<long long>(bits & 0xffffffffu);
  if (f.bytes == 2) return static_cast<long long>(bits & 0xffffu);
  return static_cast<long long>(bits);
}

bool satisfied(const Flag& f, Cmp cmp, u64 seen, u64 value) {
  if (f.is_signed) return device::detail::compare(as_number(f, seen), cmp, as_number(f, value));
  if (f.bytes == 4) return device::detail::compare(static_cast<std::uint32_t>(seen), cmp, static_cast<std::uint32_t>(value));
  if (f.bytes == 2) return device::detail::compare(static_cast<std::uint32_t>(seen & 0xffffu), cmp, static_cast<std::uint32_t>(value & 0xffffu));
  return device::detail::compare(seen, cmp, value);
}

const char* cmp_text(Cmp c) {
  switch (c) {
    case Cmp::eq: return "==";
    case Cmp::ne: return "!=";
    case Cmp::gt: return ">";
    case Cmp::ge: return ">=";
    case Cmp::lt: return "<";
    case Cmp::le: return "<=";
  }
  return "?";
}

std::string number_text(const Flag& f, u64 bits) {
  if (f.is_signed) return std::to_string(as_number(f, bits));
  return std::to_string(f.bytes == 4 ? bits & 0xffffffffu : f.bytes == 2 ? bits & 0xffffu : bits);
}

// Under job.mu: whether no rank can make progress. A rank is blocked when it is in a
// host collective (which cannot complete while another rank waits on the device), or
// inside a launch with none of its workers running and one of them waiting (a rank
// whose workers all finished is leaving its launch, back to host code that may signal).
// Some rank must be waiting on the device, and no registered wait satisfied.
bool all_blocked(Job& job) {
  int blocked_waits[device::kMaxRanks] = {};
  for (const BlockedWait* w : job.waits) ++blocked_waits[w->rank];
  bool any_wait = false;
  // A rank in a collective is blocked while some rank has not entered that collective
  // yet (once all have, it is finishing, however late its thread wakes).
  std::uint64_t fewest = ~std::uint64_t{0};
  for (int r = 0; r < job.world; ++r) fewest = std::min(fewest, job.entered[r]);
  for (int r = 0; r < job.world; ++r) {
    const bool waiting = job.launches[r] > 0 && job.running[r] == 0 && blocked_waits[r] > 0;
    const bool held = job.collective[r] && job.entered[r] > fewest;
    if (!waiting && !held) return false;
    any_wait = any_wait || waiting;
  }
  if (!any_wait) return false;
  for (const BlockedWait* w : job.waits) {
    if (satisfied(w->flag, w->cmp, load(w->flag), w->value)) return false;
  }
  return true;
}

std::string describe_deadlock(Job& job) {
  std::string s =
      "deadlock: every rank is blocked, in a device wait that nothing left running can satisfy or in a host "
      "collective that needs the waiting ranks";
  for (int r = 0; r < job.world; ++r) {
    if (job.collective[r]) {
      s += "\n  rank " + std::to_string(r) + " is in a host collective (a barrier, an all_gather, a broadcast or an "
           "allocation), which needs the waiting ranks";
      continue;
    }
    for (const BlockedWait* w : job.waits) {
      if (w->rank != r) continue;
      if (w->kind == 1) {  // the device barrier, in its own words (as on a GPU)
        s += "\n  rank " + std::to_string(r) + ": the device barrier: this rank is at device barrier #" +
             number_text(w->flag, w->value) + ", but rank " + std::to_string(w->peer) + " has reached only #" +
             number_text(w->flag, load(w->flag)) + ". Every rank must call device_barrier() the same number of times";
        continue;
      }
      const std::string flag = w->flag.name ? std::string(w->flag.name) + "[" + std::to_string(w->flag.index) + "]"
                                            : std::string("the flag");
      s += "\n  rank " + std::to_string(r) + ", program " + std::to_string(w->block) + ": " +
           (w->site ? w->site : "a wait") + "\n    waits for " + flag + " " + cmp_text(w->cmp) + " " +
           number_text(w->flag, w->value) + ", but it is " + number_text(w->flag, load(w->flag));
    }
  }
  s += "\nNo rank signals these flags any more: check that every wait has a matching signal (count, value and "
       "target rank) on some rank.";
  return s;
}

// Records a wait in the rank's control block (fault 2: it gave up; 3: the abort ended
// it; 4: it is part of a deadlock), unless another wait of this rank got there first, as
// device code records its own: the host then says what the wait was part of (the
// libraries' Context::explain_waits) whichever way it ended.
void record_wait(const device::Context& ctx, const Flag& flag, Cmp cmp, u64 value, u64 seen, u64 waited,
                 const device::WaitSite& site, int block, unsigned fault) {
  device::Control* c = ctx.control;
  if (!c) return;
  unsigned expected = 0;
  if (!std::atomic_ref<unsigned>(c->fault).compare_exchange_strong(expected, 1u)) return;
  if (flag.bytes == 8) {
    device::detail::fill_wait_fault(c->wait, ctx, static_cast<const u64*>(flag.ptr), cmp, value, seen, waited, site,
                                    block, 0);
  } else {
    device::detail::fill_wait_fault(c->wait, ctx, static_cast<const std::uint32_t*>(flag.ptr), cmp,
                                    static_cast<std::uint32_t>(value), static_cast<std::uint32_t>(seen), waited, site,
                                    block, 0);
  }
  std::atomic_ref<unsigned>(c->fault).store(fault, std::memory_order_release);
}

}  // namespace

LaunchScope::LaunchScope(const device::Context& ctx, int workers) : ctx_(ctx) {
  Job& job = job_of(ctx);
  std::lock_guard<std::mutex> lock(job.mu);
  bool idle = true;
  for (int r = 0; r < device::kMaxRanks; ++r) idle = idle && job.launches[r] == 0 && !job.collective[r];
  if (idle) {  // a new round: a deadlock reported before is over
    job.dead.store(false);
    job.deadlock.clear();
  }
  job.world = ctx.world;
  ++job.launches[ctx.rank];
  job.running[ctx.rank] += workers;
}

LaunchScope::~LaunchScope() {
  Job& job = job_of(ctx_);
  std::lock_guard<std::mutex> lock(job.mu);
  --job.launches[ctx_.rank];
}

void in_collective(const device::Context& ctx, bool entering) {
  Job& job = job_of(ctx);
  std::lock_guard<std::mutex> lock(job.mu);
  job.world = ctx.world;
  job.collective[ctx.rank] = entering;
  if (entering) ++job.entered[ctx.rank];
}

void forget_jobs() {
  JobTable<Job>::forget();
}

WorkerScope::~WorkerScope() {
  Job& job = job_of(ctx_);
  std::lock_guard<std::mutex> lock(job.mu);
  --job.running[ctx_.rank];
}

u64 wait(const device::Context& ctx, const Flag& flag, Cmp cmp, u64 value, const device::WaitSite& site, int block,
         const std::atomic<bool>* stop) {
  u64 seen = load(flag);
  for (int spin = 0; spin < 64; ++spin) {
    if (satisfied(flag, cmp, seen, value)) return seen;
    std::this_thread::yield();
    seen = load(flag);
  }
  if (satisfied(flag, cmp, seen, value)) return seen;

  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  Job& job = job_of(ctx);
  BlockedWait me{ctx.rank, block, flag, cmp, value, site.text, site.kind, site.peer};
  {
    std::lock_guard<std::mutex> lock(job.mu);
    --job.running[ctx.rank];
    job.waits.push_back(&me);
  }
  struct Unblock {
    Job& job;
    BlockedWait* me;
    int rank;
    ~Unblock() {
      std::lock_guard<std::mutex> lock(job.mu);
      job.waits.remove(me);
      ++job.running[rank];
    }
  } unblock{job, &me, ctx.rank};

  auto last_check = start;
  auto sleep = std::chrono::microseconds(5);
  for (;;) {
    seen = load(flag);
    if (satisfied(flag, cmp, seen, value)) return seen;
    if (stop && stop->load(std::memory_order_relaxed)) return seen;
    const auto now = clock::now();
    const u64 waited = static_cast<u64>(std::chrono::duration_cast<std::chrono::nanoseconds>(now - start).count());
    const auto record = [&](unsigned fault) { record_wait(ctx, flag, cmp, value, seen, waited, site, block, fault); };
    // A deadlock is this wait's end too: recorded (fault 4), so that the launch's error
    // says what the wait was part of, as a timeout's does.
    const auto deadlock = [&] {
      record(4u);
      throw DeadlockError(job.deadlock);
    };
    if (job.dead.load()) {
      std::lock_guard<std::mutex> lock(job.mu);
      deadlock();
    }
    if (ctx.control) {
      if (std::atomic_ref<unsigned>(ctx.control->abort).load(std::memory_order_relaxed)) {
        record(3u);
        return seen;
      }
      if (ctx.wait_timeout_ns && waited > ctx.wait_timeout_ns) {
        record(2u);
        std::atomic_ref<unsigned>(ctx.control->abort).store(1u, std::memory_order_relaxed);
        return seen;
      }
    }
    if (now - last_check > std::chrono::milliseconds(2)) {
      last_check = now;
      std::lock_guard<std::mutex> lock(job.mu);
      if (!job.dead.load() && all_blocked(job)) {
        job.deadlock = describe_deadlock(job);
        job.dead.store(true);
      }
      if (job.dead.load()) deadlock();
    }
    std::this_thread::sleep_for(sleep);
    if (sleep < std::chrono::microseconds(200)) sleep *= 2;
  }
}

}  // namespace iris::host
