// irisc kernels on the host backend: the TIR interpreter's checks (an out-of-bounds
// access and a deadlock, each reported with the .iris file:line) and its semantics
// (roles that wait on each other, atomics across ranks, integer and float arithmetic,
// masked tails), through the same API as on a GPU: jit_program and Program::launch.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <cmath>
#include <cstring>
#include <mutex>
#include <thread>

#include <unistd.h>

#include "iris/ccl.hpp"
#include "iris/iris.hpp"

#include "compiler/contract/launch_contract.hpp"
#include "compiler/driver/compile.hpp"

namespace iris {
namespace {

// Runs `body` on `ranks` host ranks; returns run()'s code and the first error text of
// each rank (empty where none).
struct Outcome {
  int rc = 0;
  std::vector<std::string> errors;
  double seconds = 0;
};

Outcome run_host(int ranks, const std::function<void(Context&)>& body, double wait_timeout = 60,
                 bool check_races = false) {
  Options o;
  o.backend = "host";
  o.check_races = check_races;
  o.ranks = ranks;
  o.heap_bytes = std::size_t{8} << 20;
  o.wait_timeout = wait_timeout;
  Outcome out;
  out.errors.resize(static_cast<std::size_t>(ranks));
  std::mutex mu;
  const auto start = std::chrono::steady_clock::now();
  out.rc = run(o, [&](Context& ctx) {
    try {
      body(ctx);
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(mu);
      out.errors[static_cast<std::size_t>(ctx.rank())] = e.what();
      throw;
    }
  });
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class HostKernels : public ::testing::TestWithParam<int> {};

// A store one element past the end: the error names the file, line and column, the
// statement, the index and the tensor's shape.
const char* kShift = R"(kernel shift(x: tensor<f32>[N], y: tensor<f32>[N]) {
    for i in blocks(N, 256) {
        store(y[i + 1], load(x[i]));
    }
}
)";

TEST_P(HostKernels, OutOfBoundsStoreNamesTheLineAndTheIndex) {
  const int ranks = GetParam();
  const Outcome o = run_host(ranks, [](Context& ctx) {
    Program p = jit_program(ctx, kShift, "shift.iris");
    auto x = ctx.arange<float>(1000);
    auto y = ctx.zeros<float>(1000);
    p.launch("shift", {x, y});
    ctx.synchronize();
  });
  EXPECT_EQ(o.rc, 1);
  for (int r = 0; r < ranks; ++r) {
    const std::string& e = o.errors[static_cast<std::size_t>(r)];
    EXPECT_TRUE(has(e, "kernel 'shift' at shift.iris:3:9: store(y[i + 1], load(x[i]))")) << e;
    EXPECT_TRUE(has(e, "a store to element 1000 of y, outside the tensor (shape [1000], 1000 elements)")) << e;
    EXPECT_TRUE(has(e, "rank " + std::to_string(r))) << e;
  }
}

// A load from a peer past the end of a 2-D tensor's row.
const char* kRow = R"(kernel row(a: symmetric tensor<i32>[R, C], out: tensor<i32>[C]) {
    for j in blocks(C, 64) {
        store(out[j], load(a[R - 1, j + 1], from: (rank + 1) % world));
    }
}
)";

TEST(HostKernelsChecks, OutOfBoundsColumnOfAPeersTensor) {
  const Outcome o = run_host(2, [](Context& ctx) {
    Program p = jit_program(ctx, kRow, "row.iris");
    auto a = ctx.zeros<std::int32_t>({4, 100});
    auto out = ctx.zeros<std::int32_t>(std::size_t{100});
    ctx.barrier();
    p.launch("row", {a, out});
    ctx.synchronize();
  });
  EXPECT_EQ(o.rc, 1);
  EXPECT_TRUE(has(o.errors[0], "row.iris:3:23: load(a[R - 1, j + 1], from: (rank + 1) % world)")) << o.errors[0];
  EXPECT_TRUE(has(o.errors[0], "a load of element [3, 100] of a, outside the tensor (shape [4, 100])")) << o.errors[0];
}

// A column index past its row whose flat offset is still inside the tensor: x[0, 128]
// of a [4, 128] x is x[1, 0]'s memory, which a GPU writes without a word. The host
// backend checks each index against its own dimension.
const char* kPastTheRow = R"(kernel past_the_row(x: tensor<f32>[R, C]) {
    for i in blocks(C + 10, 64) {
        store(x[0, i], 1.0);
    }
}
)";

