// Device code of the GPU test suite: every RMA op, every atomic in every memory order
// and scope, signals/waits with every comparison, and block bulk copies.
#include "iris/device.hpp"

using namespace iris::device;
using u64 = unsigned long long;

#define GRID_LOOP(i, n) \
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < (n); i += (u64)gridDim.x * blockDim.x)

// ---- scalar and vector load/store ---------------------------------------------------------
template <class T>
__device__ void load_all(const Context& ctx, T* out, const T* src, u64 n) {
  // out is [world][n]: row r holds rank r's src.
  GRID_LOOP(i, n) {
    for (int r = 0; r < ctx.world; ++r) out[r * n + i] = load(ctx, src + i, r);
  }
}
template <class T>
__device__ void store_all(const Context& ctx, T* dst, const T* src, u64 n) {
  // dst is [world][n] on every rank: this rank fills row ctx.rank everywhere.
  GRID_LOOP(i, n) {
    for (int r = 0; r < ctx.world; ++r) store(ctx, dst + ctx.rank * n + i, src[i], r);
  }
}
#define DEFINE_LS(name, T)                                                                               \
  extern "C" __global__ void load_all_##name(const __grid_constant__ Context ctx, T* out, const T* src, u64 n) { load_all(ctx, out, src, n); } \
  extern "C" __global__ void store_all_##name(const __grid_constant__ Context ctx, T* dst, const T* src, u64 n) { store_all(ctx, dst, src, n); }
DEFINE_LS(u8, unsigned char)
DEFINE_LS(u16, unsigned short)
DEFINE_LS(u32, unsigned)
DEFINE_LS(u64, u64)
DEFINE_LS(f32, float)
DEFINE_LS(v16, uint4)

// ---- thread-level get/put/copy: one thread moves a run of elements ----------------------------
// Thread t of block 0 handles the elements [t*chunk, (t+1)*chunk).
extern "C" __global__ void get_put_copy(const __grid_constant__ Context ctx, int mode, unsigned* dst, const unsigned* src, u64 n, int from,
                                        int to) {
  const u64 chunk = (n + blockDim.x - 1) / blockDim.x;
  const u64 lo = threadIdx.x * chunk;
  if (lo >= n) return;
  const u64 len = lo + chunk > n ? n - lo : chunk;
  if (mode == 0) get(ctx, dst + lo, src + lo, len, from);
  if (mode == 1) put(ctx, dst + lo, src + lo, len, to);
  if (mode == 2) copy(ctx, dst + lo, src + lo, len, from, to);
}

// ---- block bulk copies at arbitrary byte offsets/lengths ---------------------------------------
// Each block moves its slice of `bytes` (slices are 16-byte multiples except the last).
extern "C" __global__ void block_ops(const __grid_constant__ Context ctx, int mode, char* dst, const char* src, u64 bytes, int from, int to) {
  const u64 per = ((bytes + gridDim.x - 1) / gridDim.x + 15) / 16 * 16;
  const u64 lo = blockIdx.x * per;
  if (lo >= bytes) return;
  const u64 len = lo + per > bytes ? bytes - lo : per;
  if (mode == 0) block_get(ctx, dst + lo, src + lo, len, from);
  if (mode == 1) block_put(ctx, dst + lo, src + lo, len, to);
  if (mode == 2) block_copy(ctx, dst + lo, src + lo, len, from, to);
}

// ---- atomics -------------------------------------------------------------------------------------
// op: 0 add, 1 sub, 2 and, 3 or, 4 xor, 5 min, 6 max, 7 xchg, 8 cas (increment loop).
// Participant p = global thread id (plus rank * threads when ranks share a target) applies
// its operand v(p) to target[0] on rank `to` (-1: every rank, starting at the next).
template <Order O, Scope S, class T>
__device__ T apply_op(const Context& ctx, int op, T* p, T v, int to) {
  switch (op) {
    case 0: return atomic_add<O, S>(ctx, p, v, to);
    case 1: return atomic_sub<O, S>(ctx, p, v, to);
    case 2: return atomic_and<O, S>(ctx, p, v, to);
    case 3: return atomic_or<O, S>(ctx, p, v, to);
    case 4: return atomic_xor<O, S>(ctx, p, v, to);
    case 5: return atomic_min<O, S>(ctx, p, v, to);
    case 6: return atomic_max<O, S>(ctx, p, v, to);
    case 7: return atomic_xchg<O, S>(ctx, p, v, to);
    default: {
      T seen = atomic_load<Order::relaxed, S>(translate(ctx, p, to));
      for (;;) {
        T old = atomic_cas<O, S>(ctx, p, seen, (T)(seen + (T)1), to);
        if (old == seen) return old;
        seen = old;
      }
    }
  }
}

