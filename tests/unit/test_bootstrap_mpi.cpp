// The MPI bootstrap, run under mpirun (ctest starts it with 2 processes; no GPU needed):
// ranks, local ranks, allgather, broadcast and barrier through MPI_COMM_WORLD; the
// check that ranks are at the same collective; the host watchdog. MPI is OpenMPI,
// dlopen'd by libiris; MpiLibrary.* checks the error when it cannot be loaded.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "job/bootstrap.hpp"
#include "iris/error.hpp"

namespace iris {
namespace {

TEST(MpiBootstrap, CollectivesAcrossProcesses) {
  if (!launched_by_mpi()) GTEST_SKIP() << "not started by mpirun";
  auto b = make_mpi_bootstrap();
  ASSERT_GE(b->world(), 1);
  EXPECT_STREQ(b->name(), "mpi");
  EXPECT_GE(b->local_rank(), 0);
  EXPECT_LT(b->local_rank(), b->world());
  for (int round = 0; round < 20; ++round) {
    long mine = b->rank() * 1000 + round;
    std::vector<long> all(static_cast<size_t>(b->world()));
    b->allgather(&mine, all.data(), sizeof mine);
    for (int r = 0; r < b->world(); ++r) EXPECT_EQ(all[static_cast<size_t>(r)], r * 1000 + round);
    int v = b->rank() == round % b->world() ? round : -1;
    b->broadcast(&v, sizeof v, round % b->world());
    EXPECT_EQ(v, round);
    b->barrier();
  }
  b->teardown_barrier();
  int v = 0;
  EXPECT_THROW(b->broadcast(&v, sizeof v, b->world()), Error);
  // A second bootstrap in the same process reuses the initialized MPI.
  auto again = make_mpi_bootstrap();
  EXPECT_EQ(again->rank(), b->rank());
}

// Rank 1 leaves its body (teardown) while rank 0 still gathers: both get the same error,
// and since both exchanged headers, the bootstrap stays usable.
TEST(MpiBootstrap, EarlyReturnIsAMismatchOnBothRanks) {
  if (!launched_by_mpi()) GTEST_SKIP() << "not started by mpirun";
  auto b = make_mpi_bootstrap(30);
  if (b->world() != 2) GTEST_SKIP() << "needs 2 ranks";
  b->barrier();
  std::string error;
  try {
    if (b->rank() == 1) {
      b->teardown_barrier();
    } else {
      long mine = 0, all[2];
      b->allgather(&mine, all, sizeof mine);
    }
  } catch (const Error& e) {
    error = e.what();
  }
  EXPECT_EQ(error.rfind("host collective mismatch: rank 0 is at allgather #2 (8 bytes) but rank 1 is at teardown "
                        "#2 (it left its body); every rank must make the same host collectives",
                        0),
            0u)
      << error;
  b->barrier();
}

TEST(MpiBootstrap, WatchdogNamesTheRankThatNeverArrives) {
  if (!launched_by_mpi()) GTEST_SKIP() << "not started by mpirun";
  auto b = make_mpi_bootstrap(0.5);
  auto sync = make_mpi_bootstrap(0);  // a communicator of its own, to order the ranks
  if (b->world() != 2) GTEST_SKIP() << "needs 2 ranks";
  if (b->rank() == 0) {
    std::string error;
    try {
      b->barrier();
    } catch (const Error& e) {
      error = e.what();
    }
    EXPECT_EQ(error,
              "host collective timed out: rank 0 waited 0.5 s at barrier #1 for rank 1, which has not arrived; "
              "raise IRIS_HOST_TIMEOUT (seconds, 0 waits forever) if it is just slow, or check what rank 1 is "
              "doing");
    sync->barrier();
  } else {
    sync->barrier();  // rank 0 has given up
    b->barrier();     // late: meets what rank 0 left posted
  }
}

// Run by ctest without mpirun, with IRIS_MPI_LIBRARY naming a missing file
// (MpiBootstrap.MissingLibrary): the error names the library and the variable.
TEST(MpiLibrary, MissingLibraryIsAClearError) {
  const char* library = std::getenv("IRIS_MPI_LIBRARY");
  if (!library || std::filesystem::exists(library)) GTEST_SKIP() << "IRIS_MPI_LIBRARY does not name a missing file";
  std::string error;
  try {
    make_mpi_bootstrap();
  } catch (const Error& e) {
    error = e.what();
  }
  EXPECT_EQ(error.rfind("this process was started by mpirun, but the MPI library could not be loaded (" +
                            std::string(library) + ": ",
                        0),
            0u)
      << error;
  EXPECT_NE(error.find("check IRIS_MPI_LIBRARY, or run without mpirun (threads mode)"), std::string::npos) << error;
}

}  // namespace
}  // namespace iris