TEST(HostKernelsChecks, ColumnPastItsRowThoughTheFlatOffsetIsInside) {
  const Outcome o = run_host(1, [](Context& ctx) {
    Program p = jit_program(ctx, kPastTheRow, "past_the_row.iris");
    auto x = ctx.zeros<float>({4, 128});
    p.launch("past_the_row", {x});
    ctx.synchronize();
  });
  EXPECT_EQ(o.rc, 1);
  EXPECT_TRUE(has(o.errors[0], "past_the_row.iris:3:9: store(x[0, i], 1.0)")) << o.errors[0];
  EXPECT_TRUE(has(o.errors[0], "element [0, 128] of x, outside the tensor (shape [4, 128])")) << o.errors[0];
}

// The same for one element of a 3-D tensor: x[1, 4, 0] of a [3, 4, 8] x is x[2, 0, 0]'s
// memory.
const char* kPastTheMiddle = R"(kernel past_the_middle(x: tensor<i32>[A, B, C]) {
    store(x[1, B, 0], 7);
}
)";

TEST(HostKernelsChecks, EveryIndexAgainstItsOwnDimension) {
  const Outcome o = run_host(1, [](Context& ctx) {
    Program p = jit_program(ctx, kPastTheMiddle, "past_the_middle.iris");
    auto x = ctx.zeros<std::int32_t>({3, 4, 8});
    p.launch("past_the_middle", {x});
    ctx.synchronize();
  });
  EXPECT_EQ(o.rc, 1);
  EXPECT_TRUE(has(o.errors[0], "element [1, 4, 0] of x, outside the tensor (shape [3, 4, 8])")) << o.errors[0];
}

// 16-bit values go two to a data-and-flag word, so a view of them starts at an even
// value; and a row of M words holds 2M of them, so values 2M.. are past the row (where
// a flat offset would be the next row's words).
const char* kOddStart = R"(kernel odd(w: symmetric tensor<u64>[R, M], x: tensor<bf16>[N], s: int) {
    for i in blocks(N, 64) {
        store(w[1, i + s], load(x[i]), flag: 1);
    }
}
)";

TEST(HostKernelsChecks, SixteenBitWordsFromAnEvenStartWithinTheirRow) {
  const auto run_with = [](std::int64_t s) {
    return run_host(1, [s](Context& ctx) {
      Program p = jit_program(ctx, kOddStart, "odd.iris");
      auto w = ctx.zeros<std::uint64_t>({2, 64});
      auto x = ctx.zeros<bfloat16>(std::size_t{64});
      p.launch("odd", {w, x, s});
      ctx.synchronize();
    });
  };
  Outcome o = run_with(0);
  EXPECT_EQ(o.rc, 0) << (o.errors.empty() ? "" : o.errors[0]);
  o = run_with(1);
  ASSERT_EQ(o.rc, 1);
  EXPECT_TRUE(has(o.errors[0], "16-bit values go two to a word, so a view of them starts at an even index, not at value 1 "
                               "of its row")) << o.errors[0];
  o = run_with(100);  // values 100..163 of a row of 128
  ASSERT_EQ(o.rc, 1);
  EXPECT_TRUE(has(o.errors[0], "index 100 of dimension 1 (values 100..163, two to a word: 128 a row) is outside the tensor "
                               "(shape [2, 64])")) << o.errors[0];
}

// A wait timeout shorter than a nanosecond is a timeout, not forever: rank 0's wait
// gives up while rank 1 is still busy on the host (so no deadlock is declared).
const char* kNobodySignals = R"(kernel nobody(flag: symmetric tensor<u64>[1]) {
    if rank == 0 { wait(flag[0] >= 1 as u64); }
}
)";

TEST(HostKernelsChecks, SubNanosecondWaitTimeoutIsNotForever) {
  const Outcome o = run_host(2, [](Context& ctx) {
    Program p = jit_program(ctx, kNobodySignals, "nobody.iris");
    auto flag = ctx.zeros<std::uint64_t>(1);
    if (ctx.rank() == 1) std::this_thread::sleep_for(std::chrono::seconds(3));
    p.launch("nobody", {flag});
    ctx.synchronize();
  }, 1e-10);
  EXPECT_EQ(o.rc, 1);
  EXPECT_TRUE(has(o.errors[0], "gave up")) << o.errors[0];
}

// A heap buffer that claims more bytes than the heap has after it, and host copies that
// run past the heap's end, are refused before anything is written.
const char* kFillOnes = R"(kernel fill_ones(x: tensor<f32>[N]) {
    for i in blocks(N, 256) { store(x[i], 1.0); }
}
)";

