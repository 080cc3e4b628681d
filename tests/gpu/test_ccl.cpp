// The collectives of iris/ccl.hpp (dsl/ccl/) against a host reference: every algorithm,
// element type and reduction, in place and not, ragged and one-element counts, many
// calls back to back without a reset, and (CUDA) replays of a captured graph. Inputs are
// small integers, exact in every type, so results compare exactly.
#include <string>
#include <type_traits>

#include "gpu_harness.hpp"
#include "iris/ccl.hpp"
#include "iris/timing.hpp"

namespace iris::test {
namespace {

class Collectives : public GpuTest {};

// Rank r's element i for call `call`: an integer in [-6, 6].
double input(int r, std::size_t i, int call) { return static_cast<double>((r * 7 + static_cast<int>(i) * 3 + call * 5) % 13 - 6); }

double reduce_ref(ccl::ReduceOp op, int world, std::size_t i, int call) {
  double acc = input(0, i, call);
  for (int r = 1; r < world; ++r) {
    const double v = input(r, i, call);
    acc = op == ccl::ReduceOp::sum ? acc + v : op == ccl::ReduceOp::max ? std::max(acc, v) : std::min(acc, v);
  }
  return acc;
}

template <class T>
Tensor<T> filled(Context& ctx, std::size_t n, int call, std::size_t offset = 0) {
  std::vector<T> h(n);
  for (std::size_t i = 0; i < n; ++i) h[i] = static_cast<T>(static_cast<float>(input(ctx.rank(), i + offset, call)));
  auto t = ctx.empty<T>(n);
  t.copy_from_host(h);
  return t;
}

template <class T>
void fill(Tensor<T>& t, Context& ctx, int call) {
  std::vector<T> h(t.numel());
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<T>(static_cast<float>(input(ctx.rank(), i, call)));
  t.copy_from_host(h);
}

template <class T>
void expect_equal(const Tensor<T>& t, const std::function<double(std::size_t)>& want, const std::string& what) {
  const std::vector<T> got = t.to_host();
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = static_cast<double>(static_cast<float>(got[i]));
    if (g != want(i)) {  // the message only on a failure: 1M elements are checked per call
      require(false, what + ": element " + std::to_string(i) + " is " + std::to_string(g) + ", expected " +
                         std::to_string(want(i)));
    }
  }
}

template <class T>
void all_reduce_case(Context& ctx, ccl::Algorithm algo, ccl::ReduceOp op, std::size_t n, bool in_place) {
  const std::string what = std::string("all_reduce ") + ccl::name(algo) + " " + ccl::name(op) + " of " +
                           std::to_string(n) + " " + std::string(dtype_name(dtype_of_v<T>)) + (in_place ? " in place" : "");
  auto x = filled<T>(ctx, n, 0);
  auto y = ctx.zeros<T>(n);
  ccl::Options o{op, algo, nullptr};
  const bool slots = algo == ccl::Algorithm::one_shot_slots || algo == ccl::Algorithm::two_shot_slots;
  if (slots && !std::is_floating_point_v<T> && !std::is_same_v<T, bfloat16> && !std::is_same_v<T, half>) {
    bool refused = false;
    try {
      ccl::all_reduce(ctx, x, y, o);
    } catch (const Error& e) {
      refused = std::string(e.what()).find("sends f32, f16 or bf16") != std::string::npos;
    }
    require(refused, what + " is refused with a message (slots hold floating-point values only)");
    return;
  }
  const bool ll = algo == ccl::Algorithm::one_shot_ll || algo == ccl::Algorithm::two_shot_ll;
  if ((ll && n * sizeof(T) > ccl::kLlMostBytes) || (slots && n * sizeof(T) > ccl::kSlotsMostBytes)) {
    bool refused = false;
    try {
      ccl::all_reduce(ctx, x, y, o);
    } catch (const Error& e) {
      refused = std::string(e.what()).find(std::string(ccl::name(algo)) + " takes at most") != std::string::npos;
    }
    require(refused, what + " is refused with a message (past kLlMostBytes)");
    return;
  }
  if (in_place) {
    ccl::all_reduce(ctx, x, o);
  } else {
    ccl::all_reduce(ctx, x, y, o);
  }
  ctx.synchronize();
  expect_equal(in_place ? x : y, [&](std::size_t i) { return reduce_ref(op, ctx.world(), i, 0); }, what);
  if (!in_place) expect_equal(x, [&](std::size_t i) { return input(ctx.rank(), i, 0); }, what + " (input kept)");
}

TEST_P(Collectives, AllReduceEveryAlgorithmTypeAndOp) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const std::vector<std::size_t> sizes = on_host_backend() ? std::vector<std::size_t>{1, 1000}
                                                             : std::vector<std::size_t>{1, 1000, 1 << 20, (1 << 20) + 77};
    for (std::size_t n : sizes) {
      for (bool in_place : {false, true}) {
        for (auto algo : {ccl::Algorithm::one_shot, ccl::Algorithm::two_shot, ccl::Algorithm::ring,
                          ccl::Algorithm::one_shot_push, ccl::Algorithm::two_shot_push, ccl::Algorithm::one_shot_ll,
                          ccl::Algorithm::two_shot_ll, ccl::Algorithm::one_shot_slots, ccl::Algorithm::two_shot_slots}) {
          for (auto op : {ccl::ReduceOp::sum, ccl::ReduceOp::max, ccl::ReduceOp::min}) {
            all_reduce_case<float>(ctx, algo, op, n, in_place);
            all_reduce_case<bfloat16>(ctx, algo, op, n, in_place);
            all_reduce_case<half>(ctx, algo, op, n, in_place);
            all_reduce_case<std::int32_t>(ctx, algo, op, n, in_place);
          }
        }
        all_reduce_case<float>(ctx, ccl::Algorithm::atomic, ccl::ReduceOp::sum, n, in_place);
        all_reduce_case<std::int32_t>(ctx, ccl::Algorithm::atomic, ccl::ReduceOp::sum, n, in_place);
        all_reduce_case<float>(ctx, ccl::Algorithm::automatic, ccl::ReduceOp::sum, n, in_place);
      }
    }
    // What the atomic algorithm cannot do is refused before anything runs.
    auto b = ctx.zeros<bfloat16>(std::size_t{8});
    bool refused = false;
    try {
      ccl::all_reduce(ctx, b, {ccl::ReduceOp::sum, ccl::Algorithm::atomic, nullptr});
    } catch (const Error& e) {
      refused = std::string(e.what()).find("atomic") != std::string::npos;
    }
    require(refused, "an atomic all_reduce of bf16 is refused with a message");
    auto l = ctx.zeros<std::int64_t>(std::size_t{8});
    refused = false;
    try {
      ccl::all_reduce(ctx, l, {ccl::ReduceOp::sum, ccl::Algorithm::one_shot_ll, nullptr});
    } catch (const Error& e) {
      refused = std::string(e.what()).find("at most 4 bytes") != std::string::npos;
    }
    require(refused, "a one_shot_ll all_reduce of i64 is refused with a message");
  }, std::size_t{512} << 20);  // every algorithm keeps its scratch, for inputs of 4 MiB
}

