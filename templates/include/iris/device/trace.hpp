// Device events for IRIS_TRACE: kernels compiled by irisc record the start and end of
// each program and each RMA, signal and wait statement (with its .iris line) into a
// ring in device memory, stamped with %globaltimer; the host merges every rank's ring
// with its own spans into one Perfetto / Chrome trace. With tracing off (ctx.trace is
// null, the default) an event costs one test of a kernel parameter.
#pragma once

#include "arch.hpp"
#include "context.hpp"

namespace iris::device {

enum class TraceKind : u32 {
  program_begin,
  program_end,
  put,       // a store or put to another rank's heap (value: bytes, 0 when not known)
  get,       // a load or get from another rank's heap
  atomic,    // an atomic on a heap word
  signal,    // value: the value signalled
  wait_begin,
  wait_end,  // value: the value the wait saw
  barrier_begin,
  barrier_end,
};

struct TraceEvent {
  unsigned long long time_ns;  // %globaltimer
  unsigned kind;               // TraceKind
  unsigned kernel;             // trace_kernel_id(kernel name): which kernel
  int line;                    // the .iris line (0: none)
  int program;                 // blockIdx.x
  int peer;                    // the other rank (-1: none)
  int reserved;
  unsigned long long value;
};
static_assert(sizeof(TraceEvent) == 40, "TraceEvent layout must match host and device");

// A ring: events[next % capacity] is written next; capacity is a power of two (and a
// multiple of TraceCursor::kChunk), so the ring keeps the most recent `capacity` events
// (what a hang report wants). Slots never written hold zeros (time 0).
struct TraceBuffer {
  unsigned long long capacity;
  unsigned long long next;
  TraceEvent events[1];
};

// FNV-1a of a kernel's name: irisc bakes it into each event; the host maps it back
// through the names of the kernels it loaded.
IRIS_HOST_DEVICE constexpr unsigned trace_kernel_id(const char* name) {
  unsigned h = 2166136261u;
  for (; *name; ++name) h = (h ^ static_cast<unsigned char>(*name)) * 16777619u;
  return h;
}

}  // namespace iris::device

#if IRIS_GPU_COMPILER
namespace iris::device {

// Nanoseconds of a clock common to the device's multiprocessors.
IRIS_DEVICE IRIS_FORCEINLINE u64 globaltimer() {
#if IRIS_HIP_COMPILER
  // s_memrealtime counts at a constant 100 MHz on gfx90a and gfx942.
  return __builtin_amdgcn_s_memrealtime() * 10;
#else
  u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#endif
}

IRIS_DEVICE IRIS_FORCEINLINE void write_trace_event(TraceEvent& e, TraceKind kind, unsigned kernel, int line, int peer,
                                                    u64 value) {
  e.time_ns = globaltimer();
  e.kind = static_cast<unsigned>(kind);
  e.kernel = kernel;
  e.line = line;
  e.program = static_cast<int>(blockIdx.x);
  e.peer = peer;
  e.reserved = 0;
  e.value = value;
}

// One event, its slot taken with an atomic on the ring's counter (a round trip to L2).
IRIS_DEVICE IRIS_FORCEINLINE void trace_event(const Context& ctx, TraceKind kind, unsigned kernel, int line, int peer,
                                              u64 value) {
  TraceBuffer* t = ctx.trace;
  if (t == nullptr) return;
  const u64 i = atomicAdd(&t->next, 1ull);
  write_trace_event(t->events[i & (t->capacity - 1)], kind, kernel, line, peer, value);
}

// A thread's events in chunks of the ring it reserves kChunk at a time: after the
// first, an event is a handful of posted stores, with no round trip on the thread's
// path (what a latency-bound loop of puts, signals and waits needs). irisc kernels
// hold one per thread; the host ignores slots a chunk left unused.
struct TraceCursor {
  static constexpr u32 kChunk = 32;
  TraceEvent* chunk = nullptr;
  u32 used = kChunk;

  IRIS_DEVICE IRIS_FORCEINLINE void record(const Context& ctx, TraceKind kind, unsigned kernel, int line, int peer,
                                           u64 value) {
    TraceBuffer* t = ctx.trace;
    if (t == nullptr) return;
    if (used == kChunk) {
      const u64 first = atomicAdd(&t->next, static_cast<u64>(kChunk));
      chunk = &t->events[first & (t->capacity - 1)];
      used = 0;
    }
    write_trace_event(chunk[used++], kind, kernel, line, peer, value);
  }
};

}  // namespace iris::device
#endif  // IRIS_GPU_COMPILER
