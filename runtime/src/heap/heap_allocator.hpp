// The allocator inside a symmetric heap: offsets in, offsets out, no device calls.
// First fit over an address-ordered free list; free coalesces with both neighbours.
// Deterministic: the same sequence of calls gives the same offsets on every rank,
// which is what makes collective allocation symmetric.
#pragma once

#include <cstddef>
#include <map>

namespace iris {

class HeapAllocator {
 public:
  static constexpr std::size_t kMinAlignment = 256;

  // Manages [begin, begin + bytes).
  HeapAllocator(std::size_t begin, std::size_t bytes);

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
  std::size_t begin_, bytes_, used_ = 0;
  std::map<std::size_t, std::size_t> free_;  // offset -> size, address-ordered, never adjacent
  std::map<std::size_t, std::size_t> live_;  // offset -> size (including alignment padding kept in front)
  std::map<std::size_t, std::size_t> pad_;   // offset -> padding bytes that precede it
};

}  // namespace iris
