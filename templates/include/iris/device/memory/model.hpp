// Fences and scalar atomic loads/stores with an explicit order and scope, and the word
// types the memory operations (atomics.hpp, signal.hpp) accept. The vendor's
// instructions for them are in arch/cuda/memory.hpp and arch/hip/memory.hpp, included
// below after the word traits they use.
#pragma once

#include "../arch.hpp"
#include "../context.hpp"

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

#include "../arch/memory.hpp"

#if IRIS_GPU_COMPILER
namespace iris::device {

// Orders this thread's prior memory accesses before its later ones, as seen
// by any thread within scope S (an acq_rel fence: see arch/*/memory.hpp).
template <Scope S = Scope::system>
IRIS_DEVICE IRIS_FORCEINLINE void fence() {
  detail::fence_acq_rel<S>();
}

// Completes this thread's prior puts/stores: after quiet(), any rank that
// observes (with acquire) a later write of this thread, e.g. a flag, also
// observes them.
// Remote accesses here are plain NVLink/PCIe loads and stores issued by the
// SM, with no proxy or DMA queue to drain, so a system-scope fence is all
// that completion requires; a sequentially-consistent fence would add cost
// without strengthening that guarantee.
IRIS_DEVICE IRIS_FORCEINLINE void quiet() { fence<Scope::system>(); }

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
