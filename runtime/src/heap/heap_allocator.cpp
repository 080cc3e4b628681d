// Two-ended first-fit, coalescing allocator over heap offsets (see heap_allocator.hpp).
#include "heap/heap_allocator.hpp"

#include <iterator>
#include <string>

#include "iris/error.hpp"
#include "iris/size.hpp"

namespace iris {
namespace {

std::size_t align_up(std::size_t v, std::size_t a) { return (v + a - 1) & ~(a - 1); }

}  // namespace

HeapAllocator::HeapAllocator(std::size_t begin, std::size_t bytes, std::size_t small_below)
    : begin_(begin), bytes_(bytes), small_below_(small_below) {
  if (bytes) free_.emplace(begin, bytes);
}

std::size_t HeapAllocator::allocate(std::size_t bytes, std::size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    throw Error("heap allocation alignment must be a power of two (got " + std::to_string(alignment) + ")");
  }
  if (alignment < kMinAlignment) alignment = kMinAlignment;
  // Clamp before rounding so huge requests cannot overflow; they still cannot fit.
  const std::size_t clamped = bytes > bytes_ ? bytes_ + 1 : bytes;
  const std::size_t size = align_up(clamped == 0 ? 1 : clamped, kMinAlignment);
  if (size < small_below_) {
    if (const auto at = take_from_top(size, alignment)) return *at;
  }
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    const std::size_t block = it->first, block_size = it->second;
    const std::size_t start = align_up(block, alignment);
    const std::size_t pad = start - block;
    if (pad > block_size || block_size - pad < size) continue;
    free_.erase(it);
    // Padding in front of an over-aligned block stays with the block (freed with it),
    // so the free list never holds slivers smaller than the minimum alignment.
    const std::size_t rest = block_size - pad - size;
    if (rest) free_.emplace(start + size, rest);
    live_.emplace(start, size);
    if (pad) pad_.emplace(start, pad);
    used_ += pad + size;
    return start;
  }
  throw Error("symmetric heap out of memory: requested " + std::to_string(bytes) + " bytes (" +
              format_bytes(bytes) + "), " + std::to_string(free_bytes()) + " bytes free (" +
              format_bytes(free_bytes()) + ") of " + format_bytes(bytes_) + ", largest free block " +
              format_bytes(largest_free_block()) + "; raise the heap size (Options::heap_bytes, --heap or IRIS_HEAP_SIZE)");
}

// The highest free block that holds `size` bytes aligned to `alignment`, cut at its high
// end (what is left on either side stays free; both are multiples of 256); none when none.
std::optional<std::size_t> HeapAllocator::take_from_top(std::size_t size, std::size_t alignment) {
  for (auto it = free_.rbegin(); it != free_.rend(); ++it) {
    const std::size_t block = it->first, block_size = it->second;
    if (block_size < size) continue;
    const std::size_t start = (block + block_size - size) & ~(alignment - 1);
    if (start < block) continue;
    free_.erase(std::next(it).base());
    if (start > block) free_.emplace(block, start - block);
    if (const std::size_t end = block + block_size; end > start + size) free_.emplace(start + size, end - start - size);
    live_.emplace(start, size);
    used_ += size;
    return start;
  }
  return std::nullopt;
}

void HeapAllocator::free(std::size_t offset) {
  auto it = live_.find(offset);
  if (it == live_.end()) {
    throw Error("heap free of offset " + std::to_string(offset) +
                ": no live allocation starts there (double free, or a pointer that heap_alloc did not return)");
  }
  std::size_t start = offset, size = it->second;
  live_.erase(it);
  if (auto p = pad_.find(offset); p != pad_.end()) {
    start -= p->second;
    size += p->second;
    pad_.erase(p);
  }
  used_ -= size;
  // Coalesce with the next and the previous free block.
  auto next = free_.lower_bound(start);
  if (next != free_.end() && next->first == start + size) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      prev->second += size;
      return;
    }
  }
  free_.emplace(start, size);
}

std::size_t HeapAllocator::block_size(std::size_t offset) const {
  auto it = live_.find(offset);
  return it == live_.end() ? 0 : it->second;
}

std::size_t HeapAllocator::largest_free_block() const {
  std::size_t best = 0;
  for (const auto& [off, size] : free_) best = size > best ? size : best;
  return best;
}

}  // namespace iris
