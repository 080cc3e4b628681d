// Every atomic (add, sub, and, or, xor, min, max, xchg, cas) on u32, i32, u64, i64 (and
// add/sub/xchg/cas on f32), in every memory order and scope. System scope: every
// rank's threads hit one counter on rank 0. Device/block scope: a rank's own threads
// (one block for block scope) hit its own counter. Final values are checked against
// the same operations replayed on the host; xchg and cas also check the old values.
#include <algorithm>
#include <limits>
#include <type_traits>

#include "gpu_harness.hpp"

namespace iris::test {
namespace {

class Atomics : public GpuTest {};

const char* kOps[] = {"add", "sub", "and", "or", "xor", "min", "max", "xchg", "cas"};
const char* kOrders[] = {"relaxed", "acquire", "release", "acq_rel"};
const char* kScopes[] = {"block", "device", "system"};

template <class T>
T operand(int op, std::uint64_t p) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(p + 1);
  } else {
    constexpr int bits = sizeof(T) * 8 - 1;
    if (op == 2) return static_cast<T>(~(T{1} << (p % bits)));
    if (op == 3 || op == 4) return static_cast<T>(T{1} << (p % bits));
    return static_cast<T>(p + 1);
  }
}

template <class T>
T initial(int op) {
  if constexpr (!std::is_floating_point_v<T>) {
    if (op == 2) return static_cast<T>(~T{0});
    if (op == 5) return std::numeric_limits<T>::max();
  }
  return T{0};
}

template <class T>
T replay(int op, T v, const std::vector<std::uint64_t>& participants) {
  for (std::uint64_t p : participants) {
    const T x = operand<T>(op, p);
    if constexpr (std::is_floating_point_v<T>) {
      if (op == 0) v += x;
      if (op == 1) v -= x;
      if (op == 8) v += 1;
    } else {
      using U = std::make_unsigned_t<T>;
      switch (op) {
        case 0: v = static_cast<T>(static_cast<U>(v) + static_cast<U>(x)); break;
        case 1: v = static_cast<T>(static_cast<U>(v) - static_cast<U>(x)); break;
        case 2: v &= x; break;
        case 3: v |= x; break;
        case 4: v ^= x; break;
        case 5: v = std::min(v, x); break;
        case 6: v = std::max(v, x); break;
        case 8: v = static_cast<T>(static_cast<U>(v) + 1); break;
        default: break;
      }
    }
  }
  return v;
}

template <class T>
void check_type(Context& ctx, Module& m, const char* tname, std::vector<int> ops) {
  constexpr unsigned kThreads = 64;
  auto target = ctx.zeros<T>(1);
  auto olds = ctx.zeros<T>(2 * kThreads);
  for (int scope = 0; scope < 3; ++scope) {
    const unsigned blocks = scope == 0 ? 1 : 2;
    const bool system = scope == 2;
    const int to = system ? 0 : -1;
    std::vector<std::uint64_t> participants;  // those that hit the counter this rank checks
    for (int r = 0; r < ctx.world(); ++r) {
      if (!system && r != ctx.rank()) continue;
      for (std::uint64_t t = 0; t < blocks * kThreads; ++t) participants.push_back(t * ctx.world() + r);
    }
    for (int order = 0; order < 4; ++order) {
      Kernel k = m.kernel(std::string("atomic_") + tname + "_" + kOrders[order] + "_" + kScopes[scope]);
      for (int op : ops) {
        const std::string what = std::string(tname) + " " + kOps[op] + " " + kOrders[order] + " " + kScopes[scope] +
                                 " on rank " + std::to_string(ctx.rank());
        T init = initial<T>(op);
        ctx.copy_from_host(target.data(), &init, sizeof(T));
        ctx.barrier();
        ctx.launch(k, LaunchConfig{blocks, kThreads}, op, target.data(), olds.data(), to);
        ctx.barrier();
        if (system && ctx.rank() != 0) continue;
        T got;
        ctx.copy_to_host(&got, target.data(), sizeof(T));
        if (op != 7) require(got == replay<T>(op, init, participants), what + ": wrong final value");
        if (op == 7 || op == 8) {
          // Old values seen: for xchg, olds + final = init + every operand; for cas
          // increments, olds are init, init+1, ..., each exactly once.
          std::vector<T> seen, want;
          for (int r = 0; r < ctx.world(); ++r) {
            if (!system && r != ctx.rank()) continue;
            std::vector<T> o(2 * kThreads);
            ctx.copy_to_host(o.data(), olds.on_rank(r), o.size() * sizeof(T));
            seen.insert(seen.end(), o.begin(), o.begin() + blocks * kThreads);
          }
          want.push_back(init);
          for (std::size_t i = 0; i < participants.size(); ++i) {
            want.push_back(op == 7 ? operand<T>(op, participants[i]) : static_cast<T>(init + static_cast<T>(i + 1)));
          }
          seen.push_back(got);
          std::sort(seen.begin(), seen.end());
          std::sort(want.begin(), want.end());
          require(seen == want, what + ": old values are not a permutation of the expected chain");
        }
      }
    }
  }
}

TEST_P(Atomics, EveryOpOrderScopeIntegers) {
  IRIS_REQUIRE_CUDA();  // hand-written CUDA test kernels
  run_ranks(GetParam(), [](Context& ctx, Module& m) {
    const std::vector<int> all{0, 1, 2, 3, 4, 5, 6, 7, 8};
    check_type<std::uint32_t>(ctx, m, "u32", all);
    check_type<std::int32_t>(ctx, m, "i32", all);
    check_type<std::uint64_t>(ctx, m, "u64", all);
    check_type<std::int64_t>(ctx, m, "i64", all);
  });
}

TEST_P(Atomics, FloatAddSubXchgCas) {
  IRIS_REQUIRE_CUDA();  // hand-written CUDA test kernels
  run_ranks(GetParam(), [](Context& ctx, Module& m) { check_type<float>(ctx, m, "f32", {0, 1, 7, 8}); });
}

TEST_P(Atomics, RedAddRelaxedAndRelease) {
  IRIS_REQUIRE_CUDA();  // hand-written CUDA test kernels
  run_ranks(GetParam(), [](Context& ctx, Module& m) {
    const std::size_t n = 50000;
    auto c32 = ctx.zeros<std::uint32_t>(n);
    auto c64 = ctx.zeros<std::uint64_t>(n);
    ctx.barrier();
    for (int release = 0; release < 2; ++release) {
      ctx.launch(m.kernel("red_everywhere"), LaunchConfig{16, 256}, release, c32.data(), c64.data(),
                 static_cast<unsigned long long>(n));
    }
    ctx.barrier();
    const auto w = static_cast<std::uint64_t>(2 * ctx.world());
    require(c32.to_host() == std::vector<std::uint32_t>(n, static_cast<std::uint32_t>(w)), "u32 counters");
    require(c64.to_host() == std::vector<std::uint64_t>(n, w), "u64 counters");
  });
}

IRIS_GPU_SUITE(Atomics);

}  // namespace
}  // namespace iris::test
