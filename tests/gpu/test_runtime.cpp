// The host runtime on GPUs: collective allocation (and divergence detection), tensor
// factories for every dtype, device barrier (also inside a CUDA graph), broadcasts,
// module and launch errors.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "gpu_harness.hpp"

namespace iris::test {
namespace {

class Runtime : public GpuTest {};

TEST_P(Runtime, CollectiveAllocationIsSymmetricAndFreesCoalesce) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const HeapInfo before = ctx.heap_info();
    void* a = ctx.heap_alloc(1000);
    void* b = ctx.heap_alloc(1 << 20, 4096);
    void* c = ctx.heap_alloc(77);
    require(reinterpret_cast<std::uintptr_t>(b) % 4096 == 0, "alignment");
    auto offsets = ctx.all_gather(reinterpret_cast<std::uintptr_t>(b) - ctx.heap_info().base);
    require(std::all_of(offsets.begin(), offsets.end(), [&](auto o) { return o == offsets[0]; }), "same offset");
    ctx.heap_free(b);
    ctx.heap_free(a);
    ctx.heap_free(c);
    require(ctx.heap_info().free == before.free && ctx.heap_info().largest_free_block == before.largest_free_block,
            "frees coalesce back to one block");
    bool threw = false;
    try {
      ctx.heap_free(c);
    } catch (const Error& e) {
      threw = std::string(e.what()).find("double free") != std::string::npos;
    }
    require(threw, "double free is reported");
    int local = 0;
    threw = false;
    try {
      ctx.heap_free(&local);
    } catch (const Error&) {
      threw = true;
    }
    require(threw, "foreign pointer is reported");
  });
}

TEST_P(Runtime, DivergentAllocationThrowsOnEveryRank) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    if (ctx.world() == 1) return;
    const HeapInfo before = ctx.heap_info();
    std::string msg;
    try {
      ctx.heap_alloc(ctx.rank() == 1 ? 8192 : 4096);
    } catch (const Error& e) {
      msg = e.what();
    }
    require(msg.find("ranks disagree") != std::string::npos, "divergence reported: '" + msg + "'");
    require(ctx.heap_info().used == before.used, "nothing stays allocated after a divergent allocation");
    // Out of memory on every rank: message names requested and free bytes.
    msg.clear();
    try {
      ctx.heap_alloc(std::size_t{1} << 40);
    } catch (const Error& e) {
      msg = e.what();
    }
    require(msg.find("out of memory") != std::string::npos && msg.find("free") != std::string::npos, msg);
    void* p = ctx.heap_alloc(256);  // still usable and in step
    ctx.heap_free(p);
  });
}

template <class T>
double as_double(T v) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    return static_cast<double>(static_cast<float>(v));
  } else {
    return static_cast<double>(v);
  }
}

template <class T>
void factories(Context& ctx) {
  const std::size_t n = 100003;
  auto z = ctx.zeros<T>(n);
  auto o = ctx.ones<T>({7, 11});
  auto f = ctx.full<T>(n, 3.0);
  auto a = ctx.arange<T>(1000);
  require(z.numel() == n && o.numel() == 77 && o.shape() == Shape{7, 11}, "shapes");
  for (const T& v : z.to_host()) require(as_double(v) == 0.0, "zeros");
  for (const T& v : o.to_host()) require(as_double(v) == 1.0, "ones");
  for (const T& v : f.to_host()) require(as_double(v) == 3.0, "full");
  auto ah = a.to_host();
  for (std::size_t i = 0; i < ah.size(); ++i) {
    require(std::fabs(as_double(ah[i]) - as_double(static_cast<T>(static_cast<float>(i)))) < 1e-9,
            "arange[" + std::to_string(i) + "]");
  }
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    auto u = ctx.rand<T>(n, 1).to_host();
    double mean = 0, lo = 1, hi = 0;
    for (const T& v : u) {
      double x = as_double(v);
      mean += x;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    mean /= static_cast<double>(n);
    require(lo >= 0 && hi <= 1 && std::fabs(mean - 0.5) < 0.01, "rand in [0,1) with mean 1/2");
    auto g = ctx.randn<T>(n, 2).to_host();
    double m1 = 0, m2 = 0;
    for (const T& v : g) {
      double x = as_double(v);
      m1 += x;
      m2 += x * x;
    }
    m1 /= static_cast<double>(n);
    m2 /= static_cast<double>(n);
    require(std::fabs(m1) < 0.02 && std::fabs(m2 - 1) < 0.03, "randn mean 0 variance 1");
    bool threw = false;
    try {
      ctx.randint<T>(4, 0, 0);
    } catch (const Error&) {
      threw = true;
    }
    require(threw, "randint with an empty range is an error");
  } else {
    auto r = ctx.randint<T>(n, 3, 10, 4).to_host();
    for (const T& v : r) require(v >= 3 && v < 10, "randint range");
    bool threw = false;
    try {
      ctx.rand<T>(4);
    } catch (const Error& e) {
      threw = std::string(e.what()).find("floating") != std::string::npos;
    }
    require(threw, "rand on an integer dtype is an error");
  }
}

