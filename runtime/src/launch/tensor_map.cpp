// Tensor-map encoding with its cache (see iris/tensor_map.hpp).
#include "iris/tensor_map.hpp"

#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>

#include "backend/backend.hpp"
#include "iris/error.hpp"

namespace iris {
namespace {

std::string describe(const TensorMapSpec& s) {
  std::string d = std::string(dtype_name(s.dtype)) + " [";
  for (int i = s.rank - 1; i >= 0; --i) d += std::to_string(s.dims[static_cast<std::size_t>(i)]) + (i ? ", " : "]");
  d += " box [";
  for (int i = s.rank - 1; i >= 0; --i) d += std::to_string(s.box[static_cast<std::size_t>(i)]) + (i ? ", " : "]");
  return d;
}

// The rule s breaks, without the "tensor map ..." prefix; "" when none.
std::string broken_rule(const TensorMapSpec& s) {
  if (s.rank < 1 || s.rank > 5) return "rank must be 1 to 5";
  if (!s.base) return "null base address";
  if (reinterpret_cast<std::uintptr_t>(s.base) % 16) return "the base address must be 16-byte aligned";
  const std::uint64_t elem = dtype_size(s.dtype);
  for (int i = 0; i < s.rank; ++i) {
    const auto u = static_cast<std::size_t>(i);
    if (s.dims[u] == 0 || s.dims[u] > (1ull << 32)) return "every extent must be 1 to 2^32";
    if (s.box[u] == 0 || s.box[u] > 256) return "every box extent must be 1 to 256";
    if (i > 0 && (s.strides[u] % 16 || s.strides[u] == 0 || s.strides[u] >= (1ull << 40))) {
      return "row strides must be nonzero multiples of 16 bytes (a row of " + std::to_string(s.strides[u]) +
             " bytes is not)";
    }
  }
  if ((s.box[0] * elem) % 16) return "the box's inner extent must be a multiple of 16 bytes";
  const std::uint64_t span = s.swizzle == TensorMapSwizzle::b128  ? 128
                             : s.swizzle == TensorMapSwizzle::b64 ? 64
                             : s.swizzle == TensorMapSwizzle::b32 ? 32
                                                                  : 0;
  if (span && s.box[0] * elem > span) {
    return "the box's inner extent (" + std::to_string(s.box[0] * elem) + " bytes) exceeds the swizzle span (" +
           std::to_string(span) + ")";
  }
  return "";
}

void validate(const TensorMapSpec& s) {
  const std::string why = broken_rule(s);
  if (!why.empty()) throw Error("tensor map " + describe(s) + ": " + why);
}

struct Key {
  unsigned char bytes[sizeof(TensorMapSpec)];
  bool operator==(const Key& o) const { return std::memcmp(bytes, o.bytes, sizeof bytes) == 0; }
};
struct KeyHash {
  std::size_t operator()(const Key& k) const {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (unsigned char c : k.bytes) h = (h ^ c) * 1099511628211ull;
    return static_cast<std::size_t>(h);
  }
};

// Addresses are unified across the node's devices, so the address names the tensor.
Key key_of(const TensorMapSpec& s) {
  // Field by field into a zeroed buffer: padding never enters the key.
  Key k{};
  unsigned char* p = k.bytes;
  const auto put = [&](const void* v, std::size_t n) {
    std::memcpy(p, v, n);
    p += n;
  };
  put(&s.dtype, sizeof s.dtype);
  put(&s.base, sizeof s.base);
  put(&s.rank, sizeof s.rank);
  put(s.dims.data(), sizeof s.dims);
  put(s.strides.data(), sizeof s.strides);
  put(s.box.data(), sizeof s.box);
  put(&s.swizzle, sizeof s.swizzle);
  return k;
}

}  // namespace

std::string tensor_map_problem(const TensorMapSpec& spec) {
  const std::string why = broken_rule(spec);
  return why.empty() ? why : "tensor map " + describe(spec) + ": " + why;
}

TensorMapSpec TensorMapSpec::matrix(DType dtype, const void* base, std::int64_t rows, std::int64_t cols,
                                    std::int64_t ld, std::uint32_t box_rows, std::uint32_t box_cols,
                                    TensorMapSwizzle swizzle) {
  TensorMapSpec s;
  s.dtype = dtype;
  s.base = base;
  s.rank = 2;
  s.dims = {static_cast<std::uint64_t>(cols), static_cast<std::uint64_t>(rows), 0, 0, 0};
  s.strides = {dtype_size(dtype), static_cast<std::uint64_t>(ld) * dtype_size(dtype), 0, 0, 0};
  s.box = {box_cols, box_rows, 0, 0, 0};
  s.swizzle = swizzle;
  return s;
}

const TensorMap& encode_tensor_map(const TensorMapSpec& spec) {
  validate(spec);
  static std::mutex mu;
  // A deque never moves its elements: references handed out stay valid.
  static std::deque<TensorMap> maps;
  static std::unordered_map<Key, const TensorMap*, KeyHash> index;
  const Key key = key_of(spec);
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = index.find(key); it != index.end()) return *it->second;
  TensorMap map;
  backend::active().encode_tensor_map(spec, &map);
  maps.push_back(map);
  index.emplace(key, &maps.back());
  return maps.back();
}

}  // namespace iris
