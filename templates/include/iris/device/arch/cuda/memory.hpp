// The CUDA spellings of the memory operations memory/ builds on, in inline PTX so that
// the emitted .sem and .scope are exactly the ones asked for, whatever CUDA's intrinsics
// default to: fences, single-copy-atomic loads and stores, atomics and reductions, the
// data-and-flag words' volatile accesses, and a wait's sleep. arch/hip/memory.hpp spells
// the same names for AMDGPU. Included through arch/memory.hpp by memory/model.hpp, after
// its word traits, on a CUDA device compiler.
#pragma once

#include "../../arch.hpp"
#include "../../context.hpp"

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

// acq_rel (not sc) is enough for the release/acquire flag protocols this library
// builds, and is cheaper.
template <Scope S>
IRIS_DEVICE IRIS_FORCEINLINE void fence_acq_rel() {
  if constexpr (S == Scope::block) {
    asm volatile("fence.acq_rel.cta;" ::: "memory");
  } else if constexpr (S == Scope::device) {
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
  } else {
    asm volatile("fence.acq_rel.sys;" ::: "memory");
  }
}

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

// `red` rather than `atom`: the old value is not needed, and a reduction
// lets the SM move on without waiting for the remote round trip.
#define IRIS_DETAIL_RED_STMT(SEM, SCOPE, OPTYPE, C) \
  asm volatile("red" SEM SCOPE ".global" OPTYPE " [%0], %1;" ::"l"(p), C(v) : "memory")

template <Order O, Scope S>
IRIS_DEVICE IRIS_FORCEINLINE void red_add(u32* p, u32 v) {
  IRIS_DETAIL_PTX_ORDER_SCOPE(O, S, IRIS_DETAIL_RED_STMT, ".add.u32", "r")
}
template <Order O, Scope S>
IRIS_DEVICE IRIS_FORCEINLINE void red_add(i32* p, i32 v) {
  IRIS_DETAIL_PTX_ORDER_SCOPE(O, S, IRIS_DETAIL_RED_STMT, ".add.s32", "r")
}
template <Order O, Scope S>
IRIS_DEVICE IRIS_FORCEINLINE void red_add(u64* p, u64 v) {
  IRIS_DETAIL_PTX_ORDER_SCOPE(O, S, IRIS_DETAIL_RED_STMT, ".add.u64", "l")
}
// PTX has no red.add.s64; two's-complement addition is sign-agnostic.
template <Order O, Scope S>
IRIS_DEVICE IRIS_FORCEINLINE void red_add(i64* p, i64 v) {
  IRIS_DETAIL_PTX_ORDER_SCOPE(O, S, IRIS_DETAIL_RED_STMT, ".add.u64", "l")
}

template <Order O, Scope S>
IRIS_DEVICE IRIS_FORCEINLINE void red_add(float* p, float v) {
  IRIS_DETAIL_PTX_ORDER_SCOPE(O, S, IRIS_DETAIL_RED_STMT, ".add.f32", "f")
}

#undef IRIS_DETAIL_RED_STMT

// p[0] += v0, p[1] += v1 as one vector reduction (sm_90's red.global.add.v2.f32; p is
// 8-byte aligned); two scalar ones before sm_90.
#define IRIS_DETAIL_RED_V2_STMT(SEM, SCOPE, OPTYPE, C) \
  asm volatile("red" SEM SCOPE ".global" OPTYPE " [%0], {%1, %2};" ::"l"(p), C(v0), C(v1) : "memory")

template <Order O, Scope S>
IRIS_DEVICE IRIS_FORCEINLINE void red_add_v2(float* p, float v0, float v1) {
#if __CUDA_ARCH__ >= 900
  IRIS_DETAIL_PTX_ORDER_SCOPE(O, S, IRIS_DETAIL_RED_V2_STMT, ".add.v2.f32", "f")
#else
  red_add<O, S>(p, v0);
  red_add<O, S>(p + 1, v1);
#endif
}

#undef IRIS_DETAIL_RED_V2_STMT

IRIS_DEVICE IRIS_FORCEINLINE void nanosleep(u32 ns) { asm volatile("nanosleep.u32 %0;" ::"r"(ns)); }

// Data-and-flag words: volatile, so every poll reads memory, and a 16-byte access moves
// two words at once.
IRIS_DEVICE IRIS_FORCEINLINE u64 word_load(const u64* p) {
  u64 w;
  asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(w) : "l"(p) : "memory");
  return w;
}
IRIS_DEVICE IRIS_FORCEINLINE void word_store(u64* p, u64 w) {
  asm volatile("st.volatile.global.u64 [%0], %1;" ::"l"(p), "l"(w) : "memory");
}
IRIS_DEVICE IRIS_FORCEINLINE void word_store2(u64* p, u64 a, u64 b) {
  asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
}
IRIS_DEVICE IRIS_FORCEINLINE void word_load2(const u64* p, u64& a, u64& b) {
  asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
}

// Slots (memory/slots.hpp): volatile, so every poll reads memory; N 32-bit words at p
// (aligned to the access) with the widest accesses N allows, or one 16-bit value.
template <int N>
IRIS_DEVICE IRIS_FORCEINLINE void slot_load(const u32* p, u32* w) {
  if constexpr (N % 4 == 0) {
#pragma unroll
    for (int i = 0; i < N; i += 4) {
      asm volatile("ld.volatile.global.v4.b32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(w[i]), "=r"(w[i + 1]), "=r"(w[i + 2]), "=r"(w[i + 3])
                   : "l"(p + i)
                   : "memory");
    }
  } else if constexpr (N % 2 == 0) {
#pragma unroll
    for (int i = 0; i < N; i += 2) {
      asm volatile("ld.volatile.global.v2.b32 {%0, %1}, [%2];" : "=r"(w[i]), "=r"(w[i + 1]) : "l"(p + i) : "memory");
    }
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("ld.volatile.global.b32 %0, [%1];" : "=r"(w[i]) : "l"(p + i) : "memory");
  }
}
template <int N>
IRIS_DEVICE IRIS_FORCEINLINE void slot_store(u32* p, const u32* w) {
  if constexpr (N % 4 == 0) {
#pragma unroll
    for (int i = 0; i < N; i += 4) {
      asm volatile("st.volatile.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p + i), "r"(w[i]), "r"(w[i + 1]),
                   "r"(w[i + 2]), "r"(w[i + 3])
                   : "memory");
    }
  } else if constexpr (N % 2 == 0) {
#pragma unroll
    for (int i = 0; i < N; i += 2) {
      asm volatile("st.volatile.global.v2.b32 [%0], {%1, %2};" ::"l"(p + i), "r"(w[i]), "r"(w[i + 1]) : "memory");
    }
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("st.volatile.global.b32 [%0], %1;" ::"l"(p + i), "r"(w[i]) : "memory");
  }
}
IRIS_DEVICE IRIS_FORCEINLINE unsigned short slot_load16(const unsigned short* p) {
  unsigned short h;
  asm volatile("ld.volatile.global.b16 %0, [%1];" : "=h"(h) : "l"(p) : "memory");
  return h;
}
IRIS_DEVICE IRIS_FORCEINLINE void slot_store16(unsigned short* p, unsigned short h) {
  asm volatile("st.volatile.global.b16 [%0], %1;" ::"l"(p), "h"(h) : "memory");
}

}  // namespace iris::device::detail