TEST_P(Runtime, TensorFactoriesEveryDtype) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    factories<float>(ctx);
    factories<half>(ctx);
    factories<bfloat16>(ctx);
    factories<std::int32_t>(ctx);
    factories<std::int64_t>(ctx);
    factories<std::uint32_t>(ctx);
    factories<std::uint64_t>(ctx);
    // Same seed, same rank -> same numbers; different ranks -> different numbers.
    auto a = ctx.rand<float>(64, 9).to_host(), b = ctx.rand<float>(64, 9).to_host();
    require(a == b, "rand is reproducible");
    auto firsts = ctx.all_gather(a[0]);
    if (ctx.world() > 1) require(firsts[0] != firsts[1], "ranks draw different numbers");
  });
}

// Device copies and zeroing on a stream, a side stream ordered after the rank's and the
// rank's after it, and whether a stream is being captured.
TEST_P(Runtime, StreamsCopiesAndZeroing) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const std::size_t n = 100002;  // even: half of b's bytes is whole floats
    auto a = ctx.rand<float>(n, 5);
    auto b = ctx.full<float>(n, -1.0);
    auto c = ctx.full<float>(n, -1.0);
    Stream side = ctx.side_stream();
    require(side != nullptr && side != ctx.stream() && ctx.side_stream() == side && ctx.side_stream(0) == side,
            "side stream 0, kept");
    Stream other = ctx.side_stream(Context::kSideStreams - 1);
    require(other != nullptr && other != side && other != ctx.stream() && ctx.side_stream(Context::kSideStreams - 1) == other,
            "the last side stream, its own, kept");
    bool refused = false;
    try {
      ctx.side_stream(Context::kSideStreams);
    } catch (const Error& e) {
      refused = std::string(e.what()).find("side streams 0 .. 7") != std::string::npos;
    }
    require(refused, "a side stream past the last is refused");
    ctx.copy_async(b.data(), a.data(), a.bytes());  // the rank's stream
    ctx.order(ctx.stream(), side);                  // fork: the side stream sees b
    ctx.copy_async(c.data(), b.data(), b.bytes(), side);
    ctx.zero_async(b.data(), b.bytes() / 2, side);  // the first half of b
    ctx.order(side, ctx.stream());                  // join
    auto d = ctx.full<float>(n, -1.0);
    ctx.copy_async(d.data(), b.data(), b.bytes());
    ctx.synchronize();
    const auto want = a.to_host(), got_c = c.to_host(), got_d = d.to_host();
    require(got_c == want, "the copy on the side stream ran after the one on the rank's");
    for (std::size_t i = 0; i < n; ++i) {
      const float expect = i < n / 2 ? 0.0f : want[i];
      if (got_d[i] != expect) require(false, "d[" + std::to_string(i) + "] is " + std::to_string(got_d[i]));
    }
    require(!ctx.capturing() && !ctx.capturing(side), "nothing is being captured");
    if (!ctx.on_host()) {
      bool seen = false;
      Graph g(ctx.stream(), [&] { seen = ctx.capturing(); });
      require(seen, "capturing() is true inside a capture");
    }
  });
}

