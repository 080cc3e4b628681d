// The per-launch view of the symmetric heap that the host hands to kernels,
// the memory-order vocabulary shared by every device operation, and pointer
// translation between ranks. Host C++ includes this file without CUDA to fill
// in the Context it passes to kernels.
#pragma once

#include "arch.hpp"

namespace iris::device {

inline constexpr int kMaxRanks = 8;

// What a device wait that gave up leaves for its host: enough to say which wait, on
// which flag, expecting what, and what it saw.
struct WaitFault {
  unsigned long long flag_offset;  // the flag's byte offset in this rank's heap
  long long expected;              // the value the wait compared against
  long long seen;                  // the flag's value when the wait gave up
  unsigned long long waited_ns;
  int cmp;                         // Cmp
  int peer;                        // the rank expected to set the flag (-1: not known)
  int block, thread;               // who waited
  int width;                       // flag bytes (4 or 8)
  int kind;                        // 0: a wait statement or wait_until; 1: the device barrier
  char site[96];                   // where, NUL-terminated (irisc: kernel, file:line, statement)
};

// The words a rank's kernels and its host share while kernels run: in host memory the
// GPU maps, so the host sets `abort` while a kernel spins (no GPU work needed) and reads
// `fault` without a copy.
struct Control {
  unsigned abort;  // nonzero: device waits stop waiting (a rank failed, or a wait gave up)
  unsigned fault;  // 0: none; 1: being written; 2: `wait` describes a wait that gave up;
                   // 3: `wait` describes a wait that the abort ended (what a peer's failure found);
                   // 4: `wait` describes a wait the host backend found deadlocked (the launch
                   // that ran it threw; nothing gave up on the device)
  WaitFault wait;
};

struct TraceBuffer;  // iris/device/trace.hpp

// Passed by value as the first kernel parameter, so it lives in the constant
// bank. Declare that parameter `const __grid_constant__ Context ctx`: then
// translate() is one indexed constant load (LDC) and two integer ops. A plain
// `Context ctx` works too, but indexing heap_bases with a runtime rank makes
// nvcc copy the whole struct into each thread's local memory first.
struct Context {
  int rank;                      // this rank
  int world;                     // number of ranks
  char* heap_bases[kMaxRanks];   // every rank's heap base, mapped in this process
  // How long a device wait may last before it gives up (0: forever); see Control.
  unsigned long long wait_timeout_ns;
  Control* control;              // nullptr: waits neither time out nor abort
  TraceBuffer* trace;            // nullptr: tracing is off
};

// The host fills Context with a host compiler and the kernel reads it with a
// device compiler, so both must agree on the layout.
static_assert(sizeof(Context) == 8 + 8 * kMaxRanks + 24,
              "Context layout must be identical in host and device compilers");
static_assert(alignof(Context) == 8, "Context must be 8-byte aligned in every compiler");
static_assert(sizeof(WaitFault) == 152 && sizeof(Control) == 160, "Control layout must match host and device");

// Mirrors the PTX memory model's .sem qualifiers.
enum class Order { relaxed, acquire, release, acq_rel };

// Mirrors the PTX .cta / .gpu / .sys scopes. Peer GPUs are outside the
// device scope, so anything another rank must observe needs Scope::system.
enum class Scope { block, device, system };

enum class Cmp { eq, ne, gt, ge, lt, le };

// Maps a pointer into this rank's heap to the same offset in to_rank's heap.
// The heaps are symmetric (same layout on every rank), so the offset alone
// identifies the object. Pure arithmetic, hence usable on the host as well;
// the pointer must lie inside this rank's heap, which is not checked because
// the heap size is not part of Context. Works for const T as well.
template <class T>
IRIS_HOST_DEVICE IRIS_FORCEINLINE T* translate(const Context& ctx, T* local_ptr, int to_rank) {
  const char* local = reinterpret_cast<const char*>(local_ptr);
  const auto offset = local - ctx.heap_bases[ctx.rank];
  T* remote = reinterpret_cast<T*>(ctx.heap_bases[to_rank] + offset);
#if IRIS_DEVICE_COMPILE && IRIS_CUDA_COMPILER
  // Heaps are global memory (device or mapped host allocations). Saying so
  // lets the compiler emit LDG/STG rather than generic LD/ST when it cannot
  // see where the bases came from (e.g. a Context copied to local memory).
  __builtin_assume(__isGlobal(remote));
#elif IRIS_DEVICE_COMPILE && IRIS_HIP_COMPILER
  // The same for AMDGPU: a generic pointer made from a global one, which LLVM's
  // address-space inference follows back, so every access through it (and through
  // pointers computed from it) is a global_* instruction rather than a flat_* one.
  remote = (T*)amdgcn::global(remote);
#endif
  return remote;
}

}  // namespace iris::device
