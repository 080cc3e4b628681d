// HeapAllocator: alignment, first fit, coalescing on free, errors that leave the heap
// unchanged, and determinism (the property symmetric allocation relies on).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "heap/heap_allocator.hpp"
#include "iris/error.hpp"

namespace iris {
namespace {

constexpr std::size_t kBase = 64 << 10;
constexpr std::size_t kSize = 1 << 20;

TEST(HeapAllocator, AlignsAndRoundsToMinimum) {
  HeapAllocator a(kBase, kSize);
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
  HeapAllocator a(kBase, kSize);
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
  HeapAllocator a(kBase, kSize);
  std::size_t p = a.allocate(4096);
  a.allocate(4096);
  a.free(p);
  EXPECT_EQ(a.allocate(2048), p);
}

TEST(HeapAllocator, OverAlignedPaddingIsFreedWithTheBlock) {
  HeapAllocator a(kBase, kSize);
  a.allocate(256);
  std::size_t big = a.allocate(256, 1 << 16);
  EXPECT_EQ(big % (1 << 16), 0u);
  a.free(big);
  a.free(kBase);
  EXPECT_EQ(a.free_bytes(), kSize);
  EXPECT_EQ(a.free_blocks(), 1u);
}

TEST(HeapAllocator, OutOfMemoryNamesRequestedAndFreeBytes) {
  HeapAllocator a(kBase, kSize);
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
  HeapAllocator a(kBase, kSize);
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
  HeapAllocator a(kBase, kSize);
  EXPECT_THROW(a.allocate(64, 3), Error);
  EXPECT_THROW(a.allocate(64, 0), Error);
}

TEST(HeapAllocator, RandomWorkloadKeepsInvariantsAndIsDeterministic) {
  auto run = [](std::uint32_t seed) {
    HeapAllocator a(kBase, kSize);
    std::mt19937 rng(seed);
    std::vector<std::size_t> live, trace;
    for (int step = 0; step < 4000; ++step) {
      if (!live.empty() && (rng() % 3 == 0 || a.free_bytes() < 64 << 10)) {
        std::size_t i = rng() % live.size();
        a.free(live[i]);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        std::size_t bytes = 1 + rng() % 8192;
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
  EXPECT_EQ(run(1), run(1));  // same calls, same offsets: symmetric across ranks
}

}  // namespace
}  // namespace iris
