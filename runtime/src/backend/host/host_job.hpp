// What the host backend knows about a running job, so that its checks can see across
// ranks: which ranks are inside a launch, how many of their programs are running, which
// are in a host collective, and every wait that is blocked. A wait that can never be
// satisfied (every rank of the job is either in a host collective or inside a launch
// whose programs all wait on flags that do not satisfy them) is a deadlock, reported by
// DeadlockError naming each wait, instead of a hang. Device waits keep their GPU semantics otherwise: they give up after
// ctx.wait_timeout_ns or when the job aborts, recording what was awaited in
// ctx.control exactly as device code does.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "iris/device/context.hpp"
#include "iris/device/memory/signal.hpp"
#include "iris/error.hpp"

namespace iris::host {

// Every rank of a job is blocked: what() names each blocked wait (flag, value, rank,
// site).
class DeadlockError : public Error {
 public:
  using Error::Error;
};

// A flag a wait watches: its address (a local heap word), width and signedness.
struct Flag {
  const void* ptr = nullptr;
  int bytes = 8;        // 2 (a slot of 16-bit values), 4 or 8
  bool is_signed = false;
  const char* name = nullptr;  // the tensor's name for messages (may be null)
  long long index = 0;         // its element index in that tensor
};

// The rank calling it is inside a launch (a kernel of the host backend runs) for the
// object's lifetime, with `workers` threads that will run its programs: they count as
// running from here on, before their threads start, so that a rank is never taken for
// blocked while a worker is still starting.
class LaunchScope {
 public:
  LaunchScope(const device::Context& ctx, int workers);
  ~LaunchScope();
  LaunchScope(const LaunchScope&) = delete;
  LaunchScope& operator=(const LaunchScope&) = delete;

 private:
  const device::Context& ctx_;
};

// A worker of a launch (one of LaunchScope's `workers`) runs programs on the calling
// thread until none is left; destroying this says it finished. A rank whose workers
// have all finished or are blocked in waits can only be woken by a flag.
class WorkerScope {
 public:
  explicit WorkerScope(const device::Context& ctx) : ctx_(ctx) {}
  ~WorkerScope();
  WorkerScope(const WorkerScope&) = delete;
  WorkerScope& operator=(const WorkerScope&) = delete;

 private:
  const device::Context& ctx_;
};

// Rank ctx.rank enters (true) or leaves (false) a host collective: until it leaves, it
// cannot signal anything.
void in_collective(const device::Context& ctx, bool entering);

// Forgets every job's state: a job starts (iris::run), and no rank of an earlier one
// runs any more.
void forget_jobs();

// Waits until `flag <cmp> value` (acquire) on the calling program's thread and returns
// the value seen. Gives up as device code does (timeout, abort: returns the last value
// seen), returns early when `*stop` becomes true (the launch failed), and throws
// DeadlockError when the job can make no progress. `site` says where (kernel, file:line,
// statement), `block` is the program.
std::uint64_t wait(const device::Context& ctx, const Flag& flag, device::Cmp cmp, std::uint64_t value,
                   const device::WaitSite& site, int block, const std::atomic<bool>* stop = nullptr);

}  // namespace iris::host
