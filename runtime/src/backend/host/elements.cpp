// Elements of the host backend's interpreter (see elements.hpp).
#include "backend/host/elements.hpp"

#include <bit>
#include <cmath>
#include <limits>

#include "iris/dtype.hpp"
#include "iris/error.hpp"

namespace iris::host {

namespace tir = irisc::tir;
using i64 = std::int64_t;
using u64 = std::uint64_t;

// ---- scalars ------------------------------------------------------------------------------

i64 norm(ScalarType t, i64 x) {
  switch (t) {
    case ScalarType::i32: return static_cast<std::int32_t>(static_cast<std::uint32_t>(x));
    case ScalarType::u32: return x & 0xffffffffll;
    case ScalarType::boolean: return x != 0;
    default: return x;
  }
}

float round_to(ScalarType t, float f) {
  if (t == ScalarType::f16) return static_cast<float>(half(f));
  if (t == ScalarType::bf16) return static_cast<float>(bfloat16(f));
  return f;
}

// float -> integer as CUDA's cvt.rzi does: toward zero, saturating, NaN -> 0.
static i64 float_to_int(ScalarType to, float x) {
  if (std::isnan(x)) return 0;
  const double d = std::trunc(static_cast<double>(x));
  auto clamp = [&](double lo, double hi) { return d < lo ? lo : d > hi ? hi : d; };
  switch (to) {
    case ScalarType::i32: return static_cast<i64>(clamp(-2147483648.0, 2147483647.0));
    case ScalarType::u32: return static_cast<i64>(clamp(0.0, 4294967295.0));
    case ScalarType::u64: {
      if (d <= 0) return 0;
      if (d >= 18446744073709551615.0) return static_cast<i64>(~0ull);
      return static_cast<i64>(static_cast<u64>(d));
    }
    default: {
      if (d <= -9223372036854775808.0) return std::numeric_limits<i64>::min();
      if (d >= 9223372036854775807.0) return std::numeric_limits<i64>::max();
      return static_cast<i64>(d);
    }
  }
}

S cast(ScalarType to, ScalarType from, S a) {
  if (to == from) return a;
  S r;
  if (is_float(from)) {
    if (is_float(to)) r.f = round_to(to, a.f);
    else if (to == ScalarType::boolean) r.i = a.f != 0;
    else r.i = float_to_int(to, a.f);
    return r;
  }
  if (is_float(to)) {
    r.f = round_to(to, from == ScalarType::u64 ? static_cast<float>(static_cast<u64>(a.i)) : static_cast<float>(a.i));
    return r;
  }
  r.i = norm(to, a.i);
  return r;
}

// ---- memory ---------------------------------------------------------------------------------
// Tensor elements are read and written as relaxed atomics: ranks are threads, and a
// GPU's plain accesses to a peer's heap are not a data race either.

S read(ScalarType t, const void* p) {
  S r;
  switch (t) {
    case ScalarType::f32: r.f = std::bit_cast<float>(load_bits<std::uint32_t>(p)); break;
    case ScalarType::f16: {
      half h;
      h.bits = load_bits<std::uint16_t>(p);
      r.f = static_cast<float>(h);
      break;
    }
    case ScalarType::bf16: {
      bfloat16 h;
      h.bits = load_bits<std::uint16_t>(p);
      r.f = static_cast<float>(h);
      break;
    }
    case ScalarType::i32: r.i = static_cast<std::int32_t>(load_bits<std::uint32_t>(p)); break;
    case ScalarType::u32: r.i = load_bits<std::uint32_t>(p); break;
    case ScalarType::boolean: r.i = load_bits<std::uint8_t>(p) != 0; break;
    default: r.i = static_cast<i64>(load_bits<u64>(p)); break;
  }
  return r;
}

static std::uint16_t half_bits(ScalarType t, float f) {
  return t == ScalarType::f16 ? half(f).bits : bfloat16(f).bits;
}

void write(ScalarType t, void* p, S v) {
  switch (t) {
    case ScalarType::f32: store_bits<std::uint32_t>(p, std::bit_cast<std::uint32_t>(v.f)); break;
    case ScalarType::f16:
    case ScalarType::bf16: store_bits<std::uint16_t>(p, half_bits(t, v.f)); break;
    case ScalarType::i32:
    case ScalarType::u32: store_bits<std::uint32_t>(p, static_cast<std::uint32_t>(v.i)); break;
    case ScalarType::boolean: store_bits<std::uint8_t>(p, v.i != 0); break;
    default: store_bits<u64>(p, static_cast<u64>(v.i)); break;
  }
}

std::memory_order memory_order(tir::Order o) {
  switch (o) {
    case tir::Order::relaxed: return std::memory_order_relaxed;
    case tir::Order::acquire: return std::memory_order_acquire;
    case tir::Order::release: return std::memory_order_release;
    case tir::Order::acq_rel: return std::memory_order_acq_rel;
  }
  return std::memory_order_seq_cst;
}
static std::memory_order load_order(std::memory_order mo) {
  return mo == std::memory_order_release || mo == std::memory_order_relaxed ? std::memory_order_relaxed
                                                                             : std::memory_order_acquire;
}
std::memory_order store_order(std::memory_order mo) {
  return mo == std::memory_order_relaxed ? std::memory_order_relaxed : std::memory_order_release;
}

bool less(ScalarType t, S a, S b) {
  if (is_float(t)) return a.f < b.f;
  if (t == ScalarType::u64) return static_cast<u64>(a.i) < static_cast<u64>(b.i);
  return a.i < b.i;
}

// An integer atomic on a word of U (uint32_t or uint64_t).
template <class U>
static S int_atomic(ScalarType t, void* p, tir::AtomicOp op, std::memory_order mo, S x, S desired) {
  std::atomic_ref<U> ref(*static_cast<U*>(p));
  const U v = static_cast<U>(x.i);
  U old = 0;
  switch (op) {
    case tir::AtomicOp::add: old = ref.fetch_add(v, mo); break;
    case tir::AtomicOp::sub: old = ref.fetch_sub(v, mo); break;
    case tir::AtomicOp::and_: old = ref.fetch_and(v, mo); break;
    case tir::AtomicOp::or_: old = ref.fetch_or(v, mo); break;
    case tir::AtomicOp::xor_: old = ref.fetch_xor(v, mo); break;
    case tir::AtomicOp::xchg: old = ref.exchange(v, mo); break;
    case tir::AtomicOp::cas: {
      old = v;
      ref.compare_exchange_strong(old, static_cast<U>(desired.i), mo, load_order(mo));
      break;
    }
    case tir::AtomicOp::min:
    case tir::AtomicOp::max: {
      old = ref.load(load_order(mo));  // the order holds when nothing changes, too
      for (;;) {
        S o{norm(t, static_cast<i64>(old)), 0};
        const bool keep = op == tir::AtomicOp::min ? !less(t, x, o) : !less(t, o, x);
        if (keep || ref.compare_exchange_weak(old, v, mo, load_order(mo))) break;
      }
      break;
    }
  }
  return S{norm(t, static_cast<i64>(old)), 0};
}

// A float atomic: a compare-and-swap loop on the element's bits.
template <class U>
static S float_atomic(ScalarType t, void* p, tir::AtomicOp op, std::memory_order mo, S x, S desired) {
  std::atomic_ref<U> ref(*static_cast<U*>(p));
  auto value = [&](U bits) {
    S s;
    s.i = 0;
    if constexpr (sizeof(U) == 4) {
      s.f = std::bit_cast<float>(bits);
    } else {
      s = read(t, &bits);
    }
    return s;
  };
  auto bits_of = [&](float f) -> U {
    if constexpr (sizeof(U) == 4) return std::bit_cast<std::uint32_t>(f);
    else return half_bits(t, f);
  };
  U old = ref.load(load_order(mo));  // the order holds when the compare fails, too
  for (;;) {
    const float o = value(old).f;
    float n = o;
    switch (op) {
      case tir::AtomicOp::add: n = round_to(t, o + x.f); break;
      case tir::AtomicOp::sub: n = round_to(t, o - x.f); break;
      case tir::AtomicOp::min: n = x.f < o ? x.f : o; break;
      case tir::AtomicOp::max: n = x.f > o ? x.f : o; break;
      case tir::AtomicOp::xchg: n = x.f; break;
      case tir::AtomicOp::cas:
        if (old != bits_of(x.f)) return value(old);
        n = desired.f;
        break;
      default: throw Error("a bitwise atomic on floats (irisc rejects these)");
    }
    if (ref.compare_exchange_weak(old, bits_of(n), mo, load_order(mo))) return value(old);
  }
}

S atomic(ScalarType t, void* p, tir::AtomicOp op, tir::Order order, S x, S desired) {
  const std::memory_order mo = memory_order(order);
  switch (t) {
    case ScalarType::f32: return float_atomic<std::uint32_t>(t, p, op, mo, x, desired);
    case ScalarType::f16:
    case ScalarType::bf16: return float_atomic<std::uint16_t>(t, p, op, mo, x, desired);
    case ScalarType::i32:
    case ScalarType::u32: return int_atomic<std::uint32_t>(t, p, op, mo, x, desired);
    case ScalarType::boolean: throw Error("an atomic on bool (irisc rejects these)");
    default: return int_atomic<u64>(t, p, op, mo, x, desired);
  }
}

}  // namespace iris::host
