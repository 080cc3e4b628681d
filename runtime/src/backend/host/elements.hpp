// Elements of the host backend's interpreter: a scalar of any irisc type, its
// arithmetic conversions, and reads, writes and atomics on tensor memory with the GPU's
// semantics (relaxed atomics for plain accesses, so that ranks as threads do not race
// in C++'s sense).
#pragma once

#include <atomic>
#include <cstdint>

#include "compiler/tir/tir.hpp"

namespace iris::host {

using irisc::ast::ScalarType;
using irisc::tir::is_float;

// A scalar of any type: integers (and bool) in `i`, normalized to their type (i32
// sign-extended, u32 zero-extended, u64 as its bits); floats in `f`, rounded to their
// type (f16 and bf16 values are exact floats).
struct S {
  std::int64_t i = 0;
  float f = 0;
};

// Bytes of one element of `t` (int as i64).
inline int elem_bytes(ScalarType t) { return irisc::tir::byte_size(t); }

std::int64_t norm(ScalarType t, std::int64_t x);  // an integer wrapped to t
float round_to(ScalarType t, float f);            // a float rounded to t
S cast(ScalarType to, ScalarType from, S a);      // as the GPU converts

template <class U>
U load_bits(const void* p, std::memory_order mo = std::memory_order_relaxed) {
  return std::atomic_ref<U>(*static_cast<U*>(const_cast<void*>(p))).load(mo);
}
template <class U>
void store_bits(void* p, U v, std::memory_order mo = std::memory_order_relaxed) {
  std::atomic_ref<U>(*static_cast<U*>(p)).store(v, mo);
}

// Element reads and writes (relaxed atomics), and the atomic operations.
S read(ScalarType t, const void* p);
void write(ScalarType t, void* p, S v);
S atomic(ScalarType t, void* p, irisc::tir::AtomicOp op, irisc::tir::Order order, S x, S desired);

std::memory_order memory_order(irisc::tir::Order o);
std::memory_order store_order(std::memory_order mo);  // a store's: relaxed or release
bool less(ScalarType t, S a, S b);                     // t's order (u64 unsigned)

}  // namespace iris::host
