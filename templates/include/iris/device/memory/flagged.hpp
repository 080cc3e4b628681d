// Data-and-flag words (NCCL's LL protocol): 4 bytes of data in the low half of a 64-bit
// word (a value of 4 bytes, or two 16-bit values: elements 2w and 2w + 1 in word w, the
// first in the low 16 bits), a flag in the high half, written with one store. A receiver
// polls its own words until each holds the flag it expects, and then has the values: no
// fence and no separate flag, so a message costs one trip over the link. An aligned
// 64-bit store reaches the other side whole, so a word with the new flag has the new
// values. irisc emits these for `store(words[j], v, to: r, flag: e)` and
// `load<T>(words[j], flag: e)`; for 16-bit T the pointer is the word of the view's first
// value (its start is even) and `valid` counts values.
#pragma once

#include "../arch.hpp"
#include "../context.hpp"
#include "signal.hpp"
#include "../tile/tile.hpp"

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

// A tile whose threads hold V consecutive elements (V >= 4) would store its words V
// words apart from thread to thread: each 16-byte access of a warp then fills half or
// less of a 32-byte sector, and over NVLink every partial sector is a transaction of
// its own (seen: an 8 KiB bf16 tile's words took 1.4 us more to put than the same
// bytes written whole). Such tiles move their values between the lanes of a warp
// first, so that the warp's k-th access covers 64 consecutive words (lane l: words
// 64 k + 2 l and 64 k + 2 l + 1). Word j still holds element j: only which thread
// stores or loads it changes. Whole tiles only (a ragged one goes word by word).
template <class L>
inline constexpr bool kWarpWords = !IRIS_HIP_COMPILER && L::kVec >= 4 && L::kVec % 2 == 0 && 64 % L::kVec == 0 &&
                                   L::kThreads % 32 == 0 && L::kPerThread * L::kThreads == L::kSize;

