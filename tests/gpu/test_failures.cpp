// Failures end, with words: a wait nobody satisfies, collectives that ranks call
// differently, a rank that throws while its peer is in a device barrier, ranks that
// disagree on their device barriers, a role kernel that cannot be resident at once, a
// truncated code object and sizes that overflow.
// Each test asserts an iris::Error that names the rank and what it waited on, within
// the timeout plus a few seconds. Ranks are threads sharing the GPU: under mpirun a
// failing rank ends the whole job (MPI_Abort), which a test cannot observe.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>
#include <thread>

#include "gpu_harness.hpp"
#include "iris/ccl.hpp"

IRIS_DECLARE_EMBEDDED(format_cubin)

namespace iris::test {
namespace {

using clock = std::chrono::steady_clock;

// What each rank's body threw, and how long the whole job took.
struct Outcome {
  int rc = 0;
  double seconds = 0;
  std::vector<std::string> errors;  // per rank; empty: it did not throw
};

Outcome run_failing(int ranks, double wait_timeout, const std::function<void(Context&)>& body) {
  Options o;
  o.heap_bytes = std::size_t{64} << 20;
  o.ranks = ranks;
  o.share_gpus = true;
  o.wait_timeout = wait_timeout;
  o.host_timeout = 60;
  Outcome out;
  out.errors.resize(static_cast<std::size_t>(ranks));
  std::mutex mu;
  const auto start = clock::now();
  out.rc = run(o, [&](Context& ctx) {
    try {
      body(ctx);
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(mu);
      out.errors[static_cast<std::size_t>(ctx.rank())] = e.what();
      throw;
    }
  });
  out.seconds = std::chrono::duration<double>(clock::now() - start).count();
  return out;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class Failures : public ::testing::Test {
 protected:
  void SetUp() override {
    if (launched_by_mpi()) GTEST_SKIP() << "a failing rank ends an mpirun job (MPI_Abort); run these with threads";
    if (device_count() == 0) GTEST_SKIP() << "no GPU found";
  }
};

const char* kNeverSignalled = R"(kernel never(flag: symmetric tensor<u64>[1]) {
    wait(flag[0] >= 1 as u64);
}
)";

TEST_F(Failures, WaitNobodySignalsGivesUpNamingTheFlag) {
  const Outcome r = run_failing(2, 2.0, [](Context& ctx) {
    Program p = jit_program(ctx, kNeverSignalled, "never_signalled.iris");
    auto flag = ctx.zeros<std::uint64_t>(1);
    ctx.barrier();
    if (ctx.rank() == 0) p.launch("never", {flag});
    ctx.synchronize();
    ctx.barrier();
  });
  EXPECT_EQ(r.rc, 1);
  EXPECT_LT(r.seconds, 2.0 + 5.0) << "the job ends within the wait timeout plus 5 s";
  const std::string& e = r.errors[0];
  EXPECT_TRUE(has(e, "kernel 'never' at never_signalled.iris:2:5: wait(flag[0] >= 1 as u64)")) << e;
  EXPECT_TRUE(has(e, "but it is 0")) << e;
  if (on_host_backend()) {
    // Rank 1 waits in the host barrier, where it can signal nothing: the host backend
    // reports the deadlock at once instead of waiting out the timeout.
    EXPECT_TRUE(has(e, "deadlock: every rank is blocked")) << e;
    EXPECT_TRUE(has(e, "waits for flag[0] >= 1")) << e;
    EXPECT_TRUE(has(r.errors[1], "rank 0: deadlock")) << r.errors[1];
    return;
  }
  EXPECT_TRUE(has(e, "rank 0: a device wait gave up after")) << e;
  EXPECT_TRUE(has(e, "to be >= 1")) << e;
  EXPECT_TRUE(has(e, "IRIS_WAIT_TIMEOUT")) << e;
  EXPECT_TRUE(has(r.errors[1], "rank 0: a device wait gave up")) << r.errors[1];
}

// A collective that one rank never calls: the error names the C++ call (collective,
// element type, count, op, algorithm), this rank's call number, and the rank that did
// not come. Rank 1 is busy on the host meanwhile, not in a host collective, so the wait
// times out on the host backend too instead of being reported as a deadlock.
TEST_F(Failures, CollectiveOneRankSkipsNamesTheCallAndTheRank) {
  const Outcome r = run_failing(2, 1.0, [](Context& ctx) {
    auto x = ctx.ones<float>(std::size_t{1000});
    auto y = ctx.zeros<float>(std::size_t{1000});
    ccl::all_reduce(ctx, x, y, {ccl::ReduceOp::sum, ccl::Algorithm::one_shot_push, nullptr});  // sets up on both
    ctx.synchronize();
    ctx.barrier();
    if (ctx.rank() == 0) {
      ccl::all_reduce(ctx, x, y, {ccl::ReduceOp::max, ccl::Algorithm::one_shot_push, nullptr});
      ctx.synchronize();
    } else {
      std::this_thread::sleep_for(std::chrono::seconds(4));
    }
    ctx.barrier();
  });
  EXPECT_EQ(r.rc, 1);
  const std::string& e = r.errors[0];
  EXPECT_TRUE(has(e, "iris::ccl::all_reduce of 1000 f32 elements (max, one_shot_push), this rank's call 2")) << e;
  EXPECT_TRUE(has(e, "it waited for rank 1's program 0's call word; rank 1 had not come to this call here")) << e;
  EXPECT_TRUE(has(e, "every rank must make the same collective calls")) << e;
}

// The same with all_reduce's grid form (arrival and departure flags over the whole grid)
// at 3 ranks, rank 2 skipping: the ranks that came name it, and the call they made,
// though their other programs may have gone on past the wait that gave up.
TEST_F(Failures, GridCollectiveOneRankSkipsNamesTheRank) {
  const Outcome r = run_failing(3, 1.0, [](Context& ctx) {
    auto x = ctx.ones<float>(std::size_t{1000});
    auto y = ctx.zeros<float>(std::size_t{1000});
    ccl::all_reduce(ctx, x, y, {ccl::ReduceOp::sum, ccl::Algorithm::two_shot, nullptr});  // sets up on every rank
    ctx.synchronize();
    ctx.barrier();
    if (ctx.rank() != 2) {
      ccl::all_reduce(ctx, x, y, {ccl::ReduceOp::max, ccl::Algorithm::two_shot, nullptr});
      ctx.synchronize();
    } else {
      std::this_thread::sleep_for(std::chrono::seconds(4));
    }
    ctx.barrier();
  });
  EXPECT_EQ(r.rc, 1);
  for (int rank = 0; rank < 2; ++rank) {
    const std::string& e = r.errors[static_cast<std::size_t>(rank)];
    EXPECT_TRUE(has(e, "iris::ccl::all_reduce of 1000 f32 elements (max, two_shot), this rank's call 2")) << e;
    EXPECT_TRUE(has(e, "rank 2 had not come to this call here")) << e;
    EXPECT_FALSE(has(e, "ranks 1, 2 had not come") || has(e, "ranks 0, 2 had not come")) << e;
  }
}

// Collectives called differently on the two ranks: each rank's call checks its peers'
// call words, so instead of a wrong result every rank ends in an error that names both
// calls (a rank that returned, through its peer's failure). `setup`
// runs on both ranks first (each variant once, so that the mismatched call finds its
// instances and scratch made); `call` then runs with the rank.
struct Mismatch {
  const char* name;
  std::function<void(Context&)> setup;
  std::function<void(Context&, int rank)> call;
  std::vector<std::string> every_rank;  // in every rank's error
  std::vector<std::string> rank0;       // in rank 0's
};

TEST_F(Failures, CollectivesCalledDifferentlyFailEveryRankNamingBothCalls) {
  const std::size_t n = 1000, m = 3000;
  using ccl::Algorithm;
  using ccl::ReduceOp;
  using ccl::Route;
  const auto all_reduce = [](Context& ctx, DType dt, std::size_t count, ReduceOp op, Algorithm a) {
    void* x = ctx.heap_alloc(m * 4);
    void* y = ctx.heap_alloc(m * 4);
    ctx.zero_async(x, m * 4);
    ctx.barrier();
    ccl::detail::all_reduce(ctx, dt, x, y, count, {op, a, nullptr});
  };
  const auto broadcast = [](Context& ctx, std::size_t count, Route route, int root) {
    void* x = ctx.heap_alloc(m * 4);
    ctx.zero_async(x, m * 4);
    ctx.barrier();
    ccl::Options o;
    o.route = route;
    ccl::detail::broadcast(ctx, DType::f32, x, count, root, o);
  };
  // all_gather of n a rank, or all_to_all of n a slice: the same buffers either way.
  const auto exchange = [](Context& ctx, bool gather) {
    void* x = ctx.heap_alloc(2 * n * 4);
    void* y = ctx.heap_alloc(2 * n * 4);
    ctx.zero_async(x, 2 * n * 4);
    ctx.barrier();
    ccl::Options o;
    o.route = Route::staged;
    if (gather) ccl::detail::all_gather(ctx, DType::f32, x, y, n, o);
    else ccl::detail::all_to_all(ctx, DType::f32, x, y, n, o);
  };
  const auto nothing = [](Context&) {};
  const std::vector<Mismatch> cases = {
      // First calls: nothing is made yet, and both ranks make the same allocations.
      {"f32 against i32", nothing,
       [&](Context& ctx, int r) { all_reduce(ctx, r == 0 ? DType::f32 : DType::i32, n, ReduceOp::sum, Algorithm::one_shot_push); },
       {"where this rank called all_reduce of 1000 "},
       {"rank 1 called all_reduce of i32 elements (sum, one_shot_push) where this rank called all_reduce of 1000 f32 "
        "elements (sum, one_shot_push)"}},
      {"sum against max", nothing,
       [&](Context& ctx, int r) { all_reduce(ctx, DType::f32, n, r == 0 ? ReduceOp::sum : ReduceOp::max, Algorithm::two_shot); },
       {"where this rank called all_reduce of 1000 f32 elements"},
       {"rank 1 called all_reduce of f32 elements (max, two_shot) where this rank called all_reduce of 1000 f32 "
        "elements (sum, two_shot)"}},
      {"sum against min in words", nothing,
       [&](Context& ctx, int r) { all_reduce(ctx, DType::f32, n, r == 0 ? ReduceOp::sum : ReduceOp::min, Algorithm::one_shot_ll); },
       {"where this rank called all_reduce of 1000 f32 elements"},
       {"rank 1 called all_reduce of f32 elements (min, one_shot_ll) where this rank called all_reduce of 1000 f32 "
        "elements (sum, one_shot_ll)"}},
      {"1000 against 3000 elements",
       [&](Context& ctx) {
         all_reduce(ctx, DType::f32, m, ReduceOp::sum, Algorithm::two_shot_push);
         all_reduce(ctx, DType::f32, n, ReduceOp::sum, Algorithm::two_shot_push);
       },
       [&](Context& ctx, int r) { all_reduce(ctx, DType::f32, r == 0 ? n : m, ReduceOp::sum, Algorithm::two_shot_push); },
       {"of another element count (folded into 12 bits: "},
       {"rank 1 called all_reduce of f32 elements (sum, two_shot_push) of another element count (folded into 12 bits: "
        "0xbb8, this rank's 0x3e8) where this rank called all_reduce of 1000 f32 elements (sum, two_shot_push)"}},
      // broadcast: the other rank checks root's word, root (after its stores) every
      // rank's; whichever wait gives up first, both calls are named.
      {"broadcast of 1000 against 3000 in words",
       [&](Context& ctx) {
         broadcast(ctx, m, Route::ll, 0);
         broadcast(ctx, n, Route::ll, 0);
       },
       [&](Context& ctx, int r) { broadcast(ctx, r == 0 ? n : m, Route::ll, 0); },
       {"called broadcast of f32 elements (root 0, ll) of another element count (folded into 12 bits: "},
       {}},
      {"broadcast of 1000 against 3000 staged",
       [&](Context& ctx) {
         broadcast(ctx, m, Route::staged, 0);
         broadcast(ctx, n, Route::staged, 0);
       },
       [&](Context& ctx, int r) { broadcast(ctx, r == 0 ? n : m, Route::staged, 0); },
       {"called broadcast of f32 elements (root 0, staged) of another element count (folded into 12 bits: "},
       {}},
      // Two ranks that each take themselves for the root: each checks the other's word
      // after its stores, and names the other's call (in words, staged and in slots).
      {"broadcast from two roots in words",
       [&](Context& ctx) { broadcast(ctx, n, Route::ll, 0); },
       [&](Context& ctx, int r) { broadcast(ctx, n, Route::ll, r); },
       {"called broadcast of f32 elements (root ", "where this rank called broadcast of 1000 f32 elements (root "},
       {}},
      {"broadcast from two roots staged",
       [&](Context& ctx) { broadcast(ctx, n, Route::staged, 0); },
       [&](Context& ctx, int r) { broadcast(ctx, n, Route::staged, r); },
       {"called broadcast of f32 elements (root ", "where this rank called broadcast of 1000 f32 elements (root "},
       {}},
      {"broadcast from two roots in slots",
       [&](Context& ctx) { broadcast(ctx, n, Route::slots, 0); },
       [&](Context& ctx, int r) { broadcast(ctx, n, Route::slots, r); },
       {"called broadcast of f32 elements (root ", "where this rank called broadcast of 1000 f32 elements (root "},
       {}},
      // First calls of two kernels whose channels are made alike: the same flags and
      // scratch on both ranks, so the words say which call each made.
      {"all_gather against all_to_all", nothing, [&](Context& ctx, int r) { exchange(ctx, r == 0); },
       {"where this rank called all_"},
       {"rank 1 called all_to_all of f32 elements (staged) where this rank called all_gather of 2000 f32 elements "
        "(staged)"}},
      // Once both are made, each has flags of its own: the peer's word is not there.
      {"all_gather against all_to_all, both made before",
       [&](Context& ctx) {
         exchange(ctx, true);
         exchange(ctx, false);
       },
       [&](Context& ctx, int r) { exchange(ctx, r == 0); }, {"had not come to this call here (a different collective call, or none)"},
       {"iris::ccl::all_gather of 2000 f32 elements (staged), this rank's call 2"}},
  };
  const double timeout = 2.0;
  for (const Mismatch& c : cases) {
    SCOPED_TRACE(c.name);
    const Outcome r = run_failing(2, timeout, [&](Context& ctx) {
      c.setup(ctx);
      ctx.barrier();
      c.call(ctx, ctx.rank());
      ctx.synchronize();
      ctx.barrier();
    });
    EXPECT_EQ(r.rc, 1);
    EXPECT_LT(r.seconds, timeout + 5.0) << "the job ends within the wait timeout plus 5 s";
    for (const std::string& e : r.errors) {
      EXPECT_TRUE(has(e, "every rank must make the same collective calls, in the same order")) << e;
      for (const std::string& part : c.every_rank) EXPECT_TRUE(has(e, part)) << e;
    }
    for (const std::string& part : c.rank0) EXPECT_TRUE(has(r.errors[0], part)) << r.errors[0];
  }
}

TEST_F(Failures, RankThatThrowsEndsItsPeersDeviceBarrier) {
  // The timeout is long: what ends rank 0's barrier must be rank 1's failure.
  const Outcome r = run_failing(2, 60.0, [](Context& ctx) {
    ctx.barrier();
    if (ctx.rank() == 1) throw Error("planted failure on rank 1");
    ctx.device_barrier();
    ctx.synchronize();
  });
  EXPECT_EQ(r.rc, 1);
  EXPECT_LT(r.seconds, 5.0) << "the peer's failure ends the barrier within seconds";
  EXPECT_TRUE(has(r.errors[1], "planted failure on rank 1")) << r.errors[1];
  const std::string& e = r.errors[0];
  EXPECT_TRUE(has(e, "rank 0 stopped because rank 1 failed: planted failure on rank 1")) << e;
  // ... and it says where its own waits stood.
  EXPECT_TRUE(has(e, "it was at device barrier #1, which rank 1 had not reached (it was at #0)")) << e;
}

TEST_F(Failures, DeviceBarrierCountMismatchNamesTheLaggingRank) {
  const Outcome r = run_failing(2, 2.0, [](Context& ctx) {
    ctx.barrier();
    ctx.device_barrier();
    if (ctx.rank() == 0) ctx.device_barrier();  // one more than rank 1
    ctx.synchronize();
  });
  EXPECT_EQ(r.rc, 1);
  EXPECT_LT(r.seconds, 2.0 + 5.0);
  const std::string& e = r.errors[0];
  // The host backend sees every rank blocked (rank 1 in its teardown barrier) and says so
  // at once; a GPU gives up after the wait timeout.
  EXPECT_TRUE(has(e, on_host_backend() ? "deadlock: every rank is blocked" : "rank 0: the device barrier gave up after"))
      << e;
  EXPECT_TRUE(has(e, "this rank is at device barrier #2, but rank 1 has reached only #1")) << e;
}

// 16 waiting programs per SM pass irisc's check (no GPU holds more than 32 per SM), but
// programs of 256 threads fit 8 to an SM: the launcher must refuse.
const char* kOversubscribedRoles = R"(kernel handoff(flag: symmetric tensor<u32>[1]) {
    role waiter(programs: sms * 16) {
        wait(flag[0] >= 1);
    }
    role poster(programs: 1) {
        signal(flag[0], 1);
    }
}
)";

