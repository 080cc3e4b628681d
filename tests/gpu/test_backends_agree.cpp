// The host backend's interpreter against the GPU: the same .iris kernels, the same
// inputs, run once on each backend (two jobs of 2 ranks in this process), and every
// output compared. Integer, bitwise, cast, atomic, RMA and signal results must match bit
// for bit; float math (exp, sqrt, sums in another order, matmul) within a tolerance.
// (Exact outputs come from exact float arithmetic: a GPU may fuse a * b + c into one
// FMA, which rounds once where the host rounds twice.)
// The comparison is SKIPPED without a GPU; the host half runs everywhere.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "gpu_harness.hpp"

namespace iris::test {
namespace {

const char* kKernels = R"(
kernel ints(x: tensor<u32>[N], h: tensor<u32>[N], s: tensor<i32>[N], c: tensor<bf16>[N], f: tensor<f32>[N]) {
    for i in blocks(N, 256) {
        let v = load(x[i]);
        store(h[i], (v * (2654435761 as u32)) ^ (index(i) as u32 + (rank as u32) * (7 as u32)));
        store(s[i], max(v as i32 - (500 as i32), (0 as i32) - (v as i32)) / (3 as i32) % (7 as i32));
        let y = load(f[i]) * 4.0 - 2.0;
        store(c[i], y as bf16);
        store(f[i], (y as f16) as f32 + (y as i32) as f32);
    }
}

kernel math(x: tensor<f32>[N], y: tensor<f32>[N], xi: tensor<u32>[N], part: tensor<f32>[1], top: tensor<u32>[1]) {
    for i in blocks(N, 512) {
        let v = load(x[i]);
        store(y[i], exp(v) * 0.5 + sqrt(abs(v - 0.25)) - log(v + 1.0));
        atomic_add(part[0], sum(v * v), order: relaxed);
        atomic_max(top[0], max(load(xi[i], other: 0 as u32)), order: relaxed);
    }
}

kernel rma(dst: symmetric tensor<u32>[N], src: tensor<u32>[N], counts: symmetric tensor<u64>[N]) {
    for i in blocks(N, 128) {
        store(dst[i], load(src[i]) + rank as u32, to: (rank + 1) % world);
        for r in ranks {
            atomic_add(counts[i], (rank + 1) as u64, to: r, order: relaxed);
        }
    }
}

kernel pingpong(box: symmetric tensor<u32>[N], ready: symmetric tensor<u64>[1], ack: symmetric tensor<u64>[1], sums: tensor<u64>[R], rounds: int) {
    role sender(programs: 1) {
        for k in range(1, rounds + 1) {
            for i in blocks(N, 256) {
                store(box[i], (index(i) * k + rank) as u32, to: (rank + 1) % world);
            }
            signal(ready[0], k as u64, to: (rank + 1) % world);
            wait(ack[0] >= k as u64);
        }
    }
    role receiver(programs: 1) {
        for k in range(1, rounds + 1) {
            wait(ready[0] >= k as u64);
            let total = 0 as u64;
            for i in blocks(N, 256) {
                total += sum(load(box[i]) as u64);
            }
            store(sums[k - 1], total);
            signal(ack[0], k as u64, to: (rank + world - 1) % world);
        }
    }
}

kernel gemm(A: tensor<f32>[M, K], B: tensor<f32>[K, N], C: tensor<f32>[M, N]) {
    for (m, n) in tiles([M, N], [32, 64]) {
        store(C[m, n], matmul(A[m, :], B[:, n]) * 2.0);
    }
}
)";

// Every output of every kernel on one backend, by name, per rank.
using Outputs = std::map<std::string, std::vector<std::vector<std::byte>>>;

template <class T>
void keep(Outputs& out, std::mutex& mu, const std::string& name, int rank, const Tensor<T>& t) {
  const std::vector<T> v = t.to_host();
  std::vector<std::byte> bytes(v.size() * sizeof(T));
  std::memcpy(bytes.data(), v.data(), bytes.size());
  std::lock_guard<std::mutex> lock(mu);
  auto& per_rank = out[name];
  per_rank.resize(2);
  per_rank[static_cast<std::size_t>(rank)] = std::move(bytes);
}

Outputs run_on(const std::string& backend) {
  Outputs out;
  std::mutex mu;
  Options o;
  o.backend = backend;
  o.ranks = 2;
  o.share_gpus = true;
  o.heap_bytes = std::size_t{64} << 20;
  // A kernel that hangs fails the test in seconds, saying where.
  o.wait_timeout = 20;
  o.host_timeout = 60;
  const int rc = run(o, [&](Context& ctx) {
    auto done = [&](const char* what) {
      if (ctx.rank() == 0) std::fprintf(stderr, "  [%s] %s done\n", backend.c_str(), what);
    };
    Program p = jit_program(ctx, kKernels, "agree.iris");
    const std::int64_t n = 5000;  // not a multiple of any tile
    auto x = ctx.randint<std::uint32_t>(static_cast<std::size_t>(n), 0, 1000, 5);
    auto h = ctx.zeros<std::uint32_t>(static_cast<std::size_t>(n));
    auto s = ctx.zeros<std::int32_t>(static_cast<std::size_t>(n));
    auto c = ctx.zeros<bfloat16>(static_cast<std::size_t>(n));
    auto f = ctx.rand<float>(static_cast<std::size_t>(n), 6);
    p.launch("ints", {x, h, s, c, f});
    keep(out, mu, "ints.h", ctx.rank(), h);
    keep(out, mu, "ints.s", ctx.rank(), s);
    keep(out, mu, "ints.c", ctx.rank(), c);
    keep(out, mu, "ints.f", ctx.rank(), f);
    done("ints");

    auto xf = ctx.rand<float>(static_cast<std::size_t>(n), 7);
    auto y = ctx.zeros<float>(static_cast<std::size_t>(n));
    auto part = ctx.zeros<float>(std::size_t{1});
    auto top = ctx.zeros<std::uint32_t>(std::size_t{1});
    p.launch("math", {xf, y, x, part, top});
    keep(out, mu, "math.y~", ctx.rank(), y);
    keep(out, mu, "math.part~", ctx.rank(), part);
    keep(out, mu, "math.top", ctx.rank(), top);
    done("math");

    auto dst = ctx.zeros<std::uint32_t>(static_cast<std::size_t>(n));
    auto counts = ctx.zeros<std::uint64_t>(static_cast<std::size_t>(n));
    ctx.barrier();
    p.launch("rma", {dst, x, counts});
    ctx.synchronize();
    ctx.barrier();
    keep(out, mu, "rma.dst", ctx.rank(), dst);
    keep(out, mu, "rma.counts", ctx.rank(), counts);
    done("rma");

    auto box = ctx.zeros<std::uint32_t>(std::size_t{1000});
    auto ready = ctx.zeros<std::uint64_t>(1), ack = ctx.zeros<std::uint64_t>(1);
    auto sums = ctx.zeros<std::uint64_t>(std::size_t{20});
    ctx.barrier();
    p.launch("pingpong", {box, ready, ack, sums, std::int64_t{20}});
    ctx.synchronize();
    ctx.barrier();
    keep(out, mu, "pingpong.sums", ctx.rank(), sums);
    done("pingpong");

    const std::int64_t M = 70, K = 45, N = 100;
    auto a = ctx.rand<float>({M, K}, 8), b = ctx.rand<float>({K, N}, 9);
    auto cc = ctx.zeros<float>({M, N});
    p.launch("gemm", {a, b, cc});
    keep(out, mu, "gemm.C~", ctx.rank(), cc);
    ctx.synchronize();
    done("gemm");
  });
  EXPECT_EQ(rc, 0) << backend << ": a rank failed";
  return out;
}

// Exact outputs equal bit for bit, the others ("~") within a relative 1e-5.
void expect_agree(const Outputs& want, const Outputs& got, const std::string& what) {
  ASSERT_EQ(want.size(), got.size());
  for (const auto& [name, per_rank] : want) {
    const auto& other = got.at(name);
    for (std::size_t r = 0; r < per_rank.size(); ++r) {
      const auto& g = per_rank[r];
      const auto& h = other[r];
      ASSERT_EQ(g.size(), h.size()) << name;
      if (name.back() != '~') {
        EXPECT_EQ(std::memcmp(g.data(), h.data(), g.size()), 0) << what << ": " << name << " rank " << r << " differs";
        continue;
      }
      // Float math: exp/log/sqrt within a few ulps, sums and products in another order.
      const std::size_t count = g.size() / sizeof(float);
      double worst = 0;
      for (std::size_t i = 0; i < count; ++i) {
        float a, b;
        std::memcpy(&a, g.data() + i * 4, 4);
        std::memcpy(&b, h.data() + i * 4, 4);
        worst = std::max(worst, std::fabs(static_cast<double>(a) - b) / (std::fabs(static_cast<double>(a)) + 1e-3));
      }
      EXPECT_LT(worst, 1e-5) << what << ": " << name << " rank " << r << ": worst relative difference " << worst;
    }
  }
}

TEST(BackendsAgree, TheSameKernelsGiveTheSameResults) {
  if (launched_by_mpi()) GTEST_SKIP() << "runs its own jobs of 2 thread ranks";
  if (on_host_backend() || device_count() == 0) GTEST_SKIP() << "needs a GPU to compare the host backend with";
  const Outputs host = run_on("host");
  const Outputs gpu = run_on("cuda");
  expect_agree(gpu, host, "host vs GPU");
}

// The kernel set on the host backend twice (CI, without a GPU): it runs, and gives the
// same results again.
TEST(BackendsAgree, HostRunsTheSetTwiceAlike) {
  if (launched_by_mpi()) GTEST_SKIP() << "runs its own jobs of 2 thread ranks";
  const Outputs first = run_on("host");
  const Outputs second = run_on("host");
  expect_agree(first, second, "host vs host");
}

}  // namespace
}  // namespace iris::test