template <class T> __device__ T operand(int op, u64 participant) {
  if (op == 2) return (T) ~((T)1 << (participant % (sizeof(T) * 8 - 1)));  // clear one bit
  if (op == 3 || op == 4) return (T)((T)1 << (participant % (sizeof(T) * 8 - 1)));
  return (T)(participant + 1);
}

template <Order O, Scope S, class T>
__device__ void atomic_test(const Context& ctx, int op, T* target, T* olds, int to) {
  const u64 tid = blockIdx.x * (u64)blockDim.x + threadIdx.x;
  const u64 participant = tid * ctx.world + ctx.rank;
  olds[tid] = apply_op<O, S>(ctx, op, target, operand<T>(op, participant), to < 0 ? ctx.rank : to);
}

// Floats: add/sub/xchg/cas only; operands are small integers so sums are exact.
template <Order O, Scope S>
__device__ void atomic_test_f(const Context& ctx, int op, float* target, float* olds, int to) {
  const u64 tid = blockIdx.x * (u64)blockDim.x + threadIdx.x;
  const float v = (float)(tid * ctx.world + ctx.rank + 1);
  const int r = to < 0 ? ctx.rank : to;
  float old = 0;
  if (op == 0) old = atomic_add<O, S>(ctx, target, v, r);
  if (op == 1) old = atomic_sub<O, S>(ctx, target, v, r);
  if (op == 7) old = atomic_xchg<O, S>(ctx, target, v, r);
  if (op == 8) {
    float seen = load(ctx, target, r);  // a stale first guess only costs a retry
    for (;;) {
      float prev = atomic_cas<O, S>(ctx, target, seen, seen + 1.0f, r);
      if (prev == seen) break;
      seen = prev;
    }
    old = seen;
  }
  olds[tid] = old;
}

#define ORDERS_SCOPES(X, T, name)                                                                        \
  X(T, name, relaxed, block) X(T, name, relaxed, device) X(T, name, relaxed, system)                      \
  X(T, name, acquire, block) X(T, name, acquire, device) X(T, name, acquire, system)                      \
  X(T, name, release, block) X(T, name, release, device) X(T, name, release, system)                      \
  X(T, name, acq_rel, block) X(T, name, acq_rel, device) X(T, name, acq_rel, system)

#define DEFINE_ATOMIC(T, name, ord, scp)                                                                  \
  extern "C" __global__ void atomic_##name##_##ord##_##scp(const __grid_constant__ Context ctx, int op, T* target, T* olds, int to) { \
    atomic_test<Order::ord, Scope::scp>(ctx, op, target, olds, to);                                      \
  }
ORDERS_SCOPES(DEFINE_ATOMIC, unsigned, u32)
ORDERS_SCOPES(DEFINE_ATOMIC, int, i32)
ORDERS_SCOPES(DEFINE_ATOMIC, u64, u64)
ORDERS_SCOPES(DEFINE_ATOMIC, long long, i64)

#define DEFINE_ATOMIC_F(T, name, ord, scp)                                                                \
  extern "C" __global__ void atomic_##name##_##ord##_##scp(const __grid_constant__ Context ctx, int op, T* target, T* olds, int to) { \
    atomic_test_f<Order::ord, Scope::scp>(ctx, op, target, olds, to);                                    \
  }
ORDERS_SCOPES(DEFINE_ATOMIC_F, float, f32)