TEST_F(Failures, RoleKernelThatCannotBeResidentIsRefused) {
  const Outcome r = run_failing(1, 2.0, [](Context& ctx) {
    Program p = jit_program(ctx, kOversubscribedRoles, "handoff.iris");
    auto flag = ctx.zeros<std::uint32_t>(1);
    p.launch("handoff", {flag});
    ctx.synchronize();
  });
  EXPECT_EQ(r.rc, 1);
  EXPECT_LT(r.seconds, 30.0);
  const std::string& e = r.errors[0];
  EXPECT_TRUE(has(e, "kernel 'handoff': its roles wait on each other")) << e;
  EXPECT_TRUE(has(e, "waiter: ")) << e;
  EXPECT_TRUE(has(e, "must run at once, but this GPU holds")) << e;
}

const char* kTouch = R"(kernel touch(x: tensor<u64>[1]) {
    store(x[0], 1 as u64);
}
)";

TEST_F(Failures, TruncatedCodeObjectAndOverflowingSizesAreErrors) {
  const Outcome r = run_failing(1, 2.0, [](Context& ctx) {
    const auto whole = embedded::gpu_test_kernels();
    std::string truncated_error, huge_error, launch_error;
    try {
      ctx.load_module(whole.first(300), "the first 300 bytes of the test kernels");
    } catch (const Error& e) {
      truncated_error = e.what();
    }
    require(has(truncated_error, "the first 300 bytes of the test kernels"), "truncated: " + truncated_error);
    std::string cubin_error;
    try {
      ctx.load_module(embedded::format_cubin().first(300), "the first 300 bytes of a cubin");
    } catch (const Error& e) {
      cubin_error = e.what();
    }
    require(has(cubin_error, "the first 300 bytes of a cubin is truncated"), "truncated cubin: " + cubin_error);
    try {
      auto t = ctx.zeros<float>(std::size_t{1} << 62);
    } catch (const Error& e) {
      huge_error = e.what();
    }
    require(has(huge_error, "more than 64 bits can count"), "2^62 floats: " + huge_error);
    Program p = jit_program(ctx, kTouch, "touch.iris");
    auto small = ctx.zeros<std::uint64_t>(1);
    try {
      p.launch("touch", {Arg::device_buffer(small.data(), DType::u64, {1}, 4)});
    } catch (const Error& e) {
      launch_error = e.what();
    }
    require(has(launch_error, "needs 8 bytes, but its buffer has 4"), "launch: " + launch_error);
    throw Error("all three reported");
  });
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(has(r.errors[0], "all three reported")) << r.errors[0];
}

