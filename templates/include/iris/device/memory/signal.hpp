// Point-to-point synchronization through flag words in the symmetric heap:
// a producer signal()s a flag on the consumer's rank after its puts, and the
// consumer wait_until()s on its local copy. Release on the signal plus
// acquire on the wait make the producer's earlier puts visible to the
// consumer once the wait returns.
#pragma once

#include "../arch.hpp"
#include "../context.hpp"
#include "model.hpp"
#include "../trace.hpp"

namespace iris::device {

enum class SignalOp { set, add };

// Where a wait is, for the report of a wait that gives up: a short text (irisc writes
// "kernel 'k' at file.iris:12:5: <statement>") and the rank expected to set the flag.
struct WaitSite {
  const char* text = nullptr;
  int peer = -1;
  int kind = 0;  // WaitFault::kind
};

namespace detail {

// Whether a wait on `seen` is satisfied (device waits and the host backend's).
template <class T>
IRIS_HOST_DEVICE IRIS_FORCEINLINE bool compare(T seen, Cmp cmp, T value) {
  switch (cmp) {
    case Cmp::eq: return seen == value;
    case Cmp::ne: return seen != value;
    case Cmp::gt: return seen > value;
    case Cmp::ge: return seen >= value;
    case Cmp::lt: return seen < value;
    case Cmp::le: return seen <= value;
  }
  return false;
}

// The report of a wait that gave up, for the host to put in words (device waits and
// the host backend's fill it alike).
template <class T>
IRIS_HOST_DEVICE inline void fill_wait_fault(WaitFault& f, const Context& ctx, const T* flag, Cmp cmp, T value,
                                             T seen, unsigned long long waited_ns, const WaitSite& site, int block,
                                             int thread) {
  f.flag_offset =
      static_cast<unsigned long long>(reinterpret_cast<const char*>(flag) - ctx.heap_bases[ctx.rank]);
  f.expected = static_cast<long long>(value);
  f.seen = static_cast<long long>(seen);
  f.waited_ns = waited_ns;
  f.cmp = static_cast<int>(cmp);
  f.peer = site.peer;
  f.block = block;
  f.thread = thread;
  f.width = static_cast<int>(sizeof(T));
  f.kind = site.kind;
  int n = 0;
  if (site.text) {
    for (; n + 1 < static_cast<int>(sizeof(f.site)) && site.text[n]; ++n) f.site[n] = site.text[n];
  }
  f.site[n] = 0;
}

}  // namespace detail
}  // namespace iris::device

