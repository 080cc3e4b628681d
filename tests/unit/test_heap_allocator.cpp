// HeapAllocator: alignment, first fit, small blocks from the top, coalescing on free,
// errors that leave the heap unchanged, and determinism (the property symmetric
// allocation relies on). kFirstFit: every block first fit from the bottom.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "heap/heap_allocator.hpp"
#include "iris/error.hpp"

namespace iris {
namespace {

constexpr std::size_t kBase = 64 << 10;
constexpr std::size_t kSize = 1 << 20;
constexpr std::size_t kFirstFit = 0;

TEST(HeapAllocator, AlignsAndRoundsToMinimum) {
  HeapAllocator a(kBase, kSize, kFirstFit);
  std::size_t x = a.allocate(1);
  std::size_t y = a.allocate(300);
  EXPECT_EQ(x % 256, 0u);
  EXPECT_EQ(y % 256, 0u);
  EXPECT_EQ(y, x + 256);
  EXPECT_EQ(a.block_size(y), 512u);
  std::size_t z = a.allocate(10, 4096);
  EXPECT_EQ(z % 4096, 0u);
  EXPECT_EQ(a.allocate(0) % 256, 0u);  // zero bytes still gets a distinct block
}

TEST(HeapAllocator, FreeCoalescesBothNeighbours) {
  HeapAllocator a(kBase, kSize, kFirstFit);
  std::size_t p = a.allocate(1024), q = a.allocate(1024), r = a.allocate(1024);
  a.free(p);
  a.free(r);
  EXPECT_EQ(a.free_blocks(), 2u);  // [p] and [r .. end]
  a.free(q);
  EXPECT_EQ(a.free_blocks(), 1u);
  EXPECT_EQ(a.free_bytes(), kSize);
  EXPECT_EQ(a.largest_free_block(), kSize);
  EXPECT_EQ(a.allocate(kSize), kBase);  // the whole heap is one block again
}

TEST(HeapAllocator, ReusesFreedSpaceFirstFit) {
  HeapAllocator a(kBase, kSize, kFirstFit);
  std::size_t p = a.allocate(4096);
  a.allocate(4096);
  a.free(p);
  EXPECT_EQ(a.allocate(2048), p);
}

TEST(HeapAllocator, OverAlignedPaddingIsFreedWithTheBlock) {
  HeapAllocator a(kBase, kSize, kFirstFit);
  a.allocate(256);
  std::size_t big = a.allocate(256, 1 << 16);
  EXPECT_EQ(big % (1 << 16), 0u);
  a.free(big);
  a.free(kBase);
  EXPECT_EQ(a.free_bytes(), kSize);
  EXPECT_EQ(a.free_blocks(), 1u);
}

TEST(HeapAllocator, OutOfMemoryNamesRequestedAndFreeBytes) {
  HeapAllocator a(kBase, kSize, kFirstFit);
  a.allocate(kSize / 2);
  try {
    a.allocate(kSize);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("requested 1048576 bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("524288 bytes free"), std::string::npos) << m;
    EXPECT_NE(m.find("largest free block"), std::string::npos) << m;
  }
  EXPECT_EQ(a.used_bytes(), kSize / 2);  // unchanged
  EXPECT_THROW(a.allocate(~std::size_t{0}), Error);  // no overflow when rounding
}

TEST(HeapAllocator, DoubleFreeAndForeignOffsetsAreErrors) {
  HeapAllocator a(kBase, kSize, kFirstFit);
  std::size_t p = a.allocate(512);
  a.free(p);
  EXPECT_THROW(a.free(p), Error);
  std::size_t q = a.allocate(512);
  EXPECT_THROW(a.free(q + 256), Error);  // inside a block, not its start
  EXPECT_THROW(a.free(12345), Error);
  EXPECT_EQ(a.live_blocks(), 1u);
  EXPECT_NO_THROW(a.free(q));
}

TEST(HeapAllocator, BadAlignmentIsAnError) {
  HeapAllocator a(kBase, kSize, kFirstFit);
  EXPECT_THROW(a.allocate(64, 3), Error);
  EXPECT_THROW(a.allocate(64, 0), Error);
}

TEST(HeapAllocator, SmallBlocksComeFromTheTop) {
  HeapAllocator a(kBase, kSize);  // blocks under 64 KiB from the top
  const std::size_t big = a.allocate(256 << 10);
  EXPECT_EQ(big, kBase);
  const std::size_t x = a.allocate(1), y = a.allocate(300);
  EXPECT_EQ(x, kBase + kSize - 256);
  EXPECT_EQ(y, x - 512);
  const std::size_t z = a.allocate(10, 4096);
  EXPECT_EQ(z % 4096, 0u);
  EXPECT_LT(z, y);
  a.free(x);
  a.free(y);
  a.free(z);
  a.free(big);
  EXPECT_EQ(a.free_blocks(), 1u);  // the slivers beside the aligned block coalesced back
  EXPECT_EQ(a.free_bytes(), kSize);
}

TEST(HeapAllocator, SmallBlocksStayOutOfALargeTensorsHole) {
  // A large tensor freed, flags made lazily, the large tensor made again: it fits where
  // it was, which a first fit over the whole heap does not give.
  for (const std::size_t small_below : {HeapAllocator::kSmallBelow, kFirstFit}) {
    HeapAllocator a(kBase, kSize, small_below);
    const std::size_t t = a.allocate(kSize / 2);
    a.allocate(kSize / 2 - 4096);
    a.free(t);
    a.allocate(256);
    a.allocate(1024);
    if (small_below == kFirstFit) {
      EXPECT_THROW(a.allocate(kSize / 2), Error);
    } else {
      EXPECT_EQ(a.allocate(kSize / 2), t);
    }
  }
}

TEST(HeapAllocator, RandomWorkloadKeepsInvariantsAndIsDeterministic) {
  auto run = [](std::uint32_t seed, std::size_t small_below) {
    HeapAllocator a(kBase, kSize, small_below);
    std::mt19937 rng(seed);
    std::vector<std::size_t> live, trace;
    for (int step = 0; step < 4000; ++step) {
      if (!live.empty() && (rng() % 3 == 0 || a.free_bytes() < 64 << 10)) {
        std::size_t i = rng() % live.size();
        a.free(live[i]);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        std::size_t bytes = 1 + rng() % 12288;
        std::size_t align = std::size_t{256} << (rng() % 4);
        try {
          std::size_t off = a.allocate(bytes, align);
          EXPECT_EQ(off % align, 0u);
          EXPECT_GE(off, kBase);
          EXPECT_LE(off + bytes, kBase + kSize);
          live.push_back(off);
          trace.push_back(off);
        } catch (const Error&) {
          trace.push_back(0);
        }
      }
    }
    for (std::size_t off : live) a.free(off);
    EXPECT_EQ(a.free_bytes(), kSize);
    EXPECT_EQ(a.free_blocks(), 1u);
    return trace;
  };
  // Same calls, same offsets: symmetric across ranks. 8 KiB splits the sizes in two.
  EXPECT_EQ(run(1, kFirstFit), run(1, kFirstFit));
  EXPECT_EQ(run(2, 8192), run(2, 8192));
}

}  // namespace
}  // namespace iris