TEST_P(Collectives, HundredCallsBackToBackWithoutAReset) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const std::size_t n = 1000;
    auto x = ctx.empty<float>(n);
    auto y = ctx.empty<float>(n);
    for (int call = 0; call < 100; ++call) {
      fill(x, ctx, call);
      constexpr ccl::Algorithm kEvery[] = {ccl::Algorithm::one_shot,      ccl::Algorithm::two_shot,
                                           ccl::Algorithm::ring,          ccl::Algorithm::atomic,
                                           ccl::Algorithm::one_shot_push, ccl::Algorithm::two_shot_push,
                                           ccl::Algorithm::one_shot_ll,   ccl::Algorithm::two_shot_ll,
                                           ccl::Algorithm::one_shot_slots, ccl::Algorithm::two_shot_slots};
      const ccl::Algorithm algo = kEvery[call % 10];
      ccl::all_reduce(ctx, x, y, {ccl::ReduceOp::sum, algo, nullptr});
      ctx.synchronize();
      expect_equal(y, [&](std::size_t i) { return reduce_ref(ccl::ReduceOp::sum, ctx.world(), i, call); },
                   "call " + std::to_string(call) + " (" + ccl::name(algo) + ")");
    }
  });
}

// Broadcasts queued back to back whose root stays for a few calls and then moves (0, 0,
// 1, 1, 1, 0, 2, ...): a rank that was root in a call read nothing then, and the next
// root must not wait for it to say it did. Checked at the end, every call's own output.
TEST_P(Collectives, BroadcastsWithRootsInRuns) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const int w = ctx.world();
    constexpr int kRoots[] = {0, 0, 1, 1, 1, 0, 2, 2, 3, 0, 0, 3, 1, 2, 2, 0};
    // 80000 floats: the ll route relays through the non-root ranks from 128 KiB at more
    // than 2 ranks, so both of its kernels see roots in runs.
    for (auto [n, route] : {std::pair{std::size_t{3001}, ccl::Route::staged}, {std::size_t{3001}, ccl::Route::direct},
                            {std::size_t{3001}, ccl::Route::ll}, {std::size_t{80000}, ccl::Route::ll},
                            {std::size_t{3001}, ccl::Route::slots}, {std::size_t{80000}, ccl::Route::slots}}) {
      std::vector<Tensor<float>> b;
      for (int call = 0; call < 16; ++call) b.push_back(filled<float>(ctx, n, 90 + call));
      ctx.barrier();
      ccl::Options o;
      o.route = route;
      for (int call = 0; call < 16; ++call) ccl::broadcast(ctx, b[static_cast<std::size_t>(call)], kRoots[call] % w, o);
      ctx.synchronize();
      for (int call = 0; call < 16; ++call) {
        expect_equal(b[static_cast<std::size_t>(call)], [&](std::size_t i) { return input(kRoots[call] % w, i, 90 + call); },
                     "broadcast call " + std::to_string(call) + " (" + ccl::name(route) + ")");
      }
      ctx.barrier();
    }
  });
}

