// Fences and scalar atomic loads/stores in terms of the PTX memory model, plus
// the Order/Scope -> PTX qualifier mapping that atomics.hpp and signal.hpp
// reuse. Everything is explicit inline PTX so that the emitted .sem/.scope is
// exactly the one requested, independent of what CUDA's intrinsics default to.
#pragma once

#include "../arch.hpp"
#include "../context.hpp"

// Expands STMT(".sem", ".scope", ...) for the compile-time pair (O, S).
// PTX qualifiers must be string literals inside asm(), so the choice is made
// with if constexpr over literals; branches that are not taken are never
// instantiated, so an invalid pair (e.g. ld.release) is never emitted. Callers
// static_assert which orders they accept before expanding this.
#define IRIS_DETAIL_PTX_SCOPE(S, STMT, SEM, ...)                              \
  if constexpr ((S) == ::iris::device::Scope::block) {                         \
    STMT(SEM, ".cta", __VA_ARGS__);                                            \
  } else if constexpr ((S) == ::iris::device::Scope::device) {                 \
    STMT(SEM, ".gpu", __VA_ARGS__);                                            \
  } else {                                                                     \
    STMT(SEM, ".sys", __VA_ARGS__);                                            \
  }

#define IRIS_DETAIL_PTX_ORDER_SCOPE(O, S, STMT, ...)                          \
  if constexpr ((O) == ::iris::device::Order::relaxed) {                       \
    IRIS_DETAIL_PTX_SCOPE(S, STMT, ".relaxed", __VA_ARGS__)                    \
  } else if constexpr ((O) == ::iris::device::Order::acquire) {                \
    IRIS_DETAIL_PTX_SCOPE(S, STMT, ".acquire", __VA_ARGS__)                    \
  } else if constexpr ((O) == ::iris::device::Order::release) {                \
    IRIS_DETAIL_PTX_SCOPE(S, STMT, ".release", __VA_ARGS__)                    \
  } else {                                                                     \
    IRIS_DETAIL_PTX_SCOPE(S, STMT, ".acq_rel", __VA_ARGS__)                    \
  }

namespace iris::device::detail {

template <bool B, class A, class C>
struct Pick {
  using type = A;
};
template <class A, class C>
struct Pick<false, A, C> {
  using type = C;
};

// Maps an operand type T to the builtin type its asm operand is declared
// with (`word`), or marks T unsupported. The fallback word keeps the body
// compiling, so that only the caller's static_assert reports the misuse.
struct NoWord {
  static constexpr bool supported = false;
  using word = u32;
};
template <class W>
struct WordIs {
  static constexpr bool supported = true;
  using word = W;
};

// Integers that map 1:1 onto a 32- or 64-bit PTX register. (unsigned) long
// is accepted too because size_t/ptrdiff_t counters are common flag types.
template <class T> struct IntWord : NoWord {};
template <> struct IntWord<u32> : WordIs<u32> {};
template <> struct IntWord<i32> : WordIs<i32> {};
template <> struct IntWord<u64> : WordIs<u64> {};
template <> struct IntWord<i64> : WordIs<i64> {};
template <>
struct IntWord<unsigned long> : WordIs<typename Pick<sizeof(unsigned long) == 8, u64, u32>::type> {};
template <> struct IntWord<long> : WordIs<typename Pick<sizeof(long) == 8, i64, i32>::type> {};

template <class T>
inline constexpr bool is_int_word_v = IntWord<T>::supported;

template <class T>
using int_word_t = typename IntWord<T>::word;

template <class T>
inline constexpr bool is_f32_v = false;
template <>
inline constexpr bool is_f32_v<float> = true;

}  // namespace iris::device::detail