TEST(HostKernelsChecks, RangesPastTheHeapsEndAreRefused) {
  const Outcome o = run_host(1, [](Context& ctx) {
    Program p = jit_program(ctx, kFillOnes, "fill_ones.iris");
    auto t = ctx.zeros<float>(16);
    const std::size_t big = std::size_t{1} << 30;  // the test heap is 8 MiB
    std::string launch_error, copy_error;
    try {
      p.launch("fill_ones", {Arg::heap_buffer(t.data(), DType::f32, {static_cast<std::int64_t>(big / 4)}, big)});
      ctx.synchronize();
    } catch (const Error& e) {
      launch_error = e.what();
    }
    std::vector<char> host(std::size_t{16} << 20);
    try {
      ctx.copy_to_host(host.data(), t.data(), host.size());
    } catch (const Error& e) {
      copy_error = e.what();
    }
    EXPECT_TRUE(has(launch_error, "runs past the end of the symmetric heap")) << launch_error;
    EXPECT_TRUE(has(copy_error, "copy_to_host: 16777216 bytes from heap offset")) << copy_error;
    EXPECT_TRUE(has(copy_error, "run past the end of the symmetric heap")) << copy_error;
    EXPECT_TRUE(ctx.in_heap(t.data(), 64));
    EXPECT_FALSE(ctx.in_heap(t.data(), big));
  });
  EXPECT_EQ(o.rc, 0) << o.errors[0];
}

// Files planted in the working directory under the standard library's names do not
// replace it: not for the library's own collectives (compiled from dsl/ccl/...), and not
// for a user's kernel that imports "ccl/common.iris".
const char* kUsesCommon = R"(import "ccl/common.iris";
kernel twice(x: tensor<i32>[N], op: int) {
    for i in blocks(N, 256) { store(x[i], combine(load(x[i]), load(x[i]), op)); }
}
)";

TEST(HostKernelsChecks, TheWorkingDirectoryCannotReplaceTheStandardLibrary) {
  namespace fs = std::filesystem;
  const fs::path before = fs::current_path();
  const fs::path dir = fs::temp_directory_path() / ("iris_planted_" + std::to_string(::getpid()));
  for (const char* f : {"dsl/ccl/ccl/common.iris", "dsl/ccl/common.iris", "ccl/common.iris", "dsl/ccl/all_reduce_push.iris"}) {
    fs::create_directories((dir / f).parent_path());
    std::ofstream(dir / f) << "fn combine<T: type>(a: tile<T>, b: tile<T>, op: int) { return a - b + 1000; }\n";
  }
  fs::current_path(dir);
  const Outcome o = run_host(2, [](Context& ctx) {
    auto x = ctx.full<std::int32_t>(std::size_t{1000}, 1 + ctx.rank());
    ccl::all_reduce(ctx, x, {ccl::ReduceOp::sum, ccl::Algorithm::one_shot_push, nullptr});
    const std::vector<std::int32_t> sum = x.to_host();
    EXPECT_EQ(sum.front(), 3);
    EXPECT_EQ(sum.back(), 3);
    Program p = jit_program(ctx, kUsesCommon, "twice.iris");
    auto y = ctx.full<std::int32_t>(std::size_t{300}, 5);
    p.launch("twice", {y, std::int64_t{0}});
    EXPECT_EQ(y.to_host()[299], 10);
  });
  fs::current_path(before);
  fs::remove_all(dir);
  EXPECT_EQ(o.rc, 0) << o.errors[0];
}

// A stray MPI launcher variable does not turn a host-backend job into an MPI job: its
// ranks are still this process's threads.
TEST(HostKernelsChecks, StrayMpiVariablesLeaveTheHostBackendToThreads) {
  ::setenv("PMI_SIZE", "4", 1);
  ::setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  int seen = 0;
  std::mutex mu;
  const Outcome o = run_host(2, [&](Context& ctx) {
    std::lock_guard<std::mutex> lock(mu);
    seen += ctx.world() == 2 ? 1 : 0;
  });
  ::unsetenv("PMI_SIZE");
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  EXPECT_EQ(o.rc, 0) << o.errors[0];
  EXPECT_EQ(seen, 2);
}

// The trace is never written through a symbolic link (IRIS_TRACE naming a link would
// have truncated whatever it points at).
TEST(HostKernelsChecks, TheTraceDoesNotFollowASymbolicLink) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("iris_trace_link_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path precious = dir / "precious.txt", link = dir / "trace.json";
  std::ofstream(precious) << "keep me";
  fs::create_symlink(precious, link);
  Options o;
  o.backend = "host";
  o.ranks = 2;
  o.heap_bytes = std::size_t{8} << 20;
  o.trace = link.string();
  const int rc = run(o, [](Context& ctx) { ctx.barrier(); });
  std::ifstream in(precious);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove_all(dir);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(text, "keep me");
}