// A 2-D copy of a column block into the next rank's matrix, held on a side stream until
// a word reaches a value (raised by a copy on the rank's stream, enqueued first), and the
// pitches a copy's rows do not fit refused.
TEST_P(Runtime, TwoDimensionalCopiesWaitForAWord) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const int w = ctx.world(), r = ctx.rank(), next = (r + 1) % w, prev = (r + w - 1) % w;
    constexpr std::int64_t kRows = 37, kCols = 24, kBlock = 5;  // columns (r % 4) * 5 .. of [37, 24] matrices
    auto x = ctx.full<float>(Shape{kRows, kCols}, -1.0);
    auto y = ctx.full<float>(Shape{kRows, kCols}, -1.0);
    std::vector<float> mine(static_cast<std::size_t>(kRows * kCols));
    for (std::int64_t i = 0; i < kRows * kCols; ++i) mine[static_cast<std::size_t>(i)] = static_cast<float>(r * 10000 + i);
    x.copy_from_host(mine);
    auto word = ctx.zeros<std::uint64_t>(1);
    auto three = ctx.full<std::uint64_t>(1, 3.0);
    ctx.barrier();
    Stream side = ctx.side_stream();
    ctx.order(ctx.stream(), side);
    ctx.copy_async(word.data(), three.data(), sizeof(std::uint64_t));  // the rank's stream raises the word
    ctx.wait_value(word.data(), 3, side);
    // Rows 0 .. 34 of this rank's block into rows 1 .. 35 of the next rank's y.
    const std::size_t pitch = kCols * sizeof(float);
    const std::int64_t col0 = (r % 4) * kBlock, pcol0 = (prev % 4) * kBlock;
    ctx.copy_2d_async(ctx.translate(y.data() + kCols + col0, next), pitch, x.data() + col0, pitch, kBlock * sizeof(float),
                      kRows - 2, side);
    ctx.order(side, ctx.stream());
    ctx.synchronize();
    ctx.barrier();
    const auto got = y.to_host();
    for (std::int64_t i = 0; i < kRows; ++i) {
      for (std::int64_t j = 0; j < kCols; ++j) {
        const bool copied = i >= 1 && i < kRows - 1 && j >= pcol0 && j < pcol0 + kBlock;
        const float want = copied ? static_cast<float>(prev * 10000 + (i - 1) * kCols + j) : -1.0f;
        const float g = got[static_cast<std::size_t>(i * kCols + j)];
        if (g != want) {
          require(false, "y[" + std::to_string(i) + ", " + std::to_string(j) + "] is " + std::to_string(g) + ", expected " +
                             std::to_string(want));
        }
      }
    }
    bool refused = false;
    try {
      ctx.copy_2d_async(y.data(), 8, x.data(), pitch, 16, 2);
    } catch (const Error& e) {
      refused = std::string(e.what()).find("do not fit pitches") != std::string::npos;
    }
    require(refused, "rows wider than the destination's pitch are refused");
  });
}

TEST_P(Runtime, DeviceBarrierOrdersWritesAlsoInAGraph) {
  IRIS_REQUIRE_CUDA();  // hand-written CUDA test kernels
  run_ranks(GetParam(), [](Context& ctx, Module& m) {
    auto board = ctx.zeros<std::uint64_t>(device::kMaxRanks);
    auto stamp = ctx.ones<std::uint64_t>(1);
    auto errors = ctx.zeros<std::uint32_t>(1);
    Kernel put = m.kernel("stamp_board"), check = m.kernel("check_board");
    auto step = [&] {
      ctx.launch(put, LaunchConfig{1, 32}, board.data(), stamp.data());
      ctx.device_barrier();
      ctx.launch(check, LaunchConfig{1, 32}, board.data(), stamp.data(), errors.data());
      ctx.device_barrier();  // nobody stamps round k+1 before everyone checked round k
    };
    ctx.barrier();
    for (int i = 0; i < 50; ++i) step();
    Graph graph(ctx.stream(), step);
    for (int i = 0; i < 200; ++i) graph.launch(ctx.stream());
    ctx.synchronize();
    require(errors.to_host()[0] == 0, "a rank saw a stale stamp after the device barrier");
    require(stamp.to_host()[0] == 251, "every step ran");
  });
}