// ---- signals and waits ---------------------------------------------------------------------------
// Message passing in a ring, `rounds` times: write `n` words into the next rank's inbox,
// make them visible, signal; the receiver waits, checks every word, acknowledges.
// variant: 0 signal set (release) / wait acquire; 1 relaxed signal after fence / relaxed
// wait then fence; 2 SignalOp::add; 3 u32 flags with Cmp::eq.
extern "C" __global__ void ring_messages(const __grid_constant__ Context ctx, int variant, unsigned* inbox, u64 n, u64* ready, u64* ack,
                                         unsigned* ready32, unsigned* ack32, unsigned rounds, unsigned* errors) {
  const int next = (ctx.rank + 1) % ctx.world, prev = (ctx.rank + ctx.world - 1) % ctx.world;
  if (blockIdx.x == 0) {
    for (unsigned k = 1; k <= rounds; ++k) {
      for (u64 i = threadIdx.x; i < n; i += blockDim.x) store(ctx, inbox + i, k * 131u + (unsigned)i + ctx.rank, next);
      __syncthreads();
      if (threadIdx.x == 0) {
        if (variant == 0) {
          fence<Scope::system>();
          signal(ctx, ready, (u64)k, next);
          wait_until(ctx, ack, Cmp::ge, (u64)k);
        } else if (variant == 1) {
          fence<Scope::system>();
          signal<Order::relaxed>(ctx, ready, (u64)k, next);
          wait_until<Order::relaxed>(ctx, ack, Cmp::ge, (u64)k);
          fence<Scope::system>();
        } else if (variant == 2) {
          fence<Scope::system>();
          signal(ctx, ready, (u64)1, next, SignalOp::add);
          wait_until(ctx, ack, Cmp::eq, (u64)k);
        } else {
          fence<Scope::system>();
          signal(ctx, ready32, k, next);
          wait_until(ctx, ack32, Cmp::eq, k);
        }
      }
      __syncthreads();
    }
  } else {
    unsigned bad = 0;
    for (unsigned k = 1; k <= rounds; ++k) {
      if (threadIdx.x == 0) {
        if (variant == 0) wait_until(ctx, ready, Cmp::ge, (u64)k);
        else if (variant == 1) { wait_until<Order::relaxed>(ctx, ready, Cmp::gt, (u64)(k - 1)); fence<Scope::system>(); }
        else if (variant == 2) wait_until(ctx, ready, Cmp::eq, (u64)k);
        else wait_until(ctx, ready32, Cmp::eq, k);
      }
      __syncthreads();
      for (u64 i = threadIdx.x; i < n; i += blockDim.x) bad += inbox[i] != k * 131u + (unsigned)i + prev;
      __syncthreads();
      if (threadIdx.x == 0) {
        if (variant == 1) signal<Order::relaxed>(ctx, ack, (u64)k, prev);
        else if (variant == 2) signal(ctx, ack, (u64)1, prev, SignalOp::add);
        else if (variant == 3) signal(ctx, ack32, k, prev);
        else signal(ctx, ack, (u64)k, prev);
      }
    }
    if (bad) atomicAdd(errors, bad);
  }
}

// Every comparison of wait_until against a flag already set locally: must return at once
// with the value seen. results[c] = value seen for Cmp c.
extern "C" __global__ void wait_cmps(Context, long long* flag, long long* results) {
  if (threadIdx.x != 0) return;
  const long long v = *flag;  // host set it to 5
  results[0] = wait_until(flag, Cmp::eq, v);
  results[1] = wait_until(flag, Cmp::ne, v + 1);
  results[2] = wait_until(flag, Cmp::gt, v - 1);
  results[3] = wait_until(flag, Cmp::ge, v);
  results[4] = wait_until(flag, Cmp::lt, v + 1);
  results[5] = wait_until(flag, Cmp::le, v);
}

// ---- device barrier --------------------------------------------------------------------------------
// Writes `stamp` (read from device memory, so a graph replay can change it) into slot
// ctx.rank of every rank's `board`.
extern "C" __global__ void stamp_board(const __grid_constant__ Context ctx, u64* board, const u64* stamp) {
  if (threadIdx.x < ctx.world) store(ctx, board + ctx.rank, *stamp, threadIdx.x);
}
// Checks that every slot of the local board holds `*stamp`; counts mismatches; bumps stamp.
extern "C" __global__ void check_board(const __grid_constant__ Context ctx, const u64* board, u64* stamp, unsigned* errors) {
  if (threadIdx.x == 0) {
    for (int r = 0; r < ctx.world; ++r) *errors += board[r] != *stamp;
    *stamp += 1;
  }
}

// A kernel with a known signature, for launch argument checks.
extern "C" __global__ void three_params(Context, float* out, int value) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *out = (float)value;
}

// red_add (no fetch): every thread adds 1 to counter i on every rank; relaxed or release.
extern "C" __global__ void red_everywhere(const __grid_constant__ Context ctx, int release, unsigned* c32,
                                          u64* c64, u64 n) {
  GRID_LOOP(i, n) {
    for (int r = 0; r < ctx.world; ++r) {
      if (release) {
        red_add<Order::release>(ctx, c32 + i, 1u, r);
        red_add<Order::release>(ctx, c64 + i, (u64)1, r);
      } else {
        red_add(ctx, c32 + i, 1u, r);
        red_add(ctx, c64 + i, (u64)1, r);
      }
    }
  }
}