// A device-scope signal and wait between two ranks order nothing for the other GPU: the
// race check reports the data they were meant to publish (it took them as ordering).
const char* kDeviceScopeHandoff = R"(kernel handoff(x: symmetric tensor<f32>[N], out: tensor<f32>[N],
                  flag: symmetric tensor<u64>[1]) {
    role one(programs: 1) {
        if rank == 0 {
            for i in chunks(0, N, 256) { store(x[i], 7.0, to: 1); }
            signal(flag[0], 1 as u64, to: 1, scope: device);
        }
        if rank == 1 {
            wait(flag[0] >= 1 as u64, scope: device);
            for i in chunks(0, N, 256) { store(out[i], load(x[i])); }
        }
    }
}
)";

TEST(HostKernelsChecks, DeviceScopeBetweenRanksOrdersNothing) {
  for (const bool system : {false, true}) {
    std::string source = kDeviceScopeHandoff;
    if (system) {
      for (std::size_t at; (at = source.find(", scope: device")) != std::string::npos;) source.erase(at, 15);
    }
    const Outcome o = run_host(2, [&](Context& ctx) {
      Program p = jit_program(ctx, source, "handoff.iris");
      auto x = ctx.zeros<float>(std::size_t{300});
      auto out = ctx.zeros<float>(std::size_t{300});
      auto flag = ctx.zeros<std::uint64_t>(1);
      ctx.barrier();
      p.launch("handoff", {x, out, flag});
      ctx.synchronize();
    }, 60, true);
    if (system) {
      EXPECT_EQ(o.rc, 0) << o.errors[0] << o.errors[1];
    } else {
      EXPECT_EQ(o.rc, 1);
      EXPECT_TRUE(has(o.errors[0] + o.errors[1], "race on rank 1's x[")) << o.errors[0] << o.errors[1];
    }
  }
}

// A long compute loop stops when its job aborts (the host backend's programs look at the
// abort word at every iteration): the job ends in seconds, not when the loop would.
const char* kLongLoop = R"(kernel long_loop(x: tensor<f32>[N], n: i64) {
    let acc = 0.0;
    for k in range(0, n) { acc = acc + load(x[k % N]); }
    store(x[0], acc);
}
)";

TEST(HostKernelsChecks, ALongLoopStopsWhenTheJobAborts) {
  const auto start = std::chrono::steady_clock::now();
  const Outcome o = run_host(2, [](Context& ctx) {
    Program p = jit_program(ctx, kLongLoop, "long_loop.iris");
    auto x = ctx.ones<float>(std::size_t{64});
    if (ctx.rank() == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      throw Error("rank 1 gives up");
    }
    p.launch("long_loop", {x, std::int64_t{1} << 50});
    ctx.synchronize();
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(o.rc, 1);
  EXPECT_TRUE(has(o.errors[0], "rank 1 gives up")) << o.errors[0];
  EXPECT_LT(seconds, 30.0);
}

// A type parameter set through the JIT by its DType (JitOptions::types): the kernel runs
// on i32 tensors; a name given both as an integer and as a type is refused.
const char* kFillTyped = R"(kernel fill_typed<T: type = f32>(x: tensor<T>[N], v: f32) {
    for i in blocks(N, 256) { store(x[i], v as T); }
}
)";

TEST(HostKernelsChecks, TypeParametersThroughTheJit) {
  const Outcome o = run_host(1, [](Context& ctx) {
    JitOptions jo;
    jo.types = {{"T", DType::i32}};
    Program p = jit_program(ctx, kFillTyped, "fill_typed.iris", jo);
    auto x = ctx.zeros<std::int32_t>(std::size_t{300});
    p.launch("fill_typed", {x, 7.0f});
    EXPECT_EQ(x.to_host()[299], 7);
    jo.defines = {{"T", 3}};
    std::string why;
    try {
      jit_program(ctx, kFillTyped, "fill_typed.iris", jo);
    } catch (const Error& e) {
      why = e.what();
    }
    EXPECT_NE(why.find("'T' is in both defines and types"), std::string::npos) << why;
  });
  EXPECT_EQ(o.rc, 0) << o.errors[0];
}

