// Data-and-flag words (NCCL's LL protocol): a value of at most 4 bytes in the low half of
// a 64-bit word, a flag in the high half, written with one store. A receiver polls its
// own words until each holds the flag it expects, and then has the values: no fence and
// no separate flag, so a message costs one trip over the link. An aligned 64-bit store
// reaches the other side whole, so a word with the new flag has the new value.
// irisc emits these for `store(words[j], v, to: r, flag: e)` and `load<T>(words[j], flag: e)`.
#pragma once

#include "arch.hpp"
#include "context.hpp"
#include "signal.hpp"
#include "tile.hpp"

#if IRIS_GPU_COMPILER
namespace iris::device {
namespace detail {

template <class T>
IRIS_DEVICE IRIS_FORCEINLINE u64 flag_word(T v, u32 flag) {
  static_assert(sizeof(T) <= 4, "a data-and-flag word carries at most 4 bytes of data");
  u32 bits = 0;
  memcpy(&bits, &v, sizeof(T));
  return (static_cast<u64>(flag) << 32) | bits;
}

template <class T>
IRIS_DEVICE IRIS_FORCEINLINE T flag_value(u64 w) {
  const u32 bits = static_cast<u32>(w);
  T v;
  memcpy(&v, &bits, sizeof(T));
  return v;
}

// Loads and stores the words themselves: volatile, so every poll reads memory, and a
// 16-byte access moves two words at once.
IRIS_DEVICE IRIS_FORCEINLINE u64 word_load(const u64* p) {
#if IRIS_HIP_COMPILER
  return __hip_atomic_load(amdgcn::global(const_cast<u64*>(p)), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
#else
  u64 w;
  asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(w) : "l"(p) : "memory");
  return w;
#endif
}
IRIS_DEVICE IRIS_FORCEINLINE void word_store(u64* p, u64 w) {
#if IRIS_HIP_COMPILER
  __hip_atomic_store(amdgcn::global(p), w, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
#else
  asm volatile("st.volatile.global.u64 [%0], %1;" ::"l"(p), "l"(w) : "memory");
#endif
}
IRIS_DEVICE IRIS_FORCEINLINE void word_store2(u64* p, u64 a, u64 b) {
#if IRIS_HIP_COMPILER
  word_store(p, a);
  word_store(p + 1, b);
#else
  asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
#endif
}

// Polls the word at p (last seen as w) until its flag is `flag`; gives up as
// wait_until(ctx, ...) does (signal.hpp's gives_up), recording the word in the report.
IRIS_DEVICE IRIS_FORCEINLINE u64 poll_word(const Context& ctx, const u64* p, u64 w, u32 flag, const WaitSite& site) {
  u32 polls = 0;
  u64 start = 0;
  while (static_cast<u32>(w >> 32) != flag) {
    w = word_load(p);
    if (gives_up(ctx, ++polls, start, p, Cmp::eq, static_cast<u64>(flag) << 32, w, site)) return w;
  }
  return w;
}

}  // namespace detail

// One word: v's bits with `flag` (a scalar flagged store; the caller picks the thread).
template <class T>
IRIS_DEVICE IRIS_FORCEINLINE void store_flagged(u64* p, T v, u32 flag) {
  detail::word_store(p, detail::flag_word(v, flag));
}

// One word, waited for: every calling thread polls it.
template <class T>
IRIS_DEVICE T load_flagged(const Context& ctx, const u64* p, u32 flag, WaitSite site = {}) {
  return detail::flag_value<T>(detail::poll_word(ctx, p, detail::word_load(p), flag, site));
}

namespace tile {

// p[elem(s)] = word(r[s], flag) for elem(s) < valid; two words a store where whole and
// aligned.
template <class L, class T>
IRIS_DEVICE IRIS_FORCEINLINE void store_flagged(u64* p, const T (&r)[L::kPerThread], long long valid, u32 flag) {
  constexpr int V = L::kVec;
  if constexpr (V % 2 == 0) {
    if (valid >= L::kSize && reinterpret_cast<unsigned long long>(p) % 16 == 0) {
#pragma unroll
      for (int s = 0; s < L::kPerThread; s += 2) {
        iris::device::detail::word_store2(p + L::elem(s), iris::device::detail::flag_word(r[s], flag), iris::device::detail::flag_word(r[s + 1], flag));
      }
      return;
    }
  }
#pragma unroll
  for (int s = 0; s < L::kPerThread; ++s) {
    const long long e = L::elem(s);
    if (e < valid) iris::device::detail::word_store(p + e, iris::device::detail::flag_word(r[s], flag));
  }
}

// r[s] = the value of word p[elem(s)] once its flag is `flag`, for elem(s) < valid
// (else 0). Every pass loads all the words still without their flag, back to back, so
// a pass costs one trip to memory however many words are late (polling them one after
// another cost a trip per word once the first was late, though the rest had landed).
template <class L, class T>
IRIS_DEVICE void load_flagged(const Context& ctx, T (&r)[L::kPerThread], const u64* p, long long valid, u32 flag,
                              WaitSite site = {}) {
  u64 w[L::kPerThread];
  const u64 ready = static_cast<u64>(flag) << 32;
#pragma unroll
  for (int s = 0; s < L::kPerThread; ++s) {
    const long long e = L::elem(s);
    w[s] = e < valid ? iris::device::detail::word_load(p + e) : ready;
  }
  u32 polls = 0;
  u64 start = 0;
  for (;;) {
    int late = -1;
#pragma unroll
    for (int s = 0; s < L::kPerThread; ++s) {
      if (static_cast<u32>(w[s] >> 32) != flag) late = s;
    }
    if (late < 0) break;
    if (iris::device::detail::gives_up(ctx, ++polls, start, p + L::elem(late), Cmp::eq, ready, w[late], site)) break;
#pragma unroll
    for (int s = 0; s < L::kPerThread; ++s) {
      if (static_cast<u32>(w[s] >> 32) != flag) w[s] = iris::device::detail::word_load(p + L::elem(s));
    }
  }
#pragma unroll
  for (int s = 0; s < L::kPerThread; ++s) {
    const long long e = L::elem(s);
    r[s] = e < valid ? iris::device::detail::flag_value<T>(w[s]) : T(0);
  }
}

}  // namespace tile
}  // namespace iris::device
#endif  // IRIS_GPU_COMPILER