TEST_P(Collectives, GatherScatterAllToAllBroadcast) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const int w = ctx.world();
    const auto uw = static_cast<std::size_t>(w);
    // Past one program's blocks (the host backend's heap is 64 MiB: less there).
    const std::size_t big = on_host_backend() ? 30000 : 300000;
    for (auto [n, route] : {std::pair{std::size_t{1}, ccl::Route::automatic}, {std::size_t{1001}, ccl::Route::automatic},
                            {std::size_t{1001}, ccl::Route::direct}, {std::size_t{1001}, ccl::Route::staged},
                            {big, ccl::Route::direct}, {big, ccl::Route::staged}, {std::size_t{1001}, ccl::Route::ll},
                            {std::min(big, ccl::kLlMostBytes / sizeof(float) / uw), ccl::Route::ll},
                            {std::size_t{1001}, ccl::Route::slots}, {big, ccl::Route::slots}}) {
      const std::string at = " of " + std::to_string(n) + " (" + ccl::name(route) + ")";
      ccl::Options o;
      o.route = route;
      auto x = filled<float>(ctx, n, 0);
      auto gathered = ctx.zeros<float>(n * uw);
      ccl::all_gather(ctx, x, gathered, o);
      ctx.synchronize();
      expect_equal(gathered, [&](std::size_t i) { return input(static_cast<int>(i / n), i % n, 0); }, "all_gather" + at);

      // reduce_scatter: slice r of the sum of every rank's [world * n] input.
      auto big = filled<bfloat16>(ctx, n * uw, 1);
      auto mine = ctx.zeros<bfloat16>(n);
      ccl::reduce_scatter(ctx, big, mine, o);
      ctx.synchronize();
      expect_equal(mine, [&](std::size_t i) { return reduce_ref(ccl::ReduceOp::sum, w, i + static_cast<std::size_t>(ctx.rank()) * n, 1); },
                   "reduce_scatter" + at);

      // all_to_all: slice q of rank r's input is slice r of rank q's output (i32; f32 on
      // the slots route, which refuses integers).
      const auto a2a = [&]<class T>(T) {
        auto src = filled<T>(ctx, n * uw, 2);
        auto dst = ctx.zeros<T>(n * uw);
        ccl::all_to_all(ctx, src, dst, o);
        ctx.synchronize();
        expect_equal(dst, [&](std::size_t i) {
          return input(static_cast<int>(i / n), static_cast<std::size_t>(ctx.rank()) * n + i % n, 2);
        }, "all_to_all" + at);
      };
      if (route == ccl::Route::slots) {
        a2a(0.0f);
        auto src = filled<std::int32_t>(ctx, n * uw, 2);
        auto dst = ctx.zeros<std::int32_t>(n * uw);
        bool refused = false;
        try {
          ccl::all_to_all(ctx, src, dst, o);
        } catch (const Error& e) {
          refused = std::string(e.what()).find("sends f32, f16 or bf16") != std::string::npos;
        }
        require(refused, "an i32 all_to_all on the slots route is refused with a message");
      } else {
        a2a(std::int32_t{0});
      }

      auto b = filled<half>(ctx, n, 3);
      ccl::broadcast(ctx, b, w - 1, o);
      ctx.synchronize();
      expect_equal(b, [&](std::size_t i) { return input(w - 1, i, 3); }, "broadcast" + at);
    }
    bool refused = false;
    try {
      auto x = ctx.zeros<float>(std::size_t{4});
      auto y = ctx.zeros<float>(std::size_t{5});
      ccl::all_gather(ctx, x, y);
    } catch (const Error& e) {
      refused = std::string(e.what()).find("all_gather: the output has 5 elements") != std::string::npos;
    }
    require(refused, "an all_gather into the wrong size is refused with a message");
    refused = false;
    try {
      auto b = ctx.zeros<std::int64_t>(std::size_t{4});
      ccl::broadcast(ctx, b, 0, {.route = ccl::Route::ll});
    } catch (const Error& e) {
      refused = std::string(e.what()).find("at most 4 bytes") != std::string::npos;
    }
    require(refused, "a broadcast of i64 by the ll route is refused with a message");
    refused = false;
    try {
      auto x = ctx.zeros<std::int64_t>(std::size_t{4});
      auto y = ctx.zeros<std::int64_t>(std::size_t{4} * uw);
      ccl::all_gather(ctx, x, y, {.route = ccl::Route::ll});
    } catch (const Error& e) {
      refused = std::string(e.what()).find("at most 4 bytes") != std::string::npos;
    }
    require(refused, "an all_gather of 8-byte elements by the ll route is refused with a message");
    // all_to_all is out of place only: the same tensor as src and dst, or overlapping
    // views of one allocation, are refused on every rank before anything runs.
    refused = false;
    try {
      auto x = ctx.zeros<float>(std::size_t{8} * uw);
      ccl::all_to_all(ctx, x, x);
    } catch (const Error& e) {
      refused = std::string(e.what()).find("all_to_all: src and dst overlap") != std::string::npos;
    }
    require(refused, "all_to_all(x, x) is refused with a message");
    // reduce_scatter's size errors give the sizes the caller passed and the one needed.
    std::string why;
    try {
      auto in = ctx.zeros<float>(uw * 10);
      auto out = ctx.zeros<float>(std::size_t{7});
      ccl::reduce_scatter(ctx, in, out);
    } catch (const Error& e) {
      why = e.what();
    }
    require(why.find("reduce_scatter: the output has 7 elements, but an input of " + std::to_string(uw * 10) + " on " +
                     std::to_string(w) + " ranks needs 10") != std::string::npos,
            "reduce_scatter into the wrong size: " + why);
  });
}