#if IRIS_GPU_COMPILER
namespace iris::device {
namespace detail {

// The first polls spin back to back: a flag that arrives within them is
// seen one load latency later, which is what ping-pong latency measures.
// Only a wait that has already lasted milliseconds starts to sleep, which
// frees issue slots and memory bandwidth for co-resident work; the sleep is
// capped so that the wake-up adds at most about a microsecond.
inline constexpr u32 kTightPolls = 1u << 12;
inline constexpr u32 kFirstSleepNs = 32;
inline constexpr u32 kMaxSleepNs = 1024;

}  // namespace detail

// Notifies rank `to`: set stores value into its copy of *flag, add adds value
// to it. With the default release ordering, every write this thread made
// before (and, through __syncthreads, every write its block made before) is
// visible to whoever observes the flag with acquire.
template <Order O = Order::release, Scope S = Scope::system, class T>
IRIS_DEVICE IRIS_FORCEINLINE void signal(const Context& ctx, T* flag, T value, int to,
                                         SignalOp op = SignalOp::set) {
  static_assert(O == Order::relaxed || O == Order::release,
                "signal cannot have acquire ordering (use relaxed or release)");
  static_assert(detail::is_int_word_v<T>, "signal flags must be u32, i32, u64 or i64");
  // Equal to O whenever O is valid; keeps an invalid O from being reported
  // a second time by atomic_store.
  constexpr Order kOrder = O == Order::relaxed ? Order::relaxed : Order::release;
  using W = detail::int_word_t<T>;
  W* remote = reinterpret_cast<W*>(translate(ctx, flag, to));
  if (op == SignalOp::set) {
    atomic_store<kOrder, S>(remote, static_cast<W>(value));
  } else {
    detail::red_add<kOrder, S>(remote, static_cast<W>(value));
  }
}

// Atomic add that returns nothing (PTX `red`) on a pointer already translated to the
// rank's memory (`q`, from translate): *q += v. And for two neighbouring elements, q[0]
// += v0, q[1] += v1: one vector reduction for f32 where q is 8-byte aligned (`pair`),
// two otherwise. The tile reductions of `atomic_add` on 2-D tiles (the GEMM epilogue's
// among them).
template <Order O = Order::relaxed, Scope S = Scope::system, class T>
IRIS_DEVICE IRIS_FORCEINLINE void red_add_at(T* q, T v) {
  static_assert(O == Order::relaxed || O == Order::release,
                "red_add cannot have acquire ordering (nothing is read back; use relaxed or release)");
  constexpr Order kOrder = O == Order::relaxed ? Order::relaxed : Order::release;
  if constexpr (detail::is_f32_v<T>) {
    detail::red_add<kOrder, S>(q, v);
  } else {
    static_assert(detail::is_int_word_v<T>, "red_add works on u32, i32, u64, i64 or f32");
    using W = detail::int_word_t<T>;
    detail::red_add<kOrder, S>(reinterpret_cast<W*>(q), static_cast<W>(v));
  }
}

// Atomic add that returns nothing (PTX `red`): the SM does not wait for the
// remote round trip, so many in flight reach far higher throughput to a peer
// than atomic_add, which must bring the old value back. Use it for counters
// and histograms whose old values nobody reads.
template <Order O = Order::relaxed, Scope S = Scope::system, class T>
IRIS_DEVICE IRIS_FORCEINLINE void red_add(const Context& ctx, T* ptr, T value, int to) {
  red_add_at<O, S>(translate(ctx, ptr, to), value);
}

template <Order O = Order::relaxed, Scope S = Scope::system, class T>
IRIS_DEVICE IRIS_FORCEINLINE void red_add_pair(T* q, T v0, T v1, bool pair) {
  if constexpr (detail::is_f32_v<T>) {
    if (pair) {
      static_assert(O == Order::relaxed || O == Order::release,
                    "red_add cannot have acquire ordering (nothing is read back; use relaxed or release)");
      detail::red_add_v2<O == Order::relaxed ? Order::relaxed : Order::release, S>(q, v0, v1);
      return;
    }
  }
  red_add_at<O, S>(q, v0);
  red_add_at<O, S>(q + 1, v1);
}

namespace detail {

// Polls between looks at the clock and the abort word: the abort word lives in host
// memory, a PCIe round trip away, so a wait pays for it only once it has lasted
// hundreds of polls, and a wait satisfied at once never does.
inline constexpr u32 kPollsPerCheck = 256;

// Records a wait that stopped in the control block for the host: fault 2, a wait that
// gave up (then every other wait of this rank stops at its next check, and the host
// reports this one), or fault 3, a wait the abort ended (so the host can say what this
// rank was waiting for when a peer failed). The first wait of the rank to stop wins.
template <class T>
IRIS_DEVICE __noinline__ void record_stopped(const Context& ctx, const T* flag, Cmp cmp, T value, T seen, u64 waited,
                                             const WaitSite& site, unsigned fault) {
  Control* c = ctx.control;
  if (atomicCAS(&c->fault, 0u, 1u) == 0u) {
    fill_wait_fault(c->wait, ctx, flag, cmp, value, seen, waited, site, static_cast<int>(blockIdx.x),
                    static_cast<int>(threadIdx.x));
    __threadfence_system();
    atomic_store<Order::release, Scope::system>(&c->fault, fault);
  }
  if (fault == 2u) atomic_store<Order::relaxed, Scope::system>(&c->abort, 1u);
}

// A waiting loop's look at the abort word and the clock, every kPollsPerCheck polls
// (ctx.control set): true when the wait gives up, as wait_until(ctx, ...) says, after
// recording what it waited for (`start`: when the clock was first read, 0 before).
template <class T>
IRIS_DEVICE IRIS_FORCEINLINE bool gives_up(const Context& ctx, u32 polls, u64& start, const T* flag, Cmp cmp, T value,
                                           T seen, const WaitSite& site) {
  if (polls % kPollsPerCheck != 0 || !ctx.control) return false;
  const u64 now = globaltimer();
  if (atomic_load<Order::relaxed, Scope::system>(&ctx.control->abort)) {
    record_stopped(ctx, flag, cmp, value, seen, start ? now - start : 0, site, 3u);
    return true;
  }
  if (start == 0) {
    start = now;
  } else if (ctx.wait_timeout_ns && now - start > ctx.wait_timeout_ns) {
    record_stopped(ctx, flag, cmp, value, seen, now - start, site, 2u);
    return true;
  }
  return false;
}

// The wait loop. With kWatch it gives up as gives_up says; without, it spins until the
// flag is satisfied.
template <Order O, Scope S, bool kWatch, class T>
IRIS_DEVICE IRIS_FORCEINLINE T spin_until(const Context* ctx, const T* local_flag, Cmp cmp, T value,
                                          const WaitSite& site) {
  u32 polls = 0;
  u32 sleep_ns = kFirstSleepNs;
  u64 start = 0;
  for (;;) {
    const T seen = atomic_load<O, S>(local_flag);
    if (compare(seen, cmp, value)) return seen;
    ++polls;
    if constexpr (kWatch) {
      if (gives_up(*ctx, polls, start, local_flag, cmp, value, seen, site)) return seen;
    }
    if (polls >= kTightPolls) {
      nanosleep(sleep_ns);
      sleep_ns = sleep_ns < kMaxSleepNs ? sleep_ns * 2 : sleep_ns;
    }
  }
}

}  // namespace detail

// Spins until `*local_flag <cmp> value` holds and returns the value that
// satisfied it. With the default acquire ordering, everything the signalling
// rank wrote before its release signal is visible once this returns.
//
// The wait gives up after ctx.wait_timeout_ns (Options::wait_timeout) and when the
// job aborts (a rank failed): it then returns the value it last saw, having recorded
// what it waited for in ctx.control for the host, which raises an iris::Error at the
// rank's next synchronize. Results of a kernel whose wait gave up are not meaningful.
template <Order O = Order::acquire, Scope S = Scope::system, class T>
IRIS_DEVICE T wait_until(const Context& ctx, const T* local_flag, Cmp cmp, T value, WaitSite site = {}) {
  static_assert(O == Order::relaxed || O == Order::acquire,
                "wait cannot have release ordering (use relaxed or acquire)");
  static_assert(detail::is_int_word_v<T>, "wait_until flags must be u32, i32, u64 or i64");
  // Equal to O whenever O is valid; keeps an invalid O from being reported
  // a second time by atomic_load.
  constexpr Order kOrder = O == Order::relaxed ? Order::relaxed : Order::acquire;
  return detail::spin_until<kOrder, S, true>(&ctx, local_flag, cmp, value, site);
}

// The same wait without a context: it can neither time out nor see an abort, so a
// flag nobody sets hangs the kernel. Prefer the form above.
template <Order O = Order::acquire, Scope S = Scope::system, class T>
IRIS_DEVICE T wait_until(const T* local_flag, Cmp cmp, T value) {
  static_assert(O == Order::relaxed || O == Order::acquire,
                "wait cannot have release ordering (use relaxed or acquire)");
  static_assert(detail::is_int_word_v<T>, "wait_until flags must be u32, i32, u64 or i64");
  constexpr Order kOrder = O == Order::relaxed ? Order::relaxed : Order::acquire;
  return detail::spin_until<kOrder, S, false>(nullptr, local_flag, cmp, value, WaitSite{});
}

}  // namespace iris::device
#endif  // IRIS_GPU_COMPILER
