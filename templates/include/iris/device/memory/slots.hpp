// Slots: values whose arrival is their own signal. A slot of f32, f16 or bf16 is empty
// when every bit is set (a NaN that no send writes: a value with all bits set goes with
// its sign bit clear) and holds a value otherwise. irisc emits these for
// `send(slots[j], v, to: r)` and `receive(slots[j])`: a send stores the tile's values
// as they are, with the data's own accesses (16 bytes where whole and aligned); a
// receive polls this rank's slots until none is empty, returns the values and empties
// the slots again, for the next send. No flag and no fence travel beside the data, and
// the data is not widened: a message costs one trip over the link at its own size.
// Each 4-byte piece of a store lands whole, so a slot read not empty holds the value
// sent; a piece still in flight reads empty and is polled again.
#pragma once

#include "../arch.hpp"
#include "../context.hpp"
#include "model.hpp"
#include "signal.hpp"
#include "../tile/tile.hpp"

#if IRIS_GPU_COMPILER
namespace iris::device {
namespace detail {

inline constexpr u32 kEmptyWord = 0xffffffffu;

// Whether a 32-bit piece of slots holds an empty slot: for 16-bit values either half.
template <class T>
IRIS_DEVICE IRIS_FORCEINLINE bool holds_empty(u32 w) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4, "slots hold f32, f16 or bf16");
  if constexpr (sizeof(T) == 2) return (w & 0xffffu) == 0xffffu || (w >> 16) == 0xffffu;
  return w == kEmptyWord;
}

// The bits a send writes for v: v's own, but never all set (that would read as empty).
template <class T>
IRIS_DEVICE IRIS_FORCEINLINE typename Pick<sizeof(T) == 2, unsigned short, u32>::type sent_bits(T v) {
  using B = typename Pick<sizeof(T) == 2, unsigned short, u32>::type;
  B b;
  memcpy(&b, &v, sizeof b);
  return b == static_cast<B>(~B(0)) ? static_cast<B>(b >> 1) : b;
}

}  // namespace detail