// In place, as NCCL's convention: all_gather of one tensor whose slice `rank` is the
// input, and reduce_scatter of one tensor into its slice `rank` (the other slices keep
// their input), on every route.
TEST_P(Collectives, InPlaceAllGatherAndReduceScatter) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const int w = ctx.world();
    const auto uw = static_cast<std::size_t>(w), me = static_cast<std::size_t>(ctx.rank());
    for (std::size_t n : {std::size_t{1}, std::size_t{1001}, on_host_backend() ? std::size_t{20000} : std::size_t{300000}}) {
      for (auto route : {ccl::Route::automatic, ccl::Route::direct, ccl::Route::staged, ccl::Route::ll, ccl::Route::slots}) {
        if (route == ccl::Route::ll && n * uw * sizeof(float) > ccl::kLlMostBytes) continue;
        ccl::Options o;
        o.route = route;
        const std::string at = " of " + std::to_string(n) + " (" + ccl::name(route) + ", in place)";
        // all_gather: only this rank's slice holds its input; every slice is filled after.
        std::vector<float> h(n * uw, -1.0f);
        for (std::size_t i = 0; i < n; ++i) h[me * n + i] = static_cast<float>(input(ctx.rank(), i, 90));
        auto x = ctx.empty<float>(n * uw);
        x.copy_from_host(h);
        ctx.barrier();
        ccl::all_gather(ctx, x, o);
        ctx.synchronize();
        expect_equal(x, [&](std::size_t i) { return input(static_cast<int>(i / n), i % n, 90); }, "all_gather" + at);
        // reduce_scatter: slice `rank` gets the combined slice; the others keep the input.
        auto y = filled<float>(ctx, n * uw, 91);
        ctx.barrier();
        ccl::reduce_scatter(ctx, y, o);
        ctx.synchronize();
        expect_equal(y, [&](std::size_t i) {
          return i / n == me ? reduce_ref(ccl::ReduceOp::sum, w, i, 91) : input(ctx.rank(), i, 91);
        }, "reduce_scatter" + at);
        ctx.barrier();
      }
    }
  });
}