// A compute loop that never looks at the abort word (n iterations: longer than any test).
const char* kSpin = R"(kernel spin(x: tensor<f32>[N], flag: symmetric tensor<u64>[1], n: i64) {
    if rank == 0 {
        let acc = 0.0;
        for k in range(0, n) { acc = acc + load(x[k % N]); }
        store(x[0], acc);
    }
    if rank == 1 { wait(flag[0] >= 1 as u64); }
}
)";

// The watchdog's job, run by the test below in a process of its own (it ends that
// process): rank 1's wait gives up, the job fails, and rank 0's kernel spins on.
TEST_F(Failures, WatchdogChild) {
  if (!std::getenv("IRIS_TEST_WATCHDOG_CHILD")) GTEST_SKIP() << "run by WatchdogEndsAProcessWhoseKernelDoesNotStop";
  run_failing(2, 1.0, [](Context& ctx) {
    Program p = jit_program(ctx, kSpin, "spin.iris");
    auto x = ctx.ones<float>(std::size_t{64});
    auto flag = ctx.zeros<std::uint64_t>(1);
    ctx.barrier();
    p.launch("spin", {x, flag, std::int64_t{1} << 50});
    ctx.synchronize();
  });
  std::printf("run() returned: the watchdog did not end the process\n");
}

