// Remote atomic read-modify-write operations on the symmetric heap. Each one
// is a single PTX `atom` on the translated address with the requested .sem
// and .scope, so a peer's atomics and this rank's atomics on the same word are
// mutually atomic (NVLink/PCIe P2P carries atomics natively).
#pragma once

#include "../arch.hpp"
#include "../context.hpp"
#include "model.hpp"

namespace iris::device::detail {

// add/sub/xchg/cas also accept floating point; the bitwise ops and min/max
// take integers only (IntWord).
template <class T> struct ArithWord : IntWord<T> {};
template <> struct ArithWord<float> : WordIs<float> {};
template <> struct ArithWord<double> : WordIs<double> {};

template <class T>
inline constexpr bool is_arith_word_v = ArithWord<T>::supported;

template <class T>
using arith_word_t = typename ArithWord<T>::word;

}  // namespace iris::device::detail

#if IRIS_GPU_COMPILER
namespace iris::device {
namespace detail {

#if IRIS_HIP_COMPILER
// One __hip_atomic builtin per operation: NAME<O, S>(word* p, word v) -> old. The
// builtins take every word type (floats compare bit patterns in atom_cas, as PTX does).
#define IRIS_DETAIL_DEFINE_HIP_ATOM(NAME, BUILTIN)                                     \
  template <Order O, Scope S, class W>                                                 \
  IRIS_DEVICE IRIS_FORCEINLINE W NAME(W* p, W v) {                                     \
    return BUILTIN(amdgcn::global(p), v, hip_order<O>, hip_scope<S>);                                  \
  }
IRIS_DETAIL_DEFINE_HIP_ATOM(atom_add, __hip_atomic_fetch_add)
IRIS_DETAIL_DEFINE_HIP_ATOM(atom_and, __hip_atomic_fetch_and)
IRIS_DETAIL_DEFINE_HIP_ATOM(atom_or, __hip_atomic_fetch_or)
IRIS_DETAIL_DEFINE_HIP_ATOM(atom_xor, __hip_atomic_fetch_xor)
IRIS_DETAIL_DEFINE_HIP_ATOM(atom_min, __hip_atomic_fetch_min)
IRIS_DETAIL_DEFINE_HIP_ATOM(atom_max, __hip_atomic_fetch_max)
IRIS_DETAIL_DEFINE_HIP_ATOM(atom_exch, __hip_atomic_exchange)
#undef IRIS_DETAIL_DEFINE_HIP_ATOM

// The failure order of a compare-and-swap may not release.
template <Order O>
inline constexpr int hip_cas_failure_order = O == Order::acquire || O == Order::acq_rel ? __ATOMIC_ACQUIRE : __ATOMIC_RELAXED;

template <Order O, Scope S, class W>
IRIS_DEVICE IRIS_FORCEINLINE W atom_cas(W* p, W expected, W desired) {
  if constexpr (sizeof(W) == 4 || sizeof(W) == 8) {
    // Bit patterns, through the integer of the same width.
    using I = typename Pick<sizeof(W) == 4, u32, u64>::type;
    I e, d;
    __builtin_memcpy(&e, &expected, sizeof(W));
    __builtin_memcpy(&d, &desired, sizeof(W));
    __hip_atomic_compare_exchange_strong(amdgcn::global(reinterpret_cast<I*>(p)), &e, d, hip_order<O>, hip_cas_failure_order<O>,
                                         hip_scope<S>);
    W old;
    __builtin_memcpy(&old, &e, sizeof(W));
    return old;
  }
}
#else
// One raw atom per (operation, PTX type): NAME<O, S>(word* p, word v) -> old.
// OPTYPE is ".op.type"; C is the asm register constraint of the word type.
// The .b32/.b64 forms take any 32/64-bit register, floats included, which is
// why xchg/cas on float/double need no bit casts (and compare bit patterns).
#define IRIS_DETAIL_ATOM_STMT(SEM, SCOPE, OPTYPE, C)                                   \
  asm volatile("atom" SEM SCOPE ".global" OPTYPE " %0, [%1], %2;"                      \
               : "=" C(old)                                                            \
               : "l"(p), C(v)                                                          \
               : "memory")
#define IRIS_DETAIL_CAS_STMT(SEM, SCOPE, OPTYPE, C)                                    \
  asm volatile("atom" SEM SCOPE ".global" OPTYPE " %0, [%1], %2, %3;"                  \
               : "=" C(old)                                                            \
               : "l"(p), C(expected), C(desired)                                       \
               : "memory")
#define IRIS_DETAIL_DEFINE_ATOM(NAME, W, OPTYPE, C)                                    \
  template <Order O, Scope S>                                                          \
  IRIS_DEVICE IRIS_FORCEINLINE W NAME(W* p, W v) {                                     \
    W old;                                                                             \
    IRIS_DETAIL_PTX_ORDER_SCOPE(O, S, IRIS_DETAIL_ATOM_STMT, OPTYPE, C)                \
    return old;                                                                        \
  }
#define IRIS_DETAIL_DEFINE_CAS(W, OPTYPE, C)                                           \
  template <Order O, Scope S>                                                          \
  IRIS_DEVICE IRIS_FORCEINLINE W atom_cas(W* p, W expected, W desired) {               \
    W old;                                                                             \
    IRIS_DETAIL_PTX_ORDER_SCOPE(O, S, IRIS_DETAIL_CAS_STMT, OPTYPE, C)                 \
    return old;                                                                        \
  }

// PTX has no add.s64; two's-complement addition is sign-agnostic, so .u64.
IRIS_DETAIL_DEFINE_ATOM(atom_add, u32, ".add.u32", "r")
IRIS_DETAIL_DEFINE_ATOM(atom_add, i32, ".add.s32", "r")
IRIS_DETAIL_DEFINE_ATOM(atom_add, u64, ".add.u64", "l")
IRIS_DETAIL_DEFINE_ATOM(atom_add, i64, ".add.u64", "l")
IRIS_DETAIL_DEFINE_ATOM(atom_add, float, ".add.f32", "f")
IRIS_DETAIL_DEFINE_ATOM(atom_add, double, ".add.f64", "d")

IRIS_DETAIL_DEFINE_ATOM(atom_and, u32, ".and.b32", "r")
IRIS_DETAIL_DEFINE_ATOM(atom_and, i32, ".and.b32", "r")
IRIS_DETAIL_DEFINE_ATOM(atom_and, u64, ".and.b64", "l")
IRIS_DETAIL_DEFINE_ATOM(atom_and, i64, ".and.b64", "l")

IRIS_DETAIL_DEFINE_ATOM(atom_or, u32, ".or.b32", "r")
IRIS_DETAIL_DEFINE_ATOM(atom_or, i32, ".or.b32", "r")
IRIS_DETAIL_DEFINE_ATOM(atom_or, u64, ".or.b64", "l")
IRIS_DETAIL_DEFINE_ATOM(atom_or, i64, ".or.b64", "l")

IRIS_DETAIL_DEFINE_ATOM(atom_xor, u32, ".xor.b32", "r")
IRIS_DETAIL_DEFINE_ATOM(atom_xor, i32, ".xor.b32", "r")
IRIS_DETAIL_DEFINE_ATOM(atom_xor, u64, ".xor.b64", "l")
IRIS_DETAIL_DEFINE_ATOM(atom_xor, i64, ".xor.b64", "l")

IRIS_DETAIL_DEFINE_ATOM(atom_min, u32, ".min.u32", "r")
IRIS_DETAIL_DEFINE_ATOM(atom_min, i32, ".min.s32", "r")
IRIS_DETAIL_DEFINE_ATOM(atom_min, u64, ".min.u64", "l")
IRIS_DETAIL_DEFINE_ATOM(atom_min, i64, ".min.s64", "l")

IRIS_DETAIL_DEFINE_ATOM(atom_max, u32, ".max.u32", "r")
IRIS_DETAIL_DEFINE_ATOM(atom_max, i32, ".max.s32", "r")
IRIS_DETAIL_DEFINE_ATOM(atom_max, u64, ".max.u64", "l")
IRIS_DETAIL_DEFINE_ATOM(atom_max, i64, ".max.s64", "l")

IRIS_DETAIL_DEFINE_ATOM(atom_exch, u32, ".exch.b32", "r")
IRIS_DETAIL_DEFINE_ATOM(atom_exch, i32, ".exch.b32", "r")
IRIS_DETAIL_DEFINE_ATOM(atom_exch, u64, ".exch.b64", "l")
IRIS_DETAIL_DEFINE_ATOM(atom_exch, i64, ".exch.b64", "l")
IRIS_DETAIL_DEFINE_ATOM(atom_exch, float, ".exch.b32", "f")
IRIS_DETAIL_DEFINE_ATOM(atom_exch, double, ".exch.b64", "d")

IRIS_DETAIL_DEFINE_CAS(u32, ".cas.b32", "r")
IRIS_DETAIL_DEFINE_CAS(i32, ".cas.b32", "r")
IRIS_DETAIL_DEFINE_CAS(u64, ".cas.b64", "l")
IRIS_DETAIL_DEFINE_CAS(i64, ".cas.b64", "l")
IRIS_DETAIL_DEFINE_CAS(float, ".cas.b32", "f")
IRIS_DETAIL_DEFINE_CAS(double, ".cas.b64", "d")

#undef IRIS_DETAIL_DEFINE_CAS
#undef IRIS_DETAIL_DEFINE_ATOM
#undef IRIS_DETAIL_CAS_STMT
#undef IRIS_DETAIL_ATOM_STMT
#endif  // IRIS_HIP_COMPILER

// The addend that makes add() perform sub(). Integers negate through their
// unsigned type so that negating INT_MIN is well defined (and wraps, as
// unsigned subtraction must).
IRIS_DEVICE IRIS_FORCEINLINE u32 addend_for_sub(u32 v) { return 0u - v; }
IRIS_DEVICE IRIS_FORCEINLINE u64 addend_for_sub(u64 v) { return 0ull - v; }
IRIS_DEVICE IRIS_FORCEINLINE i32 addend_for_sub(i32 v) {
  return static_cast<i32>(0u - static_cast<u32>(v));
}
IRIS_DEVICE IRIS_FORCEINLINE i64 addend_for_sub(i64 v) {
  return static_cast<i64>(0ull - static_cast<u64>(v));
}
IRIS_DEVICE IRIS_FORCEINLINE float addend_for_sub(float v) { return -v; }
IRIS_DEVICE IRIS_FORCEINLINE double addend_for_sub(double v) { return -v; }

// rank `to`'s copy of *ptr, typed as the word the raw atom takes.
template <class W, class T>
IRIS_DEVICE IRIS_FORCEINLINE W* remote_word(const Context& ctx, T* ptr, int to) {
  return reinterpret_cast<W*>(translate(ctx, ptr, to));
}

}  // namespace detail

// All operations return the value *ptr held on rank `to` just before the op.
// O is the PTX .sem of the atom itself; the default acq_rel/system makes a
// remote atomic a safe synchronization point between ranks.

template <Order O = Order::acq_rel, Scope S = Scope::system, class T>
IRIS_DEVICE IRIS_FORCEINLINE T atomic_add(const Context& ctx, T* ptr, T val, int to) {
  static_assert(detail::is_arith_word_v<T>,
                "atomic_add supports u32, i32, u64, i64, float and double");
  using W = detail::arith_word_t<T>;
  return static_cast<T>(
      detail::atom_add<O, S>(detail::remote_word<W>(ctx, ptr, to), static_cast<W>(val)));
}

template <Order O = Order::acq_rel, Scope S = Scope::system, class T>
IRIS_DEVICE IRIS_FORCEINLINE T atomic_sub(const Context& ctx, T* ptr, T val, int to) {
  static_assert(detail::is_arith_word_v<T>,
                "atomic_sub supports u32, i32, u64, i64, float and double");
  using W = detail::arith_word_t<T>;
  return static_cast<T>(detail::atom_add<O, S>(detail::remote_word<W>(ctx, ptr, to),
                                               detail::addend_for_sub(static_cast<W>(val))));
}

template <Order O = Order::acq_rel, Scope S = Scope::system, class T>
IRIS_DEVICE IRIS_FORCEINLINE T atomic_xchg(const Context& ctx, T* ptr, T val, int to) {
  static_assert(detail::is_arith_word_v<T>,
                "atomic_xchg supports u32, i32, u64, i64, float and double");
  using W = detail::arith_word_t<T>;
  return static_cast<T>(
      detail::atom_exch<O, S>(detail::remote_word<W>(ctx, ptr, to), static_cast<W>(val)));
}

// Stores desired if *ptr equals expected. Floats compare bit patterns, so
// -0.0 != +0.0 and a NaN matches an identical NaN.
template <Order O = Order::acq_rel, Scope S = Scope::system, class T>
IRIS_DEVICE IRIS_FORCEINLINE T atomic_cas(const Context& ctx, T* ptr, T expected, T desired,
                                          int to) {
  static_assert(detail::is_arith_word_v<T>,
                "atomic_cas supports u32, i32, u64, i64, float and double");
  using W = detail::arith_word_t<T>;
  return static_cast<T>(detail::atom_cas<O, S>(detail::remote_word<W>(ctx, ptr, to),
                                               static_cast<W>(expected),
                                               static_cast<W>(desired)));
}

template <Order O = Order::acq_rel, Scope S = Scope::system, class T>
IRIS_DEVICE IRIS_FORCEINLINE T atomic_and(const Context& ctx, T* ptr, T val, int to) {
  static_assert(detail::is_int_word_v<T>, "atomic_and supports u32, i32, u64 and i64");
  using W = detail::int_word_t<T>;
  return static_cast<T>(
      detail::atom_and<O, S>(detail::remote_word<W>(ctx, ptr, to), static_cast<W>(val)));
}

template <Order O = Order::acq_rel, Scope S = Scope::system, class T>
IRIS_DEVICE IRIS_FORCEINLINE T atomic_or(const Context& ctx, T* ptr, T val, int to) {
  static_assert(detail::is_int_word_v<T>, "atomic_or supports u32, i32, u64 and i64");
  using W = detail::int_word_t<T>;
  return static_cast<T>(
      detail::atom_or<O, S>(detail::remote_word<W>(ctx, ptr, to), static_cast<W>(val)));
}

template <Order O = Order::acq_rel, Scope S = Scope::system, class T>
IRIS_DEVICE IRIS_FORCEINLINE T atomic_xor(const Context& ctx, T* ptr, T val, int to) {
  static_assert(detail::is_int_word_v<T>, "atomic_xor supports u32, i32, u64 and i64");
  using W = detail::int_word_t<T>;
  return static_cast<T>(
      detail::atom_xor<O, S>(detail::remote_word<W>(ctx, ptr, to), static_cast<W>(val)));
}

template <Order O = Order::acq_rel, Scope S = Scope::system, class T>
IRIS_DEVICE IRIS_FORCEINLINE T atomic_min(const Context& ctx, T* ptr, T val, int to) {
  static_assert(detail::is_int_word_v<T>, "atomic_min supports u32, i32, u64 and i64");
  using W = detail::int_word_t<T>;
  return static_cast<T>(
      detail::atom_min<O, S>(detail::remote_word<W>(ctx, ptr, to), static_cast<W>(val)));
}

template <Order O = Order::acq_rel, Scope S = Scope::system, class T>
IRIS_DEVICE IRIS_FORCEINLINE T atomic_max(const Context& ctx, T* ptr, T val, int to) {
  static_assert(detail::is_int_word_v<T>, "atomic_max supports u32, i32, u64 and i64");
  using W = detail::int_word_t<T>;
  return static_cast<T>(
      detail::atom_max<O, S>(detail::remote_word<W>(ctx, ptr, to), static_cast<W>(val)));
}

}  // namespace iris::device
#endif  // IRIS_GPU_COMPILER