// Few programs over many blocks: two_shot_push and reduce_scatter then walk many groups
// a call (a flag round each), and broadcast's root many blocks, each told to its owner
// on its own. Calls are queued with fresh inputs and checked at the end, so a mark that
// one call mistook for another's would show.
TEST_P(Collectives, FewProgramsWalkManyGroups) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const int w = ctx.world();
    const auto uw = static_cast<std::size_t>(w);
    // Past 16 rounds of 4 KiB blocks with one program. A program's scratch rows hold all
    // its blocks, for as many programs as a call may run: this size, not more.
    const std::size_t n = 20011;
    for (int programs : {1, 3}) {
      const std::string how = " with " + std::to_string(programs) + " programs";
      std::vector<Tensor<float>> x, y, big, mine, b;
      for (int call = 0; call < 3; ++call) {
        x.push_back(filled<float>(ctx, n, 60 + call));
        y.push_back(ctx.zeros<float>(n));
        big.push_back(filled<float>(ctx, n * uw, 70 + call));
        mine.push_back(ctx.zeros<float>(n));
        b.push_back(filled<float>(ctx, n, 80 + call));
      }
      ctx.barrier();
      for (int call = 0; call < 3; ++call) {
        const auto k = static_cast<std::size_t>(call);
        ccl::Options o{ccl::ReduceOp::sum, ccl::Algorithm::two_shot_push, nullptr};
        o.programs = programs;
        ccl::all_reduce(ctx, x[k], y[k], o);
        o.route = call == 1 ? ccl::Route::staged : ccl::Route::direct;
        ccl::reduce_scatter(ctx, big[k], mine[k], o);
        o.route = ccl::Route::direct;
        ccl::broadcast(ctx, b[k], call % w, o);
      }
      ctx.synchronize();
      for (int call = 0; call < 3; ++call) {
        const auto k = static_cast<std::size_t>(call);
        const std::string at = " call " + std::to_string(call) + how;
        expect_equal(y[k], [&](std::size_t i) { return reduce_ref(ccl::ReduceOp::sum, w, i, 60 + call); },
                     "all_reduce two_shot_push" + at);
        expect_equal(mine[k], [&](std::size_t i) {
          return reduce_ref(ccl::ReduceOp::sum, w, i + static_cast<std::size_t>(ctx.rank()) * n, 70 + call);
        }, "reduce_scatter" + at);
        expect_equal(b[k], [&](std::size_t i) { return input(call % w, i, 80 + call); }, "broadcast" + at);
      }
      ctx.barrier();
    }
  }, std::size_t{1} << 30);  // every kernel's channel scratch sized for one program's blocks
}

// Data-and-flag words are laid out for every program a call may run, each row as long as
// one of this call's programs needs: one program on 1 MiB would ask for more than the
// heap. It is refused naming the programs and the way out, not as a bare out of memory.
TEST_P(Collectives, FewProgramsOnManyWordsAreRefusedWithTheWayOut) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const std::size_t n = std::size_t{512} << 10;  // 1 MiB of bf16
    auto x = ctx.zeros<bfloat16>(n);
    auto y = ctx.zeros<bfloat16>(n);
    ccl::Options o{ccl::ReduceOp::sum, ccl::Algorithm::one_shot_ll, nullptr};
    o.programs = 1;
    std::string why;
    try {
      ccl::all_reduce(ctx, x, y, o);
    } catch (const Error& e) {
      why = e.what();
    }
    // At one rank all_reduce is a copy: no words. Ranks sharing a GPU run fewer
    // programs (sms * 2 / share^3), whose rows a 192 MiB heap may hold: there the call
    // may run, and where it is refused it says the same.
    const bool shared = ctx.world() > device_count();
    if (ctx.world() > 1 && (!shared || !why.empty())) {
      require(why.find("over 1 program need data-and-flag words") != std::string::npos &&
                  why.find("ccl::Options::programs") != std::string::npos,
              "one_shot_ll of 1 MiB on one program is refused with the way out, not: '" + why + "'");
    }
    o.programs = 0;
    ccl::all_reduce(ctx, x, y, o);  // automatic programs: the same call runs
    ctx.synchronize();
  }, std::size_t{192} << 20);
}

