// Element types of heap tensors, and the 16-bit float types on the host side.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace iris {

enum class DType { f32, f16, bf16, i32, i64, u32, u64 };

std::string_view dtype_name(DType t);
std::size_t dtype_size(DType t);
bool dtype_is_float(DType t);

// IEEE binary16, stored as bits; conversions round to nearest even.
struct half {
  std::uint16_t bits = 0;
  half() = default;
  explicit half(float f);
  explicit operator float() const;
};

// bfloat16 (the upper half of a binary32), stored as bits; rounds to nearest even.
struct bfloat16 {
  std::uint16_t bits = 0;
  bfloat16() = default;
  explicit bfloat16(float f);
  explicit operator float() const;
};

template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::f32; };
template <> struct dtype_of<half> { static constexpr DType value = DType::f16; };
template <> struct dtype_of<bfloat16> { static constexpr DType value = DType::bf16; };
template <> struct dtype_of<std::int32_t> { static constexpr DType value = DType::i32; };
template <> struct dtype_of<std::int64_t> { static constexpr DType value = DType::i64; };
template <> struct dtype_of<std::uint32_t> { static constexpr DType value = DType::u32; };
template <> struct dtype_of<std::uint64_t> { static constexpr DType value = DType::u64; };
template <class T> inline constexpr DType dtype_of_v = dtype_of<T>::value;

// The bit pattern of `value` converted to dtype t, in the low dtype_size(t) bytes;
// iris::Error where `value` is not a value of t (an integer type takes finite whole
// numbers in its range; a float type, numbers within its finite range, or inf / NaN).
std::uint64_t dtype_bits(DType t, double value);

}  // namespace iris
