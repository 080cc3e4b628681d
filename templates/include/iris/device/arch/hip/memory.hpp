// The AMDGPU spellings of the memory operations memory/ builds on (the __hip_atomic
// builtins, LLVM's AMDGPU memory model): fences, single-copy-atomic loads and stores,
// atomics and reductions, the data-and-flag words' accesses, and a wait's sleep.
// arch/cuda/memory.hpp spells the same names in PTX. Included through arch/memory.hpp
// by memory/model.hpp, after its word traits, under HIP.
#pragma once

#include "../../arch.hpp"
#include "../../context.hpp"

namespace iris::device::detail {

template <Scope S>
IRIS_DEVICE IRIS_FORCEINLINE void fence_acq_rel() {
  if constexpr (S == Scope::block) {
    __builtin_amdgcn_fence(__ATOMIC_ACQ_REL, "workgroup");
  } else if constexpr (S == Scope::device) {
    __builtin_amdgcn_fence(__ATOMIC_ACQ_REL, "agent");
  } else {
    __builtin_amdgcn_fence(__ATOMIC_ACQ_REL, "");
  }
}

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

// An atomic add whose result is unused: the AMDGPU backend emits the no-return form.
template <Order O, Scope S, class W>
IRIS_DEVICE IRIS_FORCEINLINE void red_add(W* p, W v) {
  (void)__hip_atomic_fetch_add(amdgcn::global(p), v, hip_order<O>, hip_scope<S>);
}
template <Order O, Scope S>
IRIS_DEVICE IRIS_FORCEINLINE void red_add_v2(float* p, float v0, float v1) {
  red_add<O, S>(p, v0);
  red_add<O, S>(p + 1, v1);
}

// s_sleep 1 waits 64 clocks, about 30 ns at the clocks of gfx90a and gfx942.
IRIS_DEVICE IRIS_FORCEINLINE void nanosleep(u32 ns) {
  for (u32 t = 0; t < ns; t += 32) __builtin_amdgcn_s_sleep(1);
}

// Data-and-flag words, relaxed at system scope: every poll reads memory.
IRIS_DEVICE IRIS_FORCEINLINE u64 word_load(const u64* p) {
  return __hip_atomic_load(amdgcn::global(const_cast<u64*>(p)), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
}
IRIS_DEVICE IRIS_FORCEINLINE void word_store(u64* p, u64 w) {
  __hip_atomic_store(amdgcn::global(p), w, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
}
IRIS_DEVICE IRIS_FORCEINLINE void word_store2(u64* p, u64 a, u64 b) {
  word_store(p, a);
  word_store(p + 1, b);
}
IRIS_DEVICE IRIS_FORCEINLINE void word_load2(const u64* p, u64& a, u64& b) {
  a = word_load(p);
  b = word_load(p + 1);
}

// Slots (memory/slots.hpp), relaxed at system scope: every poll reads memory; 32-bit
// words one at a time, or one 16-bit value.
template <int N>
IRIS_DEVICE IRIS_FORCEINLINE void slot_load(const u32* p, u32* w) {
#pragma unroll
  for (int i = 0; i < N; ++i) w[i] = __hip_atomic_load(amdgcn::global(const_cast<u32*>(p + i)), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
}
template <int N>
IRIS_DEVICE IRIS_FORCEINLINE void slot_store(u32* p, const u32* w) {
#pragma unroll
  for (int i = 0; i < N; ++i) __hip_atomic_store(amdgcn::global(p + i), w[i], __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
}
IRIS_DEVICE IRIS_FORCEINLINE unsigned short slot_load16(const unsigned short* p) {
  return __hip_atomic_load(amdgcn::global(const_cast<unsigned short*>(p)), __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
}
IRIS_DEVICE IRIS_FORCEINLINE void slot_store16(unsigned short* p, unsigned short h) {
  __hip_atomic_store(amdgcn::global(p), h, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
}

}  // namespace iris::device::detail
