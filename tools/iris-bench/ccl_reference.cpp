// Inputs and host reference of iris-bench ccl (see ccl_reference.hpp).
#include "ccl_reference.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

namespace iris::bench {
namespace {

// f(begin, end) over [0, n) in chunks on threads of their own: every rank's thread
// checks its own output at the same time, so each takes its share of the cores (a
// 256 MiB case took ~30 s a variant on one core a rank). Small n runs inline.
template <class F>
void in_parallel(std::size_t n, int world, F&& f) {
  constexpr std::size_t kMinChunk = std::size_t{1} << 20;
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads = std::min(std::max<std::size_t>(1, cores / static_cast<std::size_t>(std::max(1, world))),
                                       (n + kMinChunk - 1) / kMinChunk);
  if (threads <= 1) {
    f(std::size_t{0}, n);
    return;
  }
  std::vector<std::thread> pool;
  const std::size_t chunk = (n + threads - 1) / threads;
  for (std::size_t t = 1; t < threads; ++t) {
    const std::size_t begin = std::min(n, t * chunk), end = std::min(n, begin + chunk);
    pool.emplace_back([&f, begin, end] { f(begin, end); });
  }
  f(std::size_t{0}, std::min(n, chunk));
  for (std::thread& t : pool) t.join();
}

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Rank `rank`'s input element i, as the type stores it, widened to double.
double input(const CclCall& c, int rank, std::size_t i) {
  const std::uint64_t h = mix(c.seed ^ mix(static_cast<std::uint64_t>(rank) + 1) ^ mix(i * 0x2545f4914f6cdd1dull));
  const float f = static_cast<float>(static_cast<double>(h >> 40) / static_cast<double>(1u << 23) - 1.0);
  switch (c.dtype) {
    case DType::f32: return f;
    case DType::f16: return static_cast<float>(half(f));
    case DType::bf16: return static_cast<float>(bfloat16(f));
    case DType::i32:
    case DType::i64: return static_cast<double>(static_cast<std::int64_t>(h % 2001) - 1000);
    case DType::u32:
    case DType::u64: return static_cast<double>(h % 1001);
  }
  return 0;
}

void store(DType t, void* base, std::size_t i, double v) {
  switch (t) {
#define IRIS_BENCH_STORE(dt, T)                                  \
  case DType::dt: {                                              \
    const T x = static_cast<T>(v);                               \
    std::memcpy(static_cast<char*>(base) + i * sizeof(T), &x, sizeof(T)); \
    return;                                                      \
  }
    IRIS_BENCH_STORE(f32, float)
    IRIS_BENCH_STORE(i32, std::int32_t)
    IRIS_BENCH_STORE(i64, std::int64_t)
    IRIS_BENCH_STORE(u32, std::uint32_t)
    IRIS_BENCH_STORE(u64, std::uint64_t)
#undef IRIS_BENCH_STORE
    case DType::f16: {
      const half x(static_cast<float>(v));
      std::memcpy(static_cast<char*>(base) + i * 2, &x, 2);
      return;
    }
    case DType::bf16: {
      const bfloat16 x(static_cast<float>(v));
      std::memcpy(static_cast<char*>(base) + i * 2, &x, 2);
      return;
    }
  }
}

double load(DType t, const void* base, std::size_t i) {
  switch (t) {
#define IRIS_BENCH_LOAD(dt, T)                                                \
  case DType::dt: {                                                           \
    T x;                                                                      \
    std::memcpy(&x, static_cast<const char*>(base) + i * sizeof(T), sizeof(T)); \
    return static_cast<double>(x);                                            \
  }
    IRIS_BENCH_LOAD(f32, float)
    IRIS_BENCH_LOAD(i32, std::int32_t)
    IRIS_BENCH_LOAD(i64, std::int64_t)
    IRIS_BENCH_LOAD(u32, std::uint32_t)
    IRIS_BENCH_LOAD(u64, std::uint64_t)
#undef IRIS_BENCH_LOAD
    case DType::f16: {
      half x;
      std::memcpy(&x, static_cast<const char*>(base) + i * 2, 2);
      return static_cast<float>(x);
    }
    case DType::bf16: {
      bfloat16 x;
      std::memcpy(&x, static_cast<const char*>(base) + i * 2, 2);
      return static_cast<float>(x);
    }
  }
  return 0;
}

// The smallest step of the type near 1: how far one rounding may move a value,
// relative to its magnitude (twice the unit roundoff).
double epsilon(DType t) {
  switch (t) {
    case DType::f32: return std::ldexp(1.0, -23);
    case DType::f16: return std::ldexp(1.0, -10);
    case DType::bf16: return std::ldexp(1.0, -7);
    default: return 0;
  }
}

// Element j of every rank's input combined; *magnitude = the sum of their magnitudes.
double combined(const CclCall& c, std::size_t j, double* magnitude) {
  double acc = input(c, 0, j);
  *magnitude = std::fabs(acc);
  for (int q = 1; q < c.world; ++q) {
    const double v = input(c, q, j);
    *magnitude += std::fabs(v);
    switch (c.op) {
      case ccl::ReduceOp::sum: acc += v; break;
      case ccl::ReduceOp::max: acc = std::max(acc, v); break;
      case ccl::ReduceOp::min: acc = std::min(acc, v); break;
    }
  }
  return acc;
}

}  // namespace

const char* name(Collective c) {
  switch (c) {
    case Collective::all_reduce: return "all_reduce";
    case Collective::all_gather: return "all_gather";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::all_to_all: return "all_to_all";
    case Collective::broadcast: return "broadcast";
  }
  return "?";
}

std::size_t input_count(const CclCall& c) {
  const std::size_t w = static_cast<std::size_t>(c.world);
  switch (c.collective) {
    case Collective::all_reduce:
    case Collective::all_gather:
    case Collective::broadcast: return c.n;
    case Collective::reduce_scatter:
    case Collective::all_to_all: return c.n * w;
  }
  return 0;
}

std::size_t output_count(const CclCall& c) {
  const std::size_t w = static_cast<std::size_t>(c.world);
  switch (c.collective) {
    case Collective::all_reduce:
    case Collective::reduce_scatter:
    case Collective::broadcast: return c.n;
    case Collective::all_gather:
    case Collective::all_to_all: return c.n * w;
  }
  return 0;
}

void write_input(const CclCall& c, int rank, void* out) {
  in_parallel(input_count(c), c.world, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) store(c.dtype, out, i, input(c, rank, i));
  });
}

