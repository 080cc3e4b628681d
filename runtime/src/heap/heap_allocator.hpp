// The allocator inside a symmetric heap: offsets in, offsets out, no device calls.
// Two ends over one address-ordered free list: blocks of `small_below` bytes or more
// first fit from the bottom; smaller ones from the top (the highest free block that
// fits, at its high end), so the small flags and states that the standard library makes
// lazily between calls land in the hole a large tensor left only when it is the highest
// free block (the heap above it all taken). Free coalesces with both neighbours.
// Deterministic: the same sequence of calls gives the same offsets on every rank,
// which is what makes collective allocation symmetric.
#pragma once

#include <cstddef>
#include <map>
#include <optional>

namespace iris {

class HeapAllocator {
 public:
  static constexpr std::size_t kMinAlignment = 256;
  static constexpr std::size_t kSmallBelow = std::size_t{64} << 10;

  // Manages [begin, begin + bytes). small_below = 0: every block first fit from the bottom.
  HeapAllocator(std::size_t begin, std::size_t bytes, std::size_t small_below = kSmallBelow);

  // Returns the offset of a new block of at least `bytes` (rounded up to 256; 0 counts
  // as 256), aligned to max(alignment, 256). Throws iris::Error when nothing fits,
  // naming the requested bytes, the free bytes and the largest free block; throws on
  // an alignment that is not a power of two.
  std::size_t allocate(std::size_t bytes, std::size_t alignment = kMinAlignment);

  // Frees the block starting at `offset`. Throws iris::Error when no block starts
  // there (a double free or a foreign pointer); the heap is left unchanged.
  void free(std::size_t offset);

  // Size of the live block starting at `offset`, or 0 if none does.
  std::size_t block_size(std::size_t offset) const;

  std::size_t capacity() const { return bytes_; }
  std::size_t used_bytes() const { return used_; }
  std::size_t free_bytes() const { return bytes_ - used_; }
  std::size_t largest_free_block() const;
  std::size_t live_blocks() const { return live_.size(); }
  std::size_t free_blocks() const { return free_.size(); }

 private:
  std::optional<std::size_t> take_from_top(std::size_t size, std::size_t alignment);

  std::size_t begin_, bytes_, small_below_, used_ = 0;
  std::map<std::size_t, std::size_t> free_;  // offset -> size, address-ordered, never adjacent
  std::map<std::size_t, std::size_t> live_;  // offset -> size (including alignment padding kept in front)
  std::map<std::size_t, std::size_t> pad_;   // offset -> padding bytes that precede it
};

}  // namespace iris