// Two values of T (at most 4 bytes each) as one lane-to-lane value.
template <class T>
using PairBits = typename Pick<2 * sizeof(T) <= 4, u32, u64>::type;
template <class T>
IRIS_DEVICE IRIS_FORCEINLINE PairBits<T> pack_pair(T a, T b) {
  unsigned char bytes[sizeof(PairBits<T>)] = {};
  memcpy(bytes, &a, sizeof(T));
  memcpy(bytes + sizeof(T), &b, sizeof(T));
  PairBits<T> x;
  memcpy(&x, bytes, sizeof x);
  return x;
}
template <class T>
IRIS_DEVICE IRIS_FORCEINLINE void unpack_pair(PairBits<T> x, T& a, T& b) {
  unsigned char bytes[sizeof(PairBits<T>)];
  memcpy(bytes, &x, sizeof x);
  memcpy(&a, bytes, sizeof(T));
  memcpy(&b, bytes + sizeof(T), sizeof(T));
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

// Polls until each of the N words in `w` holds `flag`. A pass checks them all, then
// `reload()` reads again the ones still late, back to back, so a pass costs one trip to
// memory however many are late. `where(s)` is word s's address, for the report when the
// wait gives up (as wait_until does: gives_up).
template <int N, class Where, class Reload>
IRIS_DEVICE IRIS_FORCEINLINE void poll_words(const Context& ctx, const u64 (&w)[N], u32 flag, const WaitSite& site,
                                             Where where, Reload reload) {
  u32 polls = 0;
  u64 start = 0;
  for (;;) {
    int late = -1;
#pragma unroll
    for (int s = 0; s < N; ++s) {
      if (static_cast<u32>(w[s] >> 32) != flag) late = s;
    }
    if (late < 0) return;
    if (gives_up(ctx, ++polls, start, where(late), Cmp::eq, static_cast<u64>(flag) << 32, w[late], site)) return;
    reload();
  }
}

// A tile of 16-bit values as the words' 32-bit halves: pair k of a thread is its slots
// 2k and 2k + 1, two consecutive elements (kVec even), so the pairs form a tile of half
// the size with half the vector width, whose element w is word w.
template <class L>
using PairLayout = tile::Layout<L::kSize / 2, L::kThreads, L::kVec / 2>;

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
// aligned. 16-bit values go two to a word (p[elem(s) / 2]).
template <class L, class T>
IRIS_DEVICE IRIS_FORCEINLINE void store_flagged(u64* p, const T (&r)[L::kPerThread], long long valid, u32 flag) {
  constexpr int V = L::kVec;
  if constexpr (sizeof(T) == 2) {
    if constexpr (V % 2 == 0) {
      using P = iris::device::detail::PairLayout<L>;
      u32 pairs[P::kPerThread];
#pragma unroll
      for (int k = 0; k < P::kPerThread; ++k) {
        // Past the last valid value the half is 0, whatever the register holds.
        pairs[k] = iris::device::detail::pack_pair(r[2 * k], L::elem(2 * k + 1) < valid ? r[2 * k + 1] : T(0));
      }
      store_flagged<P>(p, pairs, (valid + 1) / 2, flag);
    } else {
      // One element a slot, thread t's beside thread t + 1's: even threads store both.
#pragma unroll
      for (int s = 0; s < L::kPerThread; ++s) {
        const u32 mine = iris::device::detail::pack_pair(r[s], r[s]);
        const u32 theirs = __shfl_xor_sync(0xffffffffu, mine, 1);
        const long long e = L::elem(s);
        if ((threadIdx.x & 1) == 0 && e < valid) {
          const u32 high = e + 1 < valid ? theirs << 16 : 0u;  // past the last valid value: 0
          iris::device::detail::word_store(p + e / 2, iris::device::detail::flag_word((mine & 0xffffu) | high, flag));
        }
      }
    }
    return;
  }
#if !IRIS_HIP_COMPILER
  if constexpr (iris::device::detail::kWarpWords<L>) {
    if (valid >= L::kSize && reinterpret_cast<unsigned long long>(p) % 16 == 0) {
      using Bits = iris::device::detail::PairBits<T>;
      constexpr int H = V / 2;  // pairs a thread holds per chunk; accesses a warp makes per chunk
      const int lane = static_cast<int>(threadIdx.x) & 31;
#pragma unroll
      for (int c = 0; c < L::kChunks; ++c) {
        u64* q = p + (static_cast<long long>(c) * L::kThreads + (static_cast<int>(threadIdx.x) & ~31)) * V + 2 * lane;
#pragma unroll
        for (int i = 0; i < H; ++i) {
          // Lane l stores elements 64 i + 2 l and the next: pair (l % H) of lane (64 i + 2 l) / V.
          const int from = (64 * i + 2 * lane) / V;
          Bits got = 0;
#pragma unroll
          for (int k = 0; k < H; ++k) {
            const Bits x = __shfl_sync(0xffffffffu, iris::device::detail::pack_pair(r[c * V + 2 * k], r[c * V + 2 * k + 1]), from);
            if (k == lane % H) got = x;
          }
          T a, b;
          iris::device::detail::unpack_pair(got, a, b);
          iris::device::detail::word_store2(q + 64 * i, iris::device::detail::flag_word(a, flag), iris::device::detail::flag_word(b, flag));
        }
      }
      return;
    }
  }
#endif
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
  if constexpr (sizeof(T) == 2 && L::kVec % 2 == 0) {
    // Two to a word (store_flagged's layout): the pairs' words, then each half where
    // its element is valid.
    using P = iris::device::detail::PairLayout<L>;
    u32 pairs[P::kPerThread];
    load_flagged<P>(ctx, pairs, p, (valid + 1) / 2, flag, site);
#pragma unroll
    for (int k = 0; k < P::kPerThread; ++k) {
      iris::device::detail::unpack_pair(pairs[k], r[2 * k], r[2 * k + 1]);
      if (L::elem(2 * k + 1) >= valid) r[2 * k + 1] = T(0);
    }
    return;
  }
  u64 w[L::kPerThread];
  const u64 ready = static_cast<u64>(flag) << 32;
#if !IRIS_HIP_COMPILER
  if constexpr (iris::device::detail::kWarpWords<L>) {
    if (valid >= L::kSize && reinterpret_cast<unsigned long long>(p) % 16 == 0) {
      // The words as store_flagged's whole-tile path lays them over a warp's lanes
      // (w[2 (c H + i)] and the next: words 64 i + 2 lane of chunk c's warp span), polled
      // pair by pair, then moved back to the lanes whose elements they are.
      using Bits = iris::device::detail::PairBits<T>;
      constexpr int V = L::kVec, H = V / 2;
      const int lane = static_cast<int>(threadIdx.x) & 31;
      auto at = [&](int c, int i) {
        return p + (static_cast<long long>(c) * L::kThreads + (static_cast<int>(threadIdx.x) & ~31)) * V + 64 * i + 2 * lane;
      };
#pragma unroll
      for (int c = 0; c < L::kChunks; ++c) {
#pragma unroll
        for (int i = 0; i < H; ++i) iris::device::detail::word_load2(at(c, i), w[2 * (c * H + i)], w[2 * (c * H + i) + 1]);
      }
      iris::device::detail::poll_words(
          ctx, w, flag, site, [&](int s) { return at(s / 2 / H, s / 2 % H) + s % 2; },
          [&] {
#pragma unroll
            for (int s = 0; s < L::kPerThread; s += 2) {
              if (static_cast<u32>(w[s] >> 32) != flag || static_cast<u32>(w[s + 1] >> 32) != flag) {
                iris::device::detail::word_load2(at(s / 2 / H, s / 2 % H), w[s], w[s + 1]);
              }
            }
          });
      // Lane l's pair k (its elements l V + 2 k and the next) is word pair ((l V + 2 k) %
      // 64) / 2 of access (l V) / 64.
      const int want = lane * V / 64;
#pragma unroll
      for (int c = 0; c < L::kChunks; ++c) {
#pragma unroll
        for (int k = 0; k < H; ++k) {
          const int from = (lane * V + 2 * k) % 64 / 2;
          Bits got = 0;
#pragma unroll
          for (int i = 0; i < H; ++i) {
            const int s = 2 * (c * H + i);
            const Bits x = __shfl_sync(0xffffffffu,
                                       iris::device::detail::pack_pair(iris::device::detail::flag_value<T>(w[s]),
                                                                       iris::device::detail::flag_value<T>(w[s + 1])),
                                       from);
            if (i == want) got = x;
          }
          iris::device::detail::unpack_pair(got, r[c * V + 2 * k], r[c * V + 2 * k + 1]);
        }
      }
      return;
    }
  }
#endif
  // A word a slot: the element's own, or for a 16-bit element alone in its slot (kVec
  // 1) the word of its pair, whose half e % 2 it takes.
  constexpr bool kHalves = sizeof(T) == 2;
  const auto word = [&](long long e) { return p + (kHalves ? e / 2 : e); };
#pragma unroll
  for (int s = 0; s < L::kPerThread; ++s) {
    const long long e = L::elem(s);
    w[s] = e < valid ? iris::device::detail::word_load(word(e)) : ready;
  }
  iris::device::detail::poll_words(
      ctx, w, flag, site, [&](int s) { return word(L::elem(s)); },
      [&] {
#pragma unroll
        for (int s = 0; s < L::kPerThread; ++s) {
          if (static_cast<u32>(w[s] >> 32) != flag) w[s] = iris::device::detail::word_load(word(L::elem(s)));
        }
      });
#pragma unroll
  for (int s = 0; s < L::kPerThread; ++s) {
    const long long e = L::elem(s);
    r[s] = e < valid ? iris::device::detail::flag_value<T>(kHalves && e % 2 ? w[s] >> 16 : w[s]) : T(0);
  }
}

}  // namespace tile
}  // namespace iris::device
#endif  // IRIS_GPU_COMPILER