TEST_P(Runtime, Broadcasts) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const int root = ctx.world() - 1;
    double v = ctx.broadcast(ctx.rank() == root ? 2.5 : -1.0, root);
    require(v == 2.5, "scalar broadcast");
    auto t = ctx.rand<float>(12345, 77);
    std::vector<float> want(t.numel());
    ctx.barrier();  // the root's random numbers are written before anyone reads them
    ctx.copy_to_host(want.data(), t.on_rank(root), t.bytes());
    ctx.barrier();
    ctx.broadcast(t, root);
    require(t.to_host() == want, "buffer broadcast");
    auto ranks = ctx.all_gather(ctx.rank());
    for (int r = 0; r < ctx.world(); ++r) require(ranks[static_cast<std::size_t>(r)] == r, "all_gather");
  });
}

TEST_P(Runtime, ModuleAndLaunchErrors) {
  IRIS_REQUIRE_CUDA();  // hand-written CUDA test kernels
  run_ranks(GetParam(), [](Context& ctx, Module& m) {
    std::string msg;
    try {
      m.kernel("no_such_kernel");
    } catch (const Error& e) {
      msg = e.what();
    }
    require(msg.find("not found") != std::string::npos && msg.find("three_params") != std::string::npos,
            "unknown kernel lists the kernels there are: " + msg);
    Kernel k = m.kernel("three_params");
    auto out = ctx.zeros<float>(1);
    ctx.launch(k, LaunchConfig{1, 32}, out.data(), 42);
    require(out.to_host()[0] == 42.0f, "launch with a tensor pointer and an int");
    if (!k.param_sizes().empty()) {
      msg.clear();
      try {
        ctx.launch(k, LaunchConfig{1, 32}, out.data());
      } catch (const Error& e) {
        msg = e.what();
      }
      require(msg.find("takes 3 parameters but 2") != std::string::npos, "argument count checked: " + msg);
      msg.clear();
      try {
        ctx.launch(k, LaunchConfig{1, 32}, out.data(), 42.0);
      } catch (const Error& e) {
        msg = e.what();
      }
      require(msg.find("parameter 2 is 4 bytes") != std::string::npos, "argument size checked: " + msg);
    }
    const auto junk = std::filesystem::temp_directory_path() / ("iris_junk_" + std::to_string(ctx.rank()) + ".bin");
    std::ofstream(junk) << "this is not a code object";
    msg.clear();
    try {
      ctx.load_module(junk);
    } catch (const Error& e) {
      msg = e.what();
    }
    std::filesystem::remove(junk);
    require(msg.find("not a code object") != std::string::npos, "junk module rejected: " + msg);
    msg.clear();
    try {
      ctx.load_module(std::filesystem::path("/nonexistent/kernels.cubin"));
    } catch (const Error& e) {
      msg = e.what();
    }
    require(msg.find("cannot read module") != std::string::npos, "missing module file: " + msg);
  });
}

IRIS_GPU_SUITE(Runtime);

TEST(RuntimeSetup, MoreRanksThanGpusWithoutSharingIsAnError) {
  if (device_count() == 0) GTEST_SKIP() << "no GPU found";
  if (launched_by_mpi()) GTEST_SKIP() << "thread mode only";
  Options o;
  o.heap_bytes = 64 << 20;
  o.ranks = device_count() + 1;
  if (o.ranks > device::kMaxRanks) GTEST_SKIP() << "too many GPUs for this check";
  try {
    run(o, [](Context&) {});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("share"), std::string::npos) << e.what();
  }
}

TEST(RuntimeSetup, ARankFailureDoesNotHangTheOthers) {
  if (device_count() == 0) GTEST_SKIP() << "no GPU found";
  if (launched_by_mpi()) GTEST_SKIP() << "thread mode only (under MPI a failure ends the job)";
  Options o;
  o.heap_bytes = 64 << 20;
  o.ranks = 2;
  o.share_gpus = true;
  const int rc = run(o, [](Context& ctx) {
    if (ctx.rank() == 1) throw Error("deliberate failure");
    ctx.barrier();  // would wait forever for rank 1 without the abort path
  });
  EXPECT_EQ(rc, 1);
}

}  // namespace
}  // namespace iris::test