// 2-D tile constructors: zeros, ones and fill with two sizes make [R, C] tiles that add
// to a 2-D tile load.
const char* kTile2d = R"(kernel shift(x: tensor<f32>[M, N], y: tensor<f32>[M, N], b: f32) {
    for (m, n) in tiles([M, N], [16, 64]) {
        let acc = zeros<f32>(16, 64);
        acc = acc + load(x[m, n]) + ones<f32>(16, 64) + fill<f32>(b, 16, 64);
        store(y[m, n], acc);
    }
}
)";

TEST(HostKernelsChecks, TwoDimensionalTileConstructors) {
  const Outcome o = run_host(1, [](Context& ctx) {
    Program p = jit_program(ctx, kTile2d, "tile2d.iris");
    auto x = ctx.arange<float>(40 * 100);
    auto y = ctx.zeros<float>({40, 100});
    p.launch("shift", {Arg::heap_buffer(x.data(), DType::f32, {40, 100}, 40 * 100 * sizeof(float)), y, 2.0f});
    const std::vector<float> got = y.to_host();
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (got[i] != static_cast<float>(i) + 3.0f) {
        ADD_FAILURE() << "y[" << i << "] is " << got[i] << ", expected " << i + 3.0;
        break;
      }
    }
  });
  EXPECT_EQ(o.rc, 0) << o.errors[0];
}

// A rank body that throws something other than a std::exception fails the job like any
// other failure (run returns 1, a peer in a barrier is woken) instead of ending the
// process through std::terminate.
TEST(HostKernelsChecks, ThrowingANonExceptionFailsTheJob) {
  Options o;
  o.backend = "host";
  o.ranks = 2;
  o.heap_bytes = std::size_t{8} << 20;
  const auto start = std::chrono::steady_clock::now();
  const int rc = run(o, [](Context& ctx) {
    if (ctx.rank() == 1) throw 42;
    ctx.barrier();
  });
  EXPECT_EQ(rc, 1);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 30.0);
}

// Every rank signals its neighbour once, then waits for a second signal that never
// comes: reported as a deadlock naming the flag, every rank and the line, long before
// the 60 s wait timeout.
const char* kRing = R"(kernel ring(flag: symmetric tensor<u64>[1]) {
    signal(flag[0], 1 as u64, to: (rank + 1) % world);
    wait(flag[0] >= 2 as u64);
}
)";

TEST_P(HostKernels, DeadlockNamesTheFlagTheRanksAndTheLine) {
  const int ranks = GetParam();
  const Outcome o = run_host(ranks, [](Context& ctx) {
    Program p = jit_program(ctx, kRing, "ring.iris");
    auto flag = ctx.zeros<std::uint64_t>(1);
    ctx.barrier();
    p.launch("ring", {flag});
    ctx.synchronize();
  });
  EXPECT_EQ(o.rc, 1);
  EXPECT_LT(o.seconds, 10.0);
  const std::string& e = o.errors[0];
  EXPECT_TRUE(has(e, "deadlock: every rank is blocked")) << e;
  for (int r = 0; r < ranks; ++r) {
    EXPECT_TRUE(has(e, "rank " + std::to_string(r) + ", program 0: kernel 'ring' at ring.iris:3:5: wait(flag[0] >= 2 as u64)"))
        << e;
  }
  EXPECT_TRUE(has(e, "waits for flag[0] >= 2, but it is 1")) << e;
}

// Rank 0 waits for a signal that rank 1 never sends; rank 1 goes on to a host barrier,
// where it can signal nothing: a deadlock too, reported at once.
const char* kLonely = R"(kernel lonely(flag: symmetric tensor<u64>[1]) {
    if rank == 0 {
        wait(flag[0] >= 1 as u64);
    }
}
)";

TEST(HostKernelsChecks, DeadlockWithAPeerInAHostBarrier) {
  const Outcome o = run_host(2, [](Context& ctx) {
    Program p = jit_program(ctx, kLonely, "lonely.iris");
    auto flag = ctx.zeros<std::uint64_t>(1);
    ctx.barrier();
    p.launch("lonely", {flag});
    ctx.synchronize();
    ctx.barrier();
  });
  EXPECT_EQ(o.rc, 1);
  EXPECT_LT(o.seconds, 10.0);
  const std::string e = o.errors[0];
  EXPECT_TRUE(has(e, "deadlock: every rank is blocked")) << e;
  EXPECT_TRUE(has(e, "rank 0, program 0: kernel 'lonely' at lonely.iris:3:9: wait(flag[0] >= 1 as u64)")) << e;
  EXPECT_TRUE(has(e, "rank 1 is in a host collective")) << e;
}

