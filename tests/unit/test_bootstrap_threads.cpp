// The thread bootstrap: allgather, broadcast and barrier across real threads; the
// checks that ranks are at the same collective; the host watchdog; and the abort path
// that keeps a failing rank from hanging the others.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "job/bootstrap.hpp"
#include "iris/error.hpp"

namespace iris {
namespace {

template <class F>
void run_threads(int world, F f, double host_timeout = 0) {
  auto group = make_thread_group(world, host_timeout);
  std::vector<std::thread> ts;
  for (int r = 0; r < world; ++r) ts.emplace_back([&, r] { f(*make_thread_bootstrap(group, r), group); });
  for (auto& t : ts) t.join();
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The error each rank got (empty: none), by rank.
class Errors {
 public:
  explicit Errors(int world) : by_rank_(static_cast<size_t>(world)) {}
  template <class F>
  void record(int rank, F f) {
    try {
      f();
    } catch (const Error& e) {
      std::lock_guard<std::mutex> lock(mu_);
      by_rank_[static_cast<size_t>(rank)] = e.what();
    }
  }
  const std::string& operator[](int rank) const { return by_rank_[static_cast<size_t>(rank)]; }

 private:
  std::mutex mu_;
  std::vector<std::string> by_rank_;
};

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
      b.teardown_barrier();
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
  Errors errors(2);
  run_threads(2, [&](Bootstrap& b, auto&) {
    std::vector<char> mine(b.rank() == 0 ? 4 : 8), all(2 * mine.size());
    errors.record(b.rank(), [&] { b.allgather(mine.data(), all.data(), mine.size()); });
  });
  const std::string want =
      "host collective mismatch: rank 0 is at allgather #1 (4 bytes) but rank 1 is at allgather #1 (8 bytes)";
  EXPECT_EQ(errors[0].rfind(want, 0), 0u) << errors[0];
  EXPECT_EQ(errors[1].rfind(want, 0), 0u) << errors[1];
}

// A rank that returns from its body early goes to its Context's teardown barrier; a
// peer's next collective must not match it (it used to, then read a stale slot and hang).
TEST(ThreadBootstrap, EarlyReturnIsAMismatchOnBothRanks) {
  Errors errors(2);
  const auto t0 = Clock::now();
  run_threads(2, [&](Bootstrap& b, auto&) {
    for (int i = 0; i < 6; ++i) b.barrier();
    errors.record(b.rank(), [&] {
      if (b.rank() == 1) {
        b.teardown_barrier();
      } else {
        long mine = 0, all[2];
        b.allgather(&mine, all, sizeof mine);
      }
    });
  });
  EXPECT_LT(seconds_since(t0), 1.0);
  const std::string want =
      "host collective mismatch: rank 0 is at allgather #7 (8 bytes) but rank 1 is at teardown #7 (it left its "
      "body); every rank must make the same host collectives";
  EXPECT_EQ(errors[0].rfind(want, 0), 0u) << errors[0];
  EXPECT_EQ(errors[1].rfind(want, 0), 0u) << errors[1];
}

TEST(ThreadBootstrap, DifferentCallOrderIsAMismatch) {
  Errors errors(2);
  run_threads(2, [&](Bootstrap& b, auto&) {
    errors.record(b.rank(), [&] {
      int v = 5;
      if (b.rank() == 0) {
        b.barrier();
        b.broadcast(&v, sizeof v, 0);
      } else {
        b.broadcast(&v, sizeof v, 0);
        b.barrier();
      }
    });
  });
  const std::string want =
      "host collective mismatch: rank 0 is at barrier #1 but rank 1 is at broadcast #1 (4 bytes from rank 0)";
  EXPECT_EQ(errors[0].rfind(want, 0), 0u) << errors[0];
  EXPECT_EQ(errors[1].rfind(want, 0), 0u) << errors[1];
}

TEST(ThreadBootstrap, MismatchIsReportedToRanksArrivingLater) {
  Errors errors(3);
  std::atomic<int> reported{0};
  run_threads(3, [&](Bootstrap& b, auto&) {
    if (b.rank() == 2) {
      while (reported.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    errors.record(b.rank(), [&] {
      int root = b.rank() == 1 ? 1 : 0, v = 0;
      b.broadcast(&v, sizeof v, root);
    });
    ++reported;
  });
  const std::string want = "host collective mismatch: rank 0 is at broadcast #1 (4 bytes from rank 0) but rank 1 "
                           "is at broadcast #1 (4 bytes from rank 1)";
  for (int r = 0; r < 3; ++r) EXPECT_EQ(errors[r].rfind(want, 0), 0u) << "rank " << r << ": " << errors[r];
}

TEST(ThreadBootstrap, WatchdogNamesTheRankThatNeverArrives) {
  Errors errors(3);
  std::atomic<int> timed_out{0};
  const auto t0 = Clock::now();
  double waited = 0;
  run_threads(
      3,
      [&](Bootstrap& b, auto&) {
        if (b.rank() == 2) {
          // Stuck elsewhere until the others gave up, then late: the group has failed.
          while (timed_out.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
          errors.record(2, [&] { b.barrier(); });
          return;
        }
        errors.record(b.rank(), [&] { b.barrier(); });
        ++timed_out;
        if (b.rank() == 0) waited = seconds_since(t0);
      },
      0.5);
  EXPECT_LT(waited, 3.0);  // the deadline is 0.5 s; generous for a loaded machine
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(errors[r].rfind("host collective timed out: rank ", 0), 0u) << errors[r];
    EXPECT_NE(errors[r].find(" waited 0.5 s at barrier #1 for rank 2, which has not arrived; raise "
                             "IRIS_HOST_TIMEOUT (seconds, 0 waits forever) if it is just slow, or check what "
                             "rank 2 is doing"),
              std::string::npos)
        << errors[r];
  }
}

TEST(ThreadBootstrap, WatchdogNamesEveryMissingRank) {
  Errors errors(4);
  run_threads(
      4,
      [&](Bootstrap& b, auto&) {
        if (b.rank() != 1) return;
        errors.record(1, [&] { b.teardown_barrier(); });
      },
      0.2);
  EXPECT_EQ(errors[1],
            "host collective timed out: rank 1 waited 0.2 s at teardown #1 (it left its body) for ranks 0, 2, 3, "
            "which have not arrived; raise IRIS_HOST_TIMEOUT (seconds, 0 waits forever) if they are just slow, or "
            "check what ranks 0, 2, 3 are doing");
}

TEST(ThreadBootstrap, AbortWakesWaitersLongBeforeTheTimeout) {
  Errors errors(3);
  const auto t0 = Clock::now();
  run_threads(
      3,
      [&](Bootstrap& b, auto&) {
        if (b.rank() == 2) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          b.abort("rank 2: out of memory");
          return;
        }
        errors.record(b.rank(), [&] {
          long mine = 1, all[3];
          b.allgather(&mine, all, sizeof mine);
        });
      },
      60);
  EXPECT_LT(seconds_since(t0), 30.0);
  EXPECT_EQ(errors[0], "another rank failed: rank 2: out of memory");
  EXPECT_EQ(errors[1], "another rank failed: rank 2: out of memory");
}

TEST(ThreadBootstrap, NegativeHostTimeoutIsAnError) { EXPECT_THROW(make_thread_group(2, -1), Error); }

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
