// DType names/sizes and host conversions for half and bfloat16.
#include "iris/dtype.hpp"

#include <cmath>
#include <string>

#include "iris/error.hpp"

namespace iris {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::u32: return "u32";
    case DType::u64: return "u64";
  }
  return "?";
}

std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::f16:
    case DType::bf16: return 2;
    case DType::f32:
    case DType::i32:
    case DType::u32: return 4;
    case DType::i64:
    case DType::u64: return 8;
  }
  return 0;
}

bool dtype_is_float(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }

namespace {

std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace

bfloat16::bfloat16(float f) {
  std::uint32_t u = float_bits(f);
  if (std::isnan(f)) {
    bits = static_cast<std::uint16_t>((u >> 16) | 0x40);  // keep it a (quiet) NaN
    return;
  }
  u += 0x7FFF + ((u >> 16) & 1);  // round to nearest even
  bits = static_cast<std::uint16_t>(u >> 16);
}

bfloat16::operator float() const { return bits_float(static_cast<std::uint32_t>(bits) << 16); }

half::half(float f) {
  std::uint32_t u = float_bits(f);
  std::uint32_t sign = (u >> 16) & 0x8000;
  std::uint32_t exp = (u >> 23) & 0xFF;
  std::uint32_t mant = u & 0x7FFFFF;
  if (exp == 0xFF) {  // inf / nan
    bits = static_cast<std::uint16_t>(sign | 0x7C00 | (mant ? 0x200 : 0));
    return;
  }
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) {  // overflow -> inf
    bits = static_cast<std::uint16_t>(sign | 0x7C00);
    return;
  }
  if (e <= 0) {  // subnormal or zero
    if (e < -10) {
      bits = static_cast<std::uint16_t>(sign);
      return;
    }
    mant |= 0x800000;
    std::uint32_t shift = static_cast<std::uint32_t>(14 - e);
    std::uint32_t h = mant >> shift;
    std::uint32_t rem = mant & ((1u << shift) - 1);
    std::uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (h & 1))) ++h;
    bits = static_cast<std::uint16_t>(sign | h);
    return;
  }
  std::uint32_t h = (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
  std::uint32_t rem = mant & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;  // may carry into the exponent: correct
  bits = static_cast<std::uint16_t>(sign | h);
}

half::operator float() const {
  std::uint32_t sign = (bits & 0x8000u) << 16;
  std::uint32_t exp = (bits >> 10) & 0x1F;
  std::uint32_t mant = bits & 0x3FF;
  if (exp == 0) {
    if (mant == 0) return bits_float(sign);
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return bits_float(sign | 0x7F800000 | (mant << 13));
  return bits_float(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

namespace {

// `value` must be a value of `t`: an integer type takes finite whole numbers in its
// range, a float type any number whose conversion stays finite (or an infinity or NaN
// asked for as such). full<i32>(1e30) was filled with whatever the cast gave.
void require_representable(DType t, double value) {
  const auto refuse = [&](const std::string& why) {
    throw Error(std::to_string(value) + " is not a value of " + std::string(dtype_name(t)) + ": " + why);
  };
  double lo = 0, hi = 0;  // integers: [lo, hi)
  switch (t) {
    case DType::f32:
    case DType::f16:
    case DType::bf16: {
      const double largest = t == DType::f32 ? 3.4028234663852886e38 : t == DType::f16 ? 65504.0 : 3.3895313892515355e38;
      if (std::isfinite(value) && std::fabs(value) > largest) refuse("its largest finite value is " + std::to_string(largest));
      return;
    }
    case DType::i32: lo = -2147483648.0, hi = 2147483648.0; break;
    case DType::u32: lo = 0, hi = 4294967296.0; break;
    case DType::i64: lo = -9223372036854775808.0, hi = 9223372036854775808.0; break;
    case DType::u64: lo = 0, hi = 18446744073709551616.0; break;
  }
  if (!std::isfinite(value) || value != std::trunc(value)) refuse("an integer type takes whole numbers");
  if (value < lo || value >= hi) refuse("outside its range");
}

}  // namespace

std::uint64_t dtype_bits(DType t, double value) {
  require_representable(t, value);
  switch (t) {
    case DType::f32: return float_bits(static_cast<float>(value));
    case DType::f16: return half(static_cast<float>(value)).bits;
    case DType::bf16: return bfloat16(static_cast<float>(value)).bits;
    case DType::i32: return static_cast<std::uint32_t>(static_cast<std::int32_t>(value));
    case DType::u32: return static_cast<std::uint32_t>(value);
    case DType::i64: return static_cast<std::uint64_t>(static_cast<std::int64_t>(value));
    case DType::u64: return static_cast<std::uint64_t>(value);
  }
  return 0;
}

}  // namespace iris