// A rank whose kernel does not stop after its job failed (a loop that never looks at
// the abort word) is reported, and the process ends with status 1 after the grace
// period, as PyTorch's watchdog does, instead of living as long as the kernel runs.
TEST_F(Failures, WatchdogEndsAProcessWhoseKernelDoesNotStop) {
  if (std::getenv("IRIS_TEST_WATCHDOG_CHILD")) GTEST_SKIP();
  if (on_host_backend()) {
    GTEST_SKIP() << "the host backend's loops stop with their job (HostKernelsChecks.ALongLoopStopsWhenTheJobAborts)";
  }
  const std::string out = ::testing::TempDir() + "iris_watchdog_child.txt";
  const std::string cmd = "IRIS_TEST_WATCHDOG_CHILD=1 IRIS_TEST_RANKS=2 timeout 60 /proc/" +
                          std::to_string(::getpid()) + "/exe --gtest_filter=Failures.WatchdogChild > " + out +
                          " 2>&1";
  const auto start = clock::now();
  const int status = std::system(cmd.c_str());
  const double seconds = std::chrono::duration<double>(clock::now() - start).count();
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(WIFEXITED(status)) << text;
  EXPECT_EQ(WEXITSTATUS(status), 1) << text;
  EXPECT_TRUE(has(text, "ending the process (exit status 1): rank 0: its GPU work did not stop")) << text;
  EXPECT_FALSE(has(text, "run() returned")) << text;
  EXPECT_LT(seconds, 45.0) << text;
}

}  // namespace
}  // namespace iris::test