namespace tile {

// p[elem(s)] = r[s] for elem(s) < valid, as slots (p may be a peer's). Whole, aligned
// tiles of 4-byte chunks store each chunk with the widest access it allows.
template <class L, class T>
IRIS_DEVICE IRIS_FORCEINLINE void send(T* p, const T (&r)[L::kPerThread], long long valid) {
  constexpr int V = L::kVec;
  constexpr int kBytes = V * static_cast<int>(sizeof(T));
  if constexpr (kBytes % 4 == 0) {
    if (whole_and_aligned<L>(p, valid)) {
      constexpr int W = kBytes / 4;
#pragma unroll
      for (int c = 0; c < L::kChunks; ++c) {
        u32 w[W];
        if constexpr (sizeof(T) == 2) {
#pragma unroll
          for (int i = 0; i < W; ++i) {
            w[i] = static_cast<u32>(iris::device::detail::sent_bits(r[c * V + 2 * i])) |
                   (static_cast<u32>(iris::device::detail::sent_bits(r[c * V + 2 * i + 1])) << 16);
          }
        } else {
#pragma unroll
          for (int i = 0; i < W; ++i) w[i] = iris::device::detail::sent_bits(r[c * V + i]);
        }
        iris::device::detail::slot_store<W>(reinterpret_cast<u32*>(p + L::elem(c * V)), w);
      }
      return;
    }
  }
#pragma unroll
  for (int s = 0; s < L::kPerThread; ++s) {
    const long long e = L::elem(s);
    if (e >= valid || !L::holds(s)) continue;
    if constexpr (sizeof(T) == 2) {
      iris::device::detail::slot_store16(reinterpret_cast<unsigned short*>(p + e), iris::device::detail::sent_bits(r[s]));
    } else {
      const u32 w = iris::device::detail::sent_bits(r[s]);
      iris::device::detail::slot_store<1>(reinterpret_cast<u32*>(p + e), &w);
    }
  }
}

// r[s] = the value of slot p[elem(s)] once it holds one, for elem(s) < valid (else 0);
// then the slots are empty again. Every pass loads all the chunks still holding an
// empty slot, back to back, so a pass costs one trip to memory however many are late.
// Gives up as wait_until(ctx, ...) does, recording the late piece in the report.
template <class L, class T>
IRIS_DEVICE void receive(const Context& ctx, T (&r)[L::kPerThread], T* p, long long valid, WaitSite site = {}) {
  constexpr int V = L::kVec;
  constexpr int kBytes = V * static_cast<int>(sizeof(T));
  u32 polls = 0;
  u64 start = 0;
  if constexpr (kBytes % 4 == 0) {
    if (whole_and_aligned<L>(p, valid)) {
      constexpr int W = kBytes / 4;
      u32 w[L::kChunks][W];
      const auto at = [&](int c) { return reinterpret_cast<u32*>(p + L::elem(c * V)); };
#pragma unroll
      for (int c = 0; c < L::kChunks; ++c) iris::device::detail::slot_load<W>(at(c), w[c]);
      for (;;) {
        int late = -1, piece = 0;
#pragma unroll
        for (int c = 0; c < L::kChunks; ++c) {
#pragma unroll
          for (int i = 0; i < W; ++i) {
            if (iris::device::detail::holds_empty<T>(w[c][i])) late = c, piece = i;
          }
        }
        if (late < 0) break;
        if (iris::device::detail::gives_up(ctx, ++polls, start, static_cast<const u32*>(at(late) + piece), Cmp::ne, iris::device::detail::kEmptyWord,
                             w[late][piece], site)) {
          break;
        }
#pragma unroll
        for (int c = 0; c < L::kChunks; ++c) {
          bool empty = false;
#pragma unroll
          for (int i = 0; i < W; ++i) empty = empty || iris::device::detail::holds_empty<T>(w[c][i]);
          if (empty) iris::device::detail::slot_load<W>(at(c), w[c]);
        }
      }
      u32 none[W];
#pragma unroll
      for (int i = 0; i < W; ++i) none[i] = iris::device::detail::kEmptyWord;
#pragma unroll
      for (int c = 0; c < L::kChunks; ++c) {
        memcpy(&r[c * V], w[c], kBytes);
        iris::device::detail::slot_store<W>(at(c), none);
      }
      return;
    }
  }
  // Slot by slot: a ragged or unaligned tile, or 16-bit values one to a thread's chunk.
  using B = typename iris::device::detail::Pick<sizeof(T) == 2, unsigned short, u32>::type;
  const auto read = [&](long long e) -> B {
    if constexpr (sizeof(T) == 2) {
      return iris::device::detail::slot_load16(reinterpret_cast<const unsigned short*>(p + e));
    } else {
      u32 w;
      iris::device::detail::slot_load<1>(reinterpret_cast<const u32*>(p + e), &w);
      return w;
    }
  };
  constexpr B kEmpty = static_cast<B>(~B(0));
  B b[L::kPerThread];
#pragma unroll
  for (int s = 0; s < L::kPerThread; ++s) {
    const long long e = L::elem(s);
    b[s] = e < valid && L::holds(s) ? read(e) : B(0);
  }
  for (;;) {
    int late = -1;
#pragma unroll
    for (int s = 0; s < L::kPerThread; ++s) {
      if (b[s] == kEmpty) late = s;
    }
    if (late < 0) break;
    if (iris::device::detail::gives_up(ctx, ++polls, start, reinterpret_cast<const u32*>(p + L::elem(late)), Cmp::ne,
                         static_cast<u32>(kEmpty), static_cast<u32>(b[late]), site)) {
      break;
    }
#pragma unroll
    for (int s = 0; s < L::kPerThread; ++s) {
      if (b[s] == kEmpty) b[s] = read(L::elem(s));
    }
  }
#pragma unroll
  for (int s = 0; s < L::kPerThread; ++s) {
    const long long e = L::elem(s);
    memcpy(&r[s], &b[s], sizeof(T));
    if (e < valid && L::holds(s)) {
      if constexpr (sizeof(T) == 2) {
        iris::device::detail::slot_store16(reinterpret_cast<unsigned short*>(p + e), kEmpty);
      } else {
        const u32 none = iris::device::detail::kEmptyWord;
        iris::device::detail::slot_store<1>(reinterpret_cast<u32*>(p + e), &none);
      }
    }
  }
}

}  // namespace tile
}  // namespace iris::device
#endif  // IRIS_GPU_COMPILER