// The collectives whose programs pair up, queued with no host sync between: two input
// sets of different sizes in turn (both past the size where the program count stops
// growing, so both calls run one kernel instance and share its scratch), each call into
// the output of its set. A call that wrote over what another still read, or read
// another call's scratch half or flags, leaves wrong data behind.
TEST_P(Collectives, PairedCollectivesQueuedWithTwoSizes) {
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const int w = ctx.world();
    const auto uw = static_cast<std::size_t>(w);
    // Programs stop growing at 2 per SM, at 2 * SMs blocks of 1024 floats.
    const std::size_t n0 = static_cast<std::size_t>(ctx.multiprocessors()) * 2 * 1024 + 1000;
    const int calls = on_host_backend() ? 12 : 100;
    for (auto algo : {ccl::Algorithm::one_shot_push, ccl::Algorithm::two_shot_push, ccl::Algorithm::ring,
                      ccl::Algorithm::one_shot_ll, ccl::Algorithm::two_shot_ll, ccl::Algorithm::one_shot_slots,
                      ccl::Algorithm::two_shot_slots}) {
      // two_shot_push, two_shot_ll and ring deal 1/world of the blocks to each step of a program.
      const bool one = algo == ccl::Algorithm::one_shot_push || algo == ccl::Algorithm::one_shot_ll ||
                       algo == ccl::Algorithm::one_shot_slots;
      const bool ll = algo == ccl::Algorithm::one_shot_ll || algo == ccl::Algorithm::two_shot_ll ||
                      algo == ccl::Algorithm::one_shot_slots || algo == ccl::Algorithm::two_shot_slots;
      // The ll algorithms take at most kLlMostBytes: their larger set stays below.
      const std::size_t m0 = ll ? std::min(one ? n0 : n0 * uw, ccl::kLlMostBytes / sizeof(float) / 3) : one ? n0 : n0 * uw;
      std::vector<Tensor<float>> x, y;
      for (int set = 0; set < 2; ++set) {
        x.push_back(filled<float>(ctx, m0 * (1 + 2 * static_cast<std::size_t>(set)), 40 + set));
        y.push_back(ctx.zeros<float>(m0 * (1 + 2 * static_cast<std::size_t>(set))));
      }
      ctx.barrier();
      for (int call = 0; call < calls; ++call) {
        const auto k = static_cast<std::size_t>(call % 2);
        ccl::all_reduce(ctx, x[k], y[k], {ccl::ReduceOp::sum, algo, nullptr});
      }
      ctx.synchronize();
      for (int set = 0; set < 2; ++set) {
        expect_equal(y[static_cast<std::size_t>(set)],
                     [&](std::size_t i) { return reduce_ref(ccl::ReduceOp::sum, w, i, 40 + set); },
                     std::string(ccl::name(algo)) + " of set " + std::to_string(set));
      }
      ctx.barrier();
    }
    // One kernel's calls share its scratch and flags whatever their element type and
    // program count: queued calls of f32 and bf16, small (a few programs) and large.
    for (auto algo : {ccl::Algorithm::one_shot_push, ccl::Algorithm::two_shot_push, ccl::Algorithm::ring,
                      ccl::Algorithm::one_shot_ll, ccl::Algorithm::two_shot_ll, ccl::Algorithm::one_shot_slots,
                      ccl::Algorithm::two_shot_slots}) {
      auto xf = filled<float>(ctx, 3000, 50), yf = ctx.zeros<float>(std::size_t{3000});
      const bool ll = algo == ccl::Algorithm::one_shot_ll || algo == ccl::Algorithm::two_shot_ll ||
                      algo == ccl::Algorithm::one_shot_slots || algo == ccl::Algorithm::two_shot_slots;
      const std::size_t nb = ll ? std::min(n0 * uw, ccl::kLlMostBytes / sizeof(bfloat16)) : n0 * uw;
      auto xb = filled<bfloat16>(ctx, nb, 51), yb = ctx.zeros<bfloat16>(nb);
      ctx.barrier();
      for (int call = 0; call < calls; ++call) {
        if (call % 2) ccl::all_reduce(ctx, xb, yb, {ccl::ReduceOp::sum, algo, nullptr});
        else ccl::all_reduce(ctx, xf, yf, {ccl::ReduceOp::sum, algo, nullptr});
      }
      ctx.synchronize();
      const std::string what = std::string(ccl::name(algo)) + ", f32 and bf16 calls between each other";
      expect_equal(yf, [&](std::size_t i) { return reduce_ref(ccl::ReduceOp::sum, w, i, 50); }, what);
      expect_equal(yb, [&](std::size_t i) { return reduce_ref(ccl::ReduceOp::sum, w, i, 51); }, what);
      ctx.barrier();
    }
    for (auto route : {ccl::Route::direct, ccl::Route::staged, ccl::Route::ll, ccl::Route::slots}) {
      // The ll route gives out at most kLlMostBytes: its larger set's outputs stay below.
      const std::size_t n = route == ccl::Route::ll ? std::min(n0, ccl::kLlMostBytes / sizeof(float) / uw / 3) : n0;
      ccl::Options o;
      o.route = route;
      const std::string how = std::string(" (") + ccl::name(route) + ")";
      std::vector<Tensor<float>> in, gathered, big, mine, a2a, b;
      const auto size = [&](int set) { return n * (1 + 2 * static_cast<std::size_t>(set)); };
      for (int set = 0; set < 2; ++set) {
        in.push_back(filled<float>(ctx, size(set), 10 + set));
        big.push_back(filled<float>(ctx, size(set) * uw, 20 + set));
        gathered.push_back(ctx.zeros<float>(size(set) * uw));
        mine.push_back(ctx.zeros<float>(size(set)));
        a2a.push_back(ctx.zeros<float>(size(set) * uw));
        b.push_back(filled<float>(ctx, size(set), 30 + set));
      }
      ctx.barrier();
      for (int call = 0; call < calls; ++call) {
        const auto k = static_cast<std::size_t>(call % 2);
        ccl::all_gather(ctx, in[k], gathered[k], o);
        ccl::reduce_scatter(ctx, big[k], mine[k], o);
        ccl::all_to_all(ctx, big[k], a2a[k], o);
        ccl::broadcast(ctx, b[k], w - 1, o);
      }
      ctx.synchronize();
      for (int set = 0; set < 2; ++set) {
        const auto k = static_cast<std::size_t>(set);
        const std::size_t n = size(set);
        const std::string at = " of set " + std::to_string(set) + how;
        expect_equal(gathered[k], [&](std::size_t i) { return input(static_cast<int>(i / n), i % n, 10 + set); },
                     "all_gather" + at);
        expect_equal(mine[k], [&](std::size_t i) {
          return reduce_ref(ccl::ReduceOp::sum, w, i + static_cast<std::size_t>(ctx.rank()) * n, 20 + set);
        }, "reduce_scatter" + at);
        expect_equal(a2a[k], [&](std::size_t i) {
          return input(static_cast<int>(i / n), static_cast<std::size_t>(ctx.rank()) * n + i % n, 20 + set);
        }, "all_to_all" + at);
        expect_equal(b[k], [&](std::size_t i) { return input(w - 1, i, 30 + set); }, "broadcast" + at);
      }
      ctx.barrier();
    }
  }, std::size_t{1} << 30);  // the tensors and every kernel's channel scratch (ring: 4x)
}

