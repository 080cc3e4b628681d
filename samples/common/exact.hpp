// What the standard-library samples and iris-bench ops check results with: entries of a
// result with their exact values from every rank's inputs, in double precision.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "iris/context.hpp"
#include "iris/tensor.hpp"

namespace iris::samples {

// An entry of the result to check: where, the exact value, and how far the result may be.
struct Entry {
  std::int64_t i, j;
  double want, bound;
};

// Rank `rank`'s copy of t, on the host.
template <class T>
std::vector<T> host_copy(Context& ctx, const Tensor<T>& t, int rank) {
  std::vector<T> h(static_cast<std::size_t>(t.bytes() / sizeof(T)));
  ctx.copy_to_host(h.data(), t.on_rank(rank), t.bytes());
  return h;
}

template <class T>
double as_double(T v) {
  return static_cast<double>(static_cast<float>(v));
}

// The unit roundoff of T (half an ulp at 1): rounding a value v to T moves it at most
// u |v|.
template <class T>
double unit_roundoff() {
  if constexpr (std::is_same_v<T, float>) return 1.0 / (1 << 24);
  if constexpr (std::is_same_v<T, half>) return 1.0 / (1 << 11);
  return 1.0 / (1 << 9);
}

// How many `entries` a row-major result with `cols` columns gets wrong, the first of
// them described in `first`.
template <class T>
std::size_t count_wrong(const std::vector<T>& got, std::int64_t cols, const std::vector<Entry>& entries,
                        std::string* first) {
  std::size_t bad = 0;
  for (const Entry& e : entries) {
    const double g = as_double(got[static_cast<std::size_t>(e.i * cols + e.j)]);
    if (std::fabs(g - e.want) <= e.bound) continue;
    if (!bad++ && first) {
      *first = "C[" + std::to_string(e.i) + ", " + std::to_string(e.j) + "] = " + std::to_string(g) + ", want " +
               std::to_string(e.want) + " +- " + std::to_string(e.bound);
    }
  }
  return bad;
}

}  // namespace iris::samples