std::size_t count_wrong(const CclCall& c, int rank, const void* output) {
  const std::size_t r = static_cast<std::size_t>(rank);
  const bool rounds = c.op == ccl::ReduceOp::sum && dtype_is_float(c.dtype);
  const double tolerance = epsilon(c.dtype) * (c.world + 1);
  std::atomic<std::size_t> wrong{0};
  in_parallel(output_count(c), c.world, [&](std::size_t begin, std::size_t end) {
    std::size_t mine = 0;
    for (std::size_t j = begin; j < end; ++j) {
      const double got = load(c.dtype, output, j);
      double want = 0, magnitude = 0;
      bool exact = true;
      switch (c.collective) {
        case Collective::all_reduce:
          want = combined(c, j, &magnitude);
          exact = !rounds;
          break;
        case Collective::reduce_scatter:
          want = combined(c, r * c.n + j, &magnitude);
          exact = !rounds;
          break;
        case Collective::all_gather: want = input(c, static_cast<int>(j / c.n), j % c.n); break;
        case Collective::all_to_all: want = input(c, static_cast<int>(j / c.n), r * c.n + j % c.n); break;
        case Collective::broadcast: want = input(c, c.root, j); break;
      }
      const bool ok = exact ? got == want : std::fabs(got - want) <= tolerance * magnitude;
      mine += ok ? 0 : 1;  // NaN compares false: wrong
    }
    wrong += mine;
  });
  return wrong.load();
}

}  // namespace iris::bench