#if IRIS_GPU_COMPILER
namespace iris::device {

// Orders this thread's prior memory accesses before its later ones, as seen
// by any thread within scope S. acq_rel (not sc) is enough for the
// release/acquire flag protocols this library builds, and is cheaper.
template <Scope S = Scope::system>
IRIS_DEVICE IRIS_FORCEINLINE void fence() {
#if IRIS_HIP_COMPILER
  if constexpr (S == Scope::block) {
    __builtin_amdgcn_fence(__ATOMIC_ACQ_REL, "workgroup");
  } else if constexpr (S == Scope::device) {
    __builtin_amdgcn_fence(__ATOMIC_ACQ_REL, "agent");
  } else {
    __builtin_amdgcn_fence(__ATOMIC_ACQ_REL, "");
  }
#else
  if constexpr (S == Scope::block) {
    asm volatile("fence.acq_rel.cta;" ::: "memory");
  } else if constexpr (S == Scope::device) {
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
  } else {
    asm volatile("fence.acq_rel.sys;" ::: "memory");
  }
#endif
}

// Completes this thread's prior puts/stores: after quiet(), any rank that
// observes (with acquire) a later write of this thread, e.g. a flag, also
// observes them.
// Remote accesses here are plain NVLink/PCIe loads and stores issued by the
// SM, with no proxy or DMA queue to drain, so a system-scope fence is all
// that completion requires; a sequentially-consistent fence would add cost
// without strengthening that guarantee.
IRIS_DEVICE IRIS_FORCEINLINE void quiet() { fence<Scope::system>(); }

namespace detail {

#if IRIS_HIP_COMPILER
// The __hip_atomic builtins' order and scope for (O, S). A system-scope release
// store is then `buffer_wbl2 sc0 sc1; s_waitcnt vmcnt(0) lgkmcnt(0); global_store sc0
// sc1` on gfx942, an acquire load `global_load sc0 sc1; s_waitcnt vmcnt(0);
// buffer_inv sc0 sc1` (LLVM's AMDGPUUsage memory model).
template <Order O>
inline constexpr int hip_order = O == Order::relaxed   ? __ATOMIC_RELAXED
                                 : O == Order::acquire ? __ATOMIC_ACQUIRE
                                 : O == Order::release ? __ATOMIC_RELEASE
                                                       : __ATOMIC_ACQ_REL;
template <Scope S>
inline constexpr int hip_scope = S == Scope::block    ? amdgcn::kScopeBlock
                                 : S == Scope::device ? amdgcn::kScopeDevice
                                                      : amdgcn::kScopeSystem;

template <Order O, Scope S, class W>
IRIS_DEVICE IRIS_FORCEINLINE W ld_word(const W* p) {
  return __hip_atomic_load(amdgcn::global(p), hip_order<O>, hip_scope<S>);
}

template <Order O, Scope S, class W>
IRIS_DEVICE IRIS_FORCEINLINE void st_word(W* p, W w) {
  __hip_atomic_store(amdgcn::global(p), w, hip_order<O>, hip_scope<S>);
}
#else
// The heap is global memory, whose generic addresses equal its .global
// addresses, so generic pointers are passed straight to .global ops
// (the same convention CUTLASS's barriers rely on).
#define IRIS_DETAIL_LD_STMT(SEM, SCOPE, TYPE, C) \
  asm volatile("ld" SEM SCOPE ".global" TYPE " %0, [%1];" : "=" C(w) : "l"(p) : "memory")
#define IRIS_DETAIL_ST_STMT(SEM, SCOPE, TYPE, C) \
  asm volatile("st" SEM SCOPE ".global" TYPE " [%0], %1;" ::"l"(p), C(w) : "memory")

template <Order O, Scope S, class W>
IRIS_DEVICE IRIS_FORCEINLINE W ld_word(const W* p) {
  W w;
  if constexpr (sizeof(W) == 4) {
    IRIS_DETAIL_PTX_ORDER_SCOPE(O, S, IRIS_DETAIL_LD_STMT, ".b32", "r")
  } else {
    IRIS_DETAIL_PTX_ORDER_SCOPE(O, S, IRIS_DETAIL_LD_STMT, ".b64", "l")
  }
  return w;
}

template <Order O, Scope S, class W>
IRIS_DEVICE IRIS_FORCEINLINE void st_word(W* p, W w) {
  if constexpr (sizeof(W) == 4) {
    IRIS_DETAIL_PTX_ORDER_SCOPE(O, S, IRIS_DETAIL_ST_STMT, ".b32", "r")
  } else {
    IRIS_DETAIL_PTX_ORDER_SCOPE(O, S, IRIS_DETAIL_ST_STMT, ".b64", "l")
  }
}

#undef IRIS_DETAIL_LD_STMT
#undef IRIS_DETAIL_ST_STMT
#endif  // IRIS_HIP_COMPILER

}  // namespace detail

// Single-copy-atomic load of a 4- or 8-byte integer (local or translated).
template <Order O = Order::acquire, Scope S = Scope::system, class T>
IRIS_DEVICE IRIS_FORCEINLINE T atomic_load(const T* ptr) {
  static_assert(O == Order::relaxed || O == Order::acquire,
                "atomic_load cannot have release ordering (use relaxed or acquire)");
  static_assert(detail::is_int_word_v<T>,
                "atomic_load supports 4- and 8-byte integers (u32, i32, u64, i64)");
  using W = detail::int_word_t<T>;
  return static_cast<T>(detail::ld_word<O, S>(reinterpret_cast<const W*>(ptr)));
}

// Single-copy-atomic store of a 4- or 8-byte integer (local or translated).
template <Order O = Order::release, Scope S = Scope::system, class T>
IRIS_DEVICE IRIS_FORCEINLINE void atomic_store(T* ptr, T value) {
  static_assert(O == Order::relaxed || O == Order::release,
                "atomic_store cannot have acquire ordering (use relaxed or release)");
  static_assert(detail::is_int_word_v<T>,
                "atomic_store supports 4- and 8-byte integers (u32, i32, u64, i64)");
  using W = detail::int_word_t<T>;
  detail::st_word<O, S>(reinterpret_cast<W*>(ptr), static_cast<W>(value));
}

}  // namespace iris::device
#endif  // IRIS_GPU_COMPILER