// A collective's first call sets it up (a JIT compile, allocations, barriers), which a
// capture cannot hold: capturing it first is refused on every rank with what to do,
// not a bare CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; after one eager call it captures.
TEST_P(Collectives, CapturingAFirstCallSaysToRunItEagerlyFirst) {
  IRIS_REQUIRE_CUDA();
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const std::size_t n = 3001;
    auto x = ctx.empty<float>(n);
    auto y = ctx.empty<float>(n);
    fill(x, ctx, 0);
    const ccl::Options o{ccl::ReduceOp::max, ccl::Algorithm::two_shot_push, nullptr};
    std::string why;
    try {
      Graph g(ctx.stream(), [&] { ccl::all_reduce(ctx, x, y, o); });
    } catch (const Error& e) {
      why = e.what();
    }
    require(why.find("run the call once eagerly") != std::string::npos, "capturing a first call: " + why);
    ctx.barrier();
    ccl::all_reduce(ctx, x, y, o);
    ctx.synchronize();
    Graph g(ctx.stream(), [&] { ccl::all_reduce(ctx, x, y, o); });
    fill(x, ctx, 1);
    ctx.barrier();
    g.launch(ctx.stream());
    ctx.synchronize();
    expect_equal(y, [&](std::size_t i) { return reduce_ref(ccl::ReduceOp::max, ctx.world(), i, 1); },
                 "a replay after the eager first call");
  });
}

TEST_P(Collectives, GraphReplaysWithoutAReset) {
  IRIS_REQUIRE_CUDA();
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const std::size_t n = 4099;
    for (auto algo : {ccl::Algorithm::one_shot, ccl::Algorithm::two_shot, ccl::Algorithm::ring, ccl::Algorithm::atomic,
                      ccl::Algorithm::one_shot_push, ccl::Algorithm::two_shot_push, ccl::Algorithm::one_shot_ll,
                      ccl::Algorithm::two_shot_ll, ccl::Algorithm::one_shot_slots, ccl::Algorithm::two_shot_slots}) {
      auto x = ctx.empty<float>(n);
      auto y = ctx.empty<float>(n);
      fill(x, ctx, 0);
      ccl::all_reduce(ctx, x, y, {ccl::ReduceOp::sum, algo, nullptr});  // the eager first call sets up
      ctx.synchronize();
      Graph g(ctx.stream(), [&] { ccl::all_reduce(ctx, x, y, {ccl::ReduceOp::sum, algo, nullptr}); });
      for (int call = 1; call <= 20; ++call) {
        fill(x, ctx, call);
        ctx.barrier();  // every rank's input is in place before any rank's replay reads it
        g.launch(ctx.stream());
        ctx.synchronize();
        expect_equal(y, [&](std::size_t i) { return reduce_ref(ccl::ReduceOp::sum, ctx.world(), i, call); },
                     std::string("graph replay ") + std::to_string(call) + " (" + ccl::name(algo) + ")");
        ctx.barrier();  // no rank refills its input while a peer's replay may still read it
      }
    }
  });
}

