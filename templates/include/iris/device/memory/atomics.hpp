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
