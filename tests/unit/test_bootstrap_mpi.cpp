// The MPI bootstrap, run under mpirun (ctest starts it with 2 processes; no GPU needed):
// ranks, local ranks, allgather, broadcast and barrier through MPI_COMM_WORLD.
#include <gtest/gtest.h>

#include <vector>

#include "bootstrap.hpp"
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
  int v = 0;
  EXPECT_THROW(b->broadcast(&v, sizeof v, b->world()), Error);
  // A second bootstrap in the same process reuses the initialized MPI.
  auto again = make_mpi_bootstrap();
  EXPECT_EQ(again->rank(), b->rank());
}

}  // namespace
}  // namespace iris
