// Tensor maps: the descriptors the GPU's bulk tensor copy engine (TMA, sm_90+) reads
// tiles of a global tensor by. A kernel takes one by value as a
// `const __grid_constant__ iris::device::TensorMap` parameter; the host encodes it here
// (cuTensorMapEncodeTiled, through the driver table) and passes it like any argument.
//
// Encoding costs microseconds, launches happen far more often: encode_tensor_map keeps
// every map it made, keyed by everything that goes into it (address, dtype, shape,
// strides, box, swizzle), so asking again for the same tile of the same tensor is a
// hash lookup.
#pragma once

#include <array>
#include <string>
#include <cstdint>

#include "iris/dtype.hpp"

namespace iris {

// The driver's CUtensorMap: 128 opaque bytes, 64-byte aligned.
struct alignas(64) TensorMap {
  std::uint64_t opaque[16] = {};
};

enum class TensorMapSwizzle { none, b32, b64, b128 };

struct TensorMapSpec {
  DType dtype = DType::bf16;
  const void* base = nullptr;              // device address, 16-byte aligned
  int rank = 2;                            // 1 .. 5
  std::array<std::uint64_t, 5> dims{};     // elements, innermost first
  std::array<std::uint64_t, 5> strides{};  // bytes between consecutive indices of dims[1..]
  std::array<std::uint32_t, 5> box{};      // elements per load, innermost first
  TensorMapSwizzle swizzle = TensorMapSwizzle::b128;

  // A row-major [rows, cols] matrix `ld` elements per row apart, read in boxes of
  // box_rows x box_cols.
  static TensorMapSpec matrix(DType dtype, const void* base, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                              std::uint32_t box_rows, std::uint32_t box_cols,
                              TensorMapSwizzle swizzle = TensorMapSwizzle::b128);
};

// Checks the spec (alignments, box limits, the swizzle span) and encodes it for the
// current device, or returns the map made before for the same spec. Throws iris::Error
// saying which rule a spec breaks.
const TensorMap& encode_tensor_map(const TensorMapSpec& spec);

// The rule `spec` breaks, as encode_tensor_map would report it ("tensor map f16 [100,
// 64] box [64, 64]: row strides must be ..."), or "" when a map can be made of it. No
// device needed.
std::string tensor_map_problem(const TensorMapSpec& spec);

}  // namespace iris