// The other collectives, captured once and replayed with fresh inputs.
TEST_P(Collectives, GatherScatterAllToAllBroadcastInAGraph) {
  IRIS_REQUIRE_CUDA();
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const int w = ctx.world();
    const auto uw = static_cast<std::size_t>(w);
    const std::size_t n = 1001;
    auto x = ctx.empty<float>(n);
    auto gathered = ctx.empty<float>(n * uw);
    auto big = ctx.empty<float>(n * uw);
    auto mine = ctx.empty<float>(n);
    auto a2a = ctx.empty<float>(n * uw);
    auto b = ctx.empty<float>(n);
    for (auto route : {ccl::Route::direct, ccl::Route::staged, ccl::Route::ll, ccl::Route::slots}) {
    ccl::Options o;
    o.route = route;
    const auto calls = [&] {
      ccl::all_gather(ctx, x, gathered, o);
      ccl::reduce_scatter(ctx, big, mine, o);
      ccl::all_to_all(ctx, big, a2a, o);
      ccl::broadcast(ctx, b, w - 1, o);
    };
    calls();  // the eager first calls set up
    ctx.synchronize();
    Graph g(ctx.stream(), calls);
    for (int call = 1; call <= 10; ++call) {
      fill(x, ctx, call);
      fill(big, ctx, call + 1);
      fill(b, ctx, call + 2);
      ctx.barrier();
      g.launch(ctx.stream());
      ctx.synchronize();
      const std::string at = " (" + std::string(ccl::name(route)) + ", graph replay " + std::to_string(call) + ")";
      expect_equal(gathered, [&](std::size_t i) { return input(static_cast<int>(i / n), i % n, call); }, "all_gather" + at);
      expect_equal(mine, [&](std::size_t i) {
        return reduce_ref(ccl::ReduceOp::sum, w, i + static_cast<std::size_t>(ctx.rank()) * n, call + 1);
      }, "reduce_scatter" + at);
      expect_equal(a2a, [&](std::size_t i) {
        return input(static_cast<int>(i / n), static_cast<std::size_t>(ctx.rank()) * n + i % n, call + 1);
      }, "all_to_all" + at);
      expect_equal(b, [&](std::size_t i) { return input(w - 1, i, call + 2); }, "broadcast" + at);
      ctx.barrier();
    }
    }
  });
}

// 256 MiB per call (CUDA: the host backend interprets every element).
TEST_P(Collectives, TwoHundredFiftySixMiB) {
  IRIS_REQUIRE_CUDA();
  run_ranks(GetParam(), [](Context& ctx, Module&) {
    const int w = ctx.world();
    const auto uw = static_cast<std::size_t>(w);
    const std::size_t n = (std::size_t{256} << 20) / sizeof(float);
    // (one_shot_push is for small sizes: its scratch holds 2 world inputs.)
    for (auto algo : {ccl::Algorithm::one_shot, ccl::Algorithm::two_shot, ccl::Algorithm::ring, ccl::Algorithm::atomic,
                      ccl::Algorithm::two_shot_push}) {
      all_reduce_case<float>(ctx, algo, ccl::ReduceOp::sum, n, algo == ccl::Algorithm::ring);
    }
    const std::size_t part = n / uw;
    {
      auto x = filled<float>(ctx, part, 0);
      auto gathered = ctx.zeros<float>(part * uw);
      ccl::all_gather(ctx, x, gathered);
      ctx.synchronize();
      expect_equal(gathered, [&](std::size_t i) { return input(static_cast<int>(i / part), i % part, 0); }, "all_gather of 256 MiB");
    }
    {
      auto big = filled<float>(ctx, part * uw, 1);
      auto mine = ctx.zeros<float>(part);
      ccl::reduce_scatter(ctx, big, mine);
      ctx.synchronize();
      expect_equal(mine, [&](std::size_t i) {
        return reduce_ref(ccl::ReduceOp::sum, w, i + static_cast<std::size_t>(ctx.rank()) * part, 1);
      }, "reduce_scatter of 256 MiB");
      auto a2a = ctx.zeros<float>(part * uw);
      ccl::all_to_all(ctx, big, a2a);
      ctx.synchronize();
      expect_equal(a2a, [&](std::size_t i) {
        return input(static_cast<int>(i / part), static_cast<std::size_t>(ctx.rank()) * part + i % part, 1);
      }, "all_to_all of 256 MiB");
    }
    auto b = filled<float>(ctx, n, 3);
    ccl::broadcast(ctx, b, 0);
    ctx.synchronize();
    expect_equal(b, [&](std::size_t i) { return input(0, i, 3); }, "broadcast of 256 MiB");
    // The heap holds the tensors of one case (up to 1 GiB) and the scratch each push,
    // ring and staged kernel keeps (two_shot_push and reduce_scatter: about 256 MiB
    // each here, the ring 1 GiB; docs/library.md), with room for fragments.
  }, std::size_t{4} << 30);
}

IRIS_GPU_SUITE(Collectives);

}  // namespace
}  // namespace iris::test
