// The thread bootstrap: allgather, broadcast and barrier across real threads, and the
// abort path that keeps a failing rank from hanging the others.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "bootstrap.hpp"
#include "iris/error.hpp"

namespace iris {
namespace {

template <class F>
void run_threads(int world, F f) {
  auto group = make_thread_group(world);
  std::vector<std::thread> ts;
  for (int r = 0; r < world; ++r) ts.emplace_back([&, r] { f(*make_thread_bootstrap(group, r), group); });
  for (auto& t : ts) t.join();
}

TEST(ThreadBootstrap, AllgatherBroadcastBarrier) {
  for (int world : {1, 2, 4, 8}) {
    std::atomic<int> ok{0};
    run_threads(world, [&](Bootstrap& b, auto&) {
      EXPECT_TRUE(b.single_process());
      EXPECT_EQ(b.local_rank(), b.rank());
      for (int round = 0; round < 50; ++round) {
        long mine = b.rank() * 100 + round;
        std::vector<long> all(static_cast<size_t>(b.world()));
        b.allgather(&mine, all.data(), sizeof mine);
        for (int r = 0; r < b.world(); ++r) ASSERT_EQ(all[static_cast<size_t>(r)], r * 100 + round);
        int v = b.rank() == round % b.world() ? 1000 + round : -1;
        b.broadcast(&v, sizeof v, round % b.world());
        ASSERT_EQ(v, 1000 + round);
        b.barrier();
      }
      ++ok;
    });
    EXPECT_EQ(ok.load(), world);
  }
}

TEST(ThreadBootstrap, RankOutOfRangeIsAnError) {
  auto group = make_thread_group(2);
  EXPECT_THROW(make_thread_bootstrap(group, 2), Error);
  EXPECT_THROW(make_thread_bootstrap(group, -1), Error);
  EXPECT_THROW(make_thread_group(0), Error);
}

TEST(ThreadBootstrap, BroadcastRootOutOfRangeIsAnError) {
  auto group = make_thread_group(1);
  auto b = make_thread_bootstrap(group, 0);
  int v = 0;
  EXPECT_THROW(b->broadcast(&v, sizeof v, 1), Error);
}

TEST(ThreadBootstrap, MismatchedExchangeSizesAreReported) {
  std::atomic<int> errors{0};
  run_threads(2, [&](Bootstrap& b, auto&) {
    std::vector<char> mine(b.rank() == 0 ? 4 : 8), all(2 * mine.size());
    try {
      b.allgather(mine.data(), all.data(), mine.size());
    } catch (const Error&) {
      ++errors;
      b.abort("size mismatch");
    }
  });
  EXPECT_EQ(errors.load(), 2);
}

TEST(ThreadBootstrap, AbortWakesRanksBlockedInABarrier) {
  std::atomic<int> woken{0};
  run_threads(4, [&](Bootstrap& b, auto&) {
    if (b.rank() == 2) {
      b.abort("rank 2 failed");
      return;
    }
    try {
      b.barrier();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("rank 2 failed"), std::string::npos);
      ++woken;
    }
  });
  EXPECT_EQ(woken.load(), 3);
}

}  // namespace
}  // namespace iris