// Two roles of one program each wait on each other in turn (a handoff), round after
// round: both run at once, as on a GPU.
const char* kHandoff = R"(kernel handoff(ping: tensor<u64>[1], pong: tensor<u64>[1], seen: tensor<u64>[1], rounds: int) {
    role a(programs: 1) {
        for k in range(1, rounds + 1) {
            signal(ping[0], k as u64);
            wait(pong[0] >= k as u64);
        }
    }
    role b(programs: 1) {
        for k in range(1, rounds + 1) {
            wait(ping[0] >= k as u64);
            signal(pong[0], k as u64);
        }
        store(seen[0], load(pong[0]));
    }
}
)";

TEST_P(HostKernels, RolesWaitOnEachOther) {
  const Outcome o = run_host(GetParam(), [](Context& ctx) {
    Program p = jit_program(ctx, kHandoff, "handoff.iris");
    auto ping = ctx.zeros<std::uint64_t>(1), pong = ctx.zeros<std::uint64_t>(1), seen = ctx.zeros<std::uint64_t>(1);
    p.launch("handoff", {ping, pong, seen, std::int64_t{50}});
    if (seen.to_host()[0] != 50) throw Error("the handoff did not finish 50 rounds");
  });
  EXPECT_EQ(o.rc, 0) << o.errors[0];
}

// Arithmetic as the GPU computes it: integer wrap-around, unsigned compares, float
// rounding to f16, float-to-integer casts that truncate and saturate, and a masked tail
// reading `other` (f = 3 at launch, so that nothing folds at compile time).
const char* kArith = R"(kernel arith(out_i: tensor<i32>[8], out_u: tensor<u64>[2], out_h: tensor<f16>[2], tail: tensor<f32>[T], f: f32) {
    let big = 2147483647 as i32;
    store(out_i[0], big + (1 as i32));
    store(out_i[1], ((-7) as i32) / (2 as i32));
    store(out_i[2], ((-7) as i32) % (2 as i32));
    store(out_i[3], (f * 1.0e9) as i32);           // saturates
    store(out_i[4], (f * (-0.5)) as i32);
    store(out_i[5], (0 - 1) as u32 as i32);
    for i in blocks(10, 32) {
        store(out_i[6], sum(index(i) as i32));   // index() is not masked: 0 + ... + 31
    }
    for j in blocks(T, 32) {
        store(out_i[7], max(load(tail[j], other: 100.0)) as i32);
    }
    let huge = (0 - 1) as u64;
    store(out_u[0], (huge > (1 as u64)) as u64);
    store(out_u[1], huge / (2 as u64));
    store(out_h[0], (f * 683.0) as f16);
    store(out_h[1], (1.0 as f16) / (f as f16));
}
)";

TEST(HostKernelsSemantics, ArithmeticMatchesTheGpu) {
  const Outcome o = run_host(1, [](Context& ctx) {
    Program p = jit_program(ctx, kArith, "arith.iris");
    auto i = ctx.zeros<std::int32_t>(std::size_t{8});
    auto u = ctx.zeros<std::uint64_t>(std::size_t{2});
    auto h = ctx.zeros<half>(std::size_t{2});
    auto tail = ctx.arange<float>(5);
    p.launch("arith", {i, u, h, tail, 3.0f});
    const std::vector<std::int32_t> vi = i.to_host();
    const std::vector<std::int32_t> want{INT32_MIN, -3, -1, INT32_MAX, -1, -1, 496, 100};
    for (std::size_t k = 0; k < want.size(); ++k) {
      if (vi[k] != want[k]) throw Error("out_i[" + std::to_string(k) + "] = " + std::to_string(vi[k]) + ", want " + std::to_string(want[k]));
    }
    const std::vector<std::uint64_t> vu = u.to_host();
    if (vu[0] != 1 || vu[1] != 9223372036854775807ull) throw Error("u64 compare or divide");
    const std::vector<half> vh = h.to_host();
    if (static_cast<float>(vh[0]) != 2048.0f) throw Error("2049 as f16 rounds to even: 2048");  // 3 * 683
    if (static_cast<float>(vh[1]) != static_cast<float>(half(1.0f / 3.0f))) throw Error("f16 division rounds once");
  });
  EXPECT_EQ(o.rc, 0) << o.errors[0];
}

// Integer division by zero is an error with its line (a GPU computes garbage).
TEST(HostKernelsChecks, IntegerDivisionByZero) {
  const Outcome o = run_host(1, [](Context& ctx) {
    Program p = jit_program(ctx, "kernel div(x: tensor<i64>[1], d: int) {\n    store(x[0], 10 / d);\n}\n", "div.iris");
    auto x = ctx.zeros<std::int64_t>(1);
    p.launch("div", {x, std::int64_t{0}});
  });
  EXPECT_EQ(o.rc, 1);
  EXPECT_TRUE(has(o.errors[0], "div.iris:2:17: 10 / d")) << o.errors[0];
  EXPECT_TRUE(has(o.errors[0], "integer division by zero")) << o.errors[0];
}

