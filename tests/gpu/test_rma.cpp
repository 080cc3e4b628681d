// Remote loads/stores of every width, thread-level get/put/copy, and block bulk copies
// at unaligned offsets and lengths, to and from every rank.
#include <cstring>
#include <random>

#include "gpu_harness.hpp"

namespace iris::test {
namespace {

class Rma : public GpuTest {};

template <class T>
void load_store_case(Context& ctx, Module& m, const char* name) {
  const std::size_t n = 4100;  // bytes stay a multiple of 4: buffers are u32 tensors
  const auto w = static_cast<std::int64_t>(ctx.world());
  const std::size_t bytes = n * sizeof(T);
  const auto words = static_cast<std::int64_t>(bytes / 4);
  auto src = ctx.randint<std::uint32_t>(bytes / 4, 0, 1 << 30, 17);
  auto out = ctx.zeros<std::uint32_t>({w, words});
  auto dst = ctx.zeros<std::uint32_t>({w, words});
  ctx.barrier();
  const unsigned long long nn = n;
  ctx.launch(m.kernel(std::string("load_all_") + name), LaunchConfig{8, 128}, out.data(), src.data(), nn);
  ctx.launch(m.kernel(std::string("store_all_") + name), LaunchConfig{8, 128}, dst.data(), src.data(), nn);
  ctx.barrier();
  std::vector<std::uint32_t> got_out = out.to_host(), got_dst = dst.to_host(), want(bytes / 4);
  for (int r = 0; r < ctx.world(); ++r) {
    ctx.copy_to_host(want.data(), src.on_rank(r), bytes);
    require(std::memcmp(got_out.data() + r * bytes / 4, want.data(), bytes) == 0,
            std::string("load_all_") + name + " row " + std::to_string(r) + " on rank " + std::to_string(ctx.rank()));
    require(std::memcmp(got_dst.data() + r * bytes / 4, want.data(), bytes) == 0,
            std::string("store_all_") + name + " row " + std::to_string(r) + " on rank " + std::to_string(ctx.rank()));
  }
}

TEST_P(Rma, LoadStoreEveryWidthEveryRank) {
  IRIS_REQUIRE_CUDA();  // hand-written CUDA test kernels
  run_ranks(GetParam(), [](Context& ctx, Module& m) {
    load_store_case<unsigned char>(ctx, m, "u8");
    load_store_case<unsigned short>(ctx, m, "u16");
    load_store_case<unsigned>(ctx, m, "u32");
    load_store_case<unsigned long long>(ctx, m, "u64");
    load_store_case<float>(ctx, m, "f32");
    load_store_case<std::uint64_t[2]>(ctx, m, "v16");
  });
}

TEST_P(Rma, ThreadGetPutCopy) {
  IRIS_REQUIRE_CUDA();  // hand-written CUDA test kernels
  run_ranks(GetParam(), [](Context& ctx, Module& m) {
    const std::size_t n = 10007;
    const int next = (ctx.rank() + 1) % ctx.world(), prev = (ctx.rank() + ctx.world() - 1) % ctx.world();
    auto src = ctx.randint<std::uint32_t>(n, 0, 1 << 30, 5);
    auto dst = ctx.zeros<std::uint32_t>(n);
    Kernel k = m.kernel("get_put_copy");
    std::vector<std::uint32_t> want(n);
    for (int mode = 0; mode < 3; ++mode) {
      ctx.zeros<std::uint32_t>(1);  // keep allocations in step; also exercises alloc/free
      dst = ctx.zeros<std::uint32_t>(n);
      ctx.barrier();
      // get: from next into mine. put: mine into next's dst. copy: next's src into next's dst.
      ctx.launch(k, LaunchConfig{1, 128}, mode, dst.data(), src.data(), static_cast<unsigned long long>(n), next, next);
      ctx.barrier();
      const int source = mode == 0 ? next : mode == 1 ? prev : ctx.rank();
      ctx.copy_to_host(want.data(), src.on_rank(source), n * 4);
      require(dst.to_host() == want, "mode " + std::to_string(mode) + " on rank " + std::to_string(ctx.rank()));
    }
  });
}

TEST_P(Rma, BlockBulkCopiesAtOddOffsetsAndLengths) {
  IRIS_REQUIRE_CUDA();  // hand-written CUDA test kernels
  run_ranks(GetParam(), [](Context& ctx, Module& m) {
    const std::size_t cap = 3 << 20;
    auto src = ctx.randint<std::uint32_t>(cap / 4, 0, 1 << 30, 9);
    auto dst = ctx.zeros<std::uint32_t>(cap / 4);
    Kernel k = m.kernel("block_ops");
    const int next = (ctx.rank() + 1) % ctx.world(), prev = (ctx.rank() + ctx.world() - 1) % ctx.world();
    std::mt19937 rng(1234);  // same sequence on every rank
    std::vector<std::uint8_t> got(cap), want(cap), before(cap);
    for (int trial = 0; trial < 24; ++trial) {
      const int mode = trial % 3;
      const std::size_t soff = rng() % 64, doff = trial % 2 ? soff : rng() % 64;  // aligned and misaligned pairs
      const std::size_t bytes = trial < 6 ? rng() % 64 : rng() % (cap - 128);
      const unsigned blocks = 1 + rng() % 16;
      ctx.barrier();
      ctx.copy_to_host(before.data(), dst.data(), cap);
      ctx.barrier();
      char* d = reinterpret_cast<char*>(dst.data()) + doff;
      const char* s = reinterpret_cast<const char*>(src.data()) + soff;
      ctx.launch(k, LaunchConfig{blocks, 256}, mode, d, s, static_cast<unsigned long long>(bytes), next, next);
      ctx.barrier();
      // Who wrote my dst: get -> me (from next's src); put -> prev (its src); copy -> prev (prev's next = me, src of me).
      const int writer_src = mode == 0 ? next : mode == 1 ? prev : ctx.rank();
      ctx.copy_to_host(got.data(), dst.data(), cap);
      ctx.copy_to_host(want.data(), src.on_rank(writer_src), cap);
      std::vector<std::uint8_t> expect = before;
      std::memcpy(expect.data() + doff, want.data() + soff, bytes);
      require(got == expect, "trial " + std::to_string(trial) + " mode " + std::to_string(mode) + " bytes " +
                                 std::to_string(bytes) + " offsets " + std::to_string(soff) + "/" +
                                 std::to_string(doff) + " on rank " + std::to_string(ctx.rank()));
    }
  });
}

IRIS_GPU_SUITE(Rma);

}  // namespace
}  // namespace iris::test
