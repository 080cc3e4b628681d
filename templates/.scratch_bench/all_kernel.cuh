#include <iris/device.hpp>

using namespace iris::device;

struct Pod16 { float a, b, c, d; };

template <Order O, Scope S, class T>
__device__ void arith_ops(const Context& ctx, T* p, T v, int to, T* out) {
  out[0] = atomic_add<O, S>(ctx, p, v, to);
  out[1] = atomic_sub<O, S>(ctx, p, v, to);
  out[2] = atomic_xchg<O, S>(ctx, p, v, to);
  out[3] = atomic_cas<O, S>(ctx, p, v, out[0], to);
}

template <Order O, Scope S, class T>
__device__ void integer_ops(const Context& ctx, T* p, T v, int to, T* out) {
  arith_ops<O, S>(ctx, p, v, to, out);
  out[4] = atomic_and<O, S>(ctx, p, v, to);
  out[5] = atomic_or<O, S>(ctx, p, v, to);
  out[6] = atomic_xor<O, S>(ctx, p, v, to);
  out[7] = atomic_min<O, S>(ctx, p, v, to);
  out[8] = atomic_max<O, S>(ctx, p, v, to);
}

template <Scope S, class T>
__device__ void flag_ops(const Context& ctx, T* flag, T v, int to, T* out) {
  atomic_store<Order::relaxed, S>(flag, v);
  atomic_store<Order::release, S>(flag, v);
  out[0] = atomic_load<Order::relaxed, S>(flag);
  out[1] = atomic_load<Order::acquire, S>(flag);
  signal<Order::relaxed, S>(ctx, flag, v, to, SignalOp::set);
  signal<Order::relaxed, S>(ctx, flag, v, to, SignalOp::add);
  signal<Order::release, S>(ctx, flag, v, to, SignalOp::set);
  signal<Order::release, S>(ctx, flag, v, to, SignalOp::add);
  const Cmp cmps[] = {Cmp::eq, Cmp::ne, Cmp::gt, Cmp::ge, Cmp::lt, Cmp::le};
  for (int i = 0; i < 6; ++i) {
    out[2 + i] = wait_until<Order::relaxed, S>(flag, cmps[i], v);
    out[8 + i] = wait_until<Order::acquire, S>(flag, cmps[i], v);
  }
}

template <Scope S, class T>
__device__ void ops_for_scope(const Context& ctx, T* p, T v, int to, T* out) {
  if constexpr (detail::is_int_word_v<T>) {
    integer_ops<Order::relaxed, S>(ctx, p, v, to, out);
    integer_ops<Order::acquire, S>(ctx, p, v, to, out);
    integer_ops<Order::release, S>(ctx, p, v, to, out);
    integer_ops<Order::acq_rel, S>(ctx, p, v, to, out);
    flag_ops<S>(ctx, p, v, to, out);
  } else {
    arith_ops<Order::relaxed, S>(ctx, p, v, to, out);
    arith_ops<Order::acquire, S>(ctx, p, v, to, out);
    arith_ops<Order::release, S>(ctx, p, v, to, out);
    arith_ops<Order::acq_rel, S>(ctx, p, v, to, out);
  }
}

template <class T>
__device__ void all_ops(const Context& ctx, T* p, T v, int to, T* out) {
  ops_for_scope<Scope::block>(ctx, p, v, to, out);
  ops_for_scope<Scope::device>(ctx, p, v, to, out);
  ops_for_scope<Scope::system>(ctx, p, v, to, out);
  // Defaults: acq_rel/system atomics, release signal, acquire wait.
  out[0] = atomic_add(ctx, p, v, to);
  if constexpr (detail::is_int_word_v<T>) {
    signal(ctx, p, v, to);
    out[1] = wait_until(p, Cmp::ge, v);
    out[2] = atomic_load(p);
    atomic_store(p, v);
  }
}

extern "C" __global__ void iris_atomics(const __grid_constant__ Context ctx, char* heap, int to) {
  all_ops(ctx, reinterpret_cast<u32*>(heap), 1u, to, reinterpret_cast<u32*>(heap + 256));
  all_ops(ctx, reinterpret_cast<i32*>(heap), -1, to, reinterpret_cast<i32*>(heap + 256));
  all_ops(ctx, reinterpret_cast<u64*>(heap), 1ull, to, reinterpret_cast<u64*>(heap + 256));
  all_ops(ctx, reinterpret_cast<i64*>(heap), -1ll, to, reinterpret_cast<i64*>(heap + 256));
  all_ops(ctx, reinterpret_cast<unsigned long*>(heap), 1ul, to,
          reinterpret_cast<unsigned long*>(heap + 256));
  all_ops(ctx, reinterpret_cast<long*>(heap), -1l, to, reinterpret_cast<long*>(heap + 256));
  all_ops(ctx, reinterpret_cast<float*>(heap), 1.0f, to, reinterpret_cast<float*>(heap + 256));
  all_ops(ctx, reinterpret_cast<double*>(heap), 1.0, to, reinterpret_cast<double*>(heap + 256));
  fence<Scope::block>();
  fence<Scope::device>();
  fence<Scope::system>();
  fence();
  quiet();
}

template <class T>
__device__ void element_rma(const Context& ctx, T* sym, T* local, usize n, int peer) {
  store(ctx, sym, load(ctx, sym, peer), peer);
  get(ctx, local, sym, n, peer);
  put(ctx, sym, local, n, peer);
  copy(ctx, sym, sym + n, n, peer, ctx.rank);
}

extern "C" __global__ void iris_rma(const __grid_constant__ Context ctx, char* sym, char* local,
                                    usize bytes, int peer) {
  element_rma(ctx, reinterpret_cast<uint4*>(sym), reinterpret_cast<uint4*>(local), 4, peer);
  element_rma(ctx, reinterpret_cast<float4*>(sym), reinterpret_cast<float4*>(local), 4, peer);
  element_rma(ctx, reinterpret_cast<Pod16*>(sym), reinterpret_cast<Pod16*>(local), 4, peer);
  element_rma(ctx, reinterpret_cast<double*>(sym), reinterpret_cast<double*>(local), 4, peer);
  element_rma(ctx, reinterpret_cast<int*>(sym), reinterpret_cast<int*>(local), 4, peer);
  element_rma(ctx, reinterpret_cast<short*>(sym), reinterpret_cast<short*>(local), 4, peer);
  element_rma(ctx, sym, local, 4, peer);
  const usize slice = bytes / gridDim.x;
  block_put(ctx, sym + blockIdx.x * slice, local + blockIdx.x * slice, slice, peer);
  block_get(ctx, local + blockIdx.x * slice, sym + blockIdx.x * slice, slice, peer);
  block_copy(ctx, sym, sym + bytes, bytes, peer, ctx.rank);
  const char* csym = sym;
  (void)translate(ctx, csym, peer);
}

// A Context that is not __grid_constant__ must compile too (it is then
// copied to local memory, which costs speed only).
extern "C" __global__ void iris_plain_context(Context ctx, char* sym, const char* local,
                                              usize bytes, int peer) {
  block_put(ctx, sym, local, bytes, peer);
}