// Atomic adds from every rank to every rank, and a compare-and-swap election.
const char* kCount = R"(kernel count(c: symmetric tensor<u32>[N], winner: symmetric tensor<i32>[1]) {
    for i in blocks(N, 64) {
        for r in ranks {
            atomic_add(c[i], 1, to: r, order: relaxed);
        }
    }
    atomic_cas(winner[0], (-1) as i32, rank as i32, to: 0, order: acq_rel);
}
)";

TEST_P(HostKernels, AtomicsFromEveryRank) {
  const int ranks = GetParam();
  const Outcome o = run_host(ranks, [&](Context& ctx) {
    Program p = jit_program(ctx, kCount, "count.iris");
    auto c = ctx.zeros<std::uint32_t>(std::size_t{300});
    auto winner = ctx.full<std::int32_t>(std::size_t{1}, -1.0);
    ctx.barrier();
    p.launch("count", {c, winner});
    ctx.synchronize();
    ctx.barrier();
    for (std::uint32_t v : c.to_host()) {
      if (v != static_cast<std::uint32_t>(ranks)) throw Error("a counter is " + std::to_string(v));
    }
    if (ctx.rank() == 0) {
      const std::int32_t w = winner.to_host()[0];
      if (w < 0 || w >= ranks) throw Error("no rank won the election");
    }
  });
  EXPECT_EQ(o.rc, 0) << o.errors[0];
}

// The race check (Options::check_races): a rank stores into its neighbour's x while the
// neighbour reads it, with nothing ordering the two.
const char* kRacy = R"(kernel racy(x: symmetric tensor<f32>[N], y: tensor<f32>[N]) {
    for i in blocks(N, 256) {
        store(x[i], 1.0, to: (rank + 1) % world);
        store(y[i], load(x[i]));
    }
}
)";

TEST(HostKernelsRaces, UnorderedStoreAndLoadFromTwoRanks) {
  const Outcome o = run_host(
      2,
      [](Context& ctx) {
        Program p = jit_program(ctx, kRacy, "racy.iris");
        auto x = ctx.zeros<float>(std::size_t{512}), y = ctx.zeros<float>(std::size_t{512});
        p.launch("racy", {x, y});
        ctx.synchronize();
      },
      60, true);
  EXPECT_EQ(o.rc, 1);
  std::string e = o.errors[0].empty() ? o.errors[1] : o.errors[0];
  EXPECT_TRUE(has(e, "race on rank ")) << e;
  EXPECT_TRUE(has(e, "racy.iris:3:9: store(x[i], 1.0, to: (rank + 1) % world)")) << e;
  EXPECT_TRUE(has(e, "racy.iris:4:21: load(x[i])")) << e;
  EXPECT_TRUE(has(e, "with nothing ordering them")) << e;
}

// The same exchange ordered by a release signal and an acquire wait: no report.
const char* kOrdered = R"(kernel ordered(x: symmetric tensor<f32>[N], y: tensor<f32>[N], flag: symmetric tensor<u64>[1]) {
    role only(programs: 1) {
        for i in blocks(N, 256) {
            store(x[i], 1.0, to: (rank + 1) % world);
        }
        signal(flag[0], 1 as u64, to: (rank + 1) % world, order: release);
        wait(flag[0] >= 1 as u64, order: acquire);
        for i in blocks(N, 256) {
            store(y[i], load(x[i]));
        }
    }
}
)";

TEST_P(HostKernels, SignalAndWaitOrderTheExchange) {
  const Outcome o = run_host(
      GetParam(),
      [](Context& ctx) {
        Program p = jit_program(ctx, kOrdered, "ordered.iris");
        auto x = ctx.zeros<float>(std::size_t{600}), y = ctx.zeros<float>(std::size_t{600});
        auto flag = ctx.zeros<std::uint64_t>(1);
        ctx.barrier();  // every flag is zero before any rank signals
        p.launch("ordered", {x, y, flag});
        ctx.synchronize();
        for (float v : y.to_host()) {
          if (v != 1.0f) throw Error("y is not all ones");
        }
      },
      60, true);
  EXPECT_EQ(o.rc, 0) << o.errors[0];
}

// Two kernels: the second reads what a peer's first stored. A host barrier between them
// orders the accesses; without one they race.
const char* kPutThenRead = R"(kernel put(x: symmetric tensor<i32>[N]) {
    for i in blocks(N, 128) {
        store(x[i], rank as i32, to: (rank + 1) % world);
    }
}

kernel get(x: symmetric tensor<i32>[N], y: tensor<i32>[N]) {
    for i in blocks(N, 128) {
        store(y[i], load(x[i]));
    }
}
)";

TEST(HostKernelsRaces, KernelBoundariesOrderOnlyWithABarrier) {
  for (const bool barrier : {true, false}) {
    const Outcome o = run_host(
        2,
        [&](Context& ctx) {
          Program p = jit_program(ctx, kPutThenRead, "put_get.iris");
          auto x = ctx.zeros<std::int32_t>(std::size_t{300}), y = ctx.zeros<std::int32_t>(std::size_t{300});
          p.launch("put", {x});
          if (barrier) ctx.barrier();
          p.launch("get", {x, y});
          ctx.synchronize();
        },
        60, true);
    if (barrier) {
      EXPECT_EQ(o.rc, 0) << o.errors[0] << o.errors[1];
    } else {
      EXPECT_EQ(o.rc, 1);
      const std::string e = o.errors[0] + o.errors[1];
      EXPECT_TRUE(has(e, "race on rank ")) << e;
      EXPECT_TRUE(has(e, "put_get.iris:3:9")) << e;
      EXPECT_TRUE(has(e, "put_get.iris:9:21")) << e;
    }
  }
}

// A flag zeroed by one rank while its peer signals it, with no barrier between: the
// signal may be lost. The race check reports the fill against the signal.
const char* kPoke = R"(kernel poke(flag: symmetric tensor<u64>[1]) {
    signal(flag[0], 1 as u64, to: (rank + 1) % world);
}
)";

TEST(HostKernelsRaces, AFillRacingASignal) {
  const Outcome o = run_host(
      2,
      [](Context& ctx) {
        Program p = jit_program(ctx, kPoke, "poke.iris");
        for (int round = 0; round < 20; ++round) {
          auto flag = ctx.zeros<std::uint64_t>(1);  // no barrier before the peer signals
          p.launch("poke", {flag});
          ctx.synchronize();
        }
      },
      60, true);
  EXPECT_EQ(o.rc, 1);
  const std::string e = o.errors[0] + o.errors[1];
  EXPECT_TRUE(has(e, "race on rank ")) << e;
  EXPECT_TRUE(has(e, "a fill (Context::zeros")) << e;
  EXPECT_TRUE(has(e, "atomically updates flag[0] (kernel 'poke' at poke.iris:2:5")) << e;
}

INSTANTIATE_TEST_SUITE_P(Ranks, HostKernels, ::testing::Values(1, 2, 4),
                         [](const ::testing::TestParamInfo<int>& i) { return std::to_string(i.param) + "ranks"; });

// A host code object, as irisc --target=host writes it, loads through Program without
// running the front end (it carries the verified listing), and a GPU code object is
// refused by it with a message naming the way out.
TEST(HostKernelsLoading, HostCodeObjectsAndTheirMetadata) {
  const Outcome o = run_host(1, [](Context& ctx) {
    JitOptions jo;
    jo.target = "host";
    JitResult r = jit_compile(kShift, "shift.iris", jo);
    const std::string head(reinterpret_cast<const char*>(r.code.data()), 16);
    if (head != "IRIS-HOST-CODE 2") throw Error("not a host code object: " + head);
    const std::uint64_t before = irisc::front_end_runs();
    Program p(ctx, r.code, "shift (host code)");
    if (p.kernels().size() != 1 || p.kernels()[0].name != "shift") throw Error("the contract did not come through");
    if (irisc::front_end_runs() != before) {
      throw Error("loading the host code object ran the front end " + std::to_string(irisc::front_end_runs() - before) +
                  " time(s)");
    }
    // An object of the earlier format (the source alone) is refused by its format.
    const std::string old = "IRIS-HOST-CODE 1\nname 10\nshift.iris\ndefines 0\ntrace 0\nsource 1\n \n";
    std::vector<std::byte> old_bytes(old.size() + 1);
    std::memcpy(old_bytes.data(), old.c_str(), old.size() + 1);
    try {
      Program q(ctx, old_bytes, "shift (format 1)");
      throw Error("a host code object of format 1 was loaded");
    } catch (const Error& e) {
      if (std::string(e.what()).find("of format 1, and this libiris reads format 2") == std::string::npos) throw;
    }
  });
  EXPECT_EQ(o.rc, 0) << o.errors[0];
}

}  // namespace
}  // namespace iris
