// A Context's symmetric heap: allocations, address translation, tensors, and fills.
#include "core/context_impl.hpp"

#include <cstring>
#include <string>

#include "backend/backend.hpp"
#include "iris/error.hpp"

namespace iris {

static int dtype_index(DType t) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (kAllDTypes[i] == t) return i;
  }
  return 0;
}

void* Context::heap_alloc(std::size_t bytes, std::size_t alignment) {
  Impl::Span span(impl_->tracer.get());
  void* p = heap_alloc_collective(bytes, alignment);
  if (span.t) span.end("heap_alloc " + std::to_string(bytes) + " B");
  return p;
}

void* Context::heap_alloc_collective(std::size_t bytes, std::size_t alignment) {
  struct Request {
    unsigned long long bytes, alignment, offset;
    int ok;
  };
  Request mine{bytes, alignment, 0, 0};
  std::string error;
  try {
    mine.offset = impl_->alloc->allocate(bytes, alignment);
    mine.ok = 1;
  } catch (const Error& e) {
    error = e.what();
  }
  std::vector<Request> all(static_cast<std::size_t>(world()));
  impl_->boot->allgather(&mine, all.data(), sizeof(Request));
  // Every rank runs the same checks on the same data, so all throw or none does.
  if (!mine.ok) throw Error(error);
  for (int r = 0; r < world(); ++r) {
    if (!all[static_cast<std::size_t>(r)].ok) {
      impl_->alloc->free(mine.offset);
      throw Error("collective heap allocation of " + std::to_string(bytes) + " bytes failed on rank " +
                  std::to_string(r) + " (see its error); no rank keeps it");
    }
  }
  for (int r = 0; r < world(); ++r) {
    const Request& q = all[static_cast<std::size_t>(r)];
    if (q.bytes != mine.bytes || q.alignment != mine.alignment || q.offset != mine.offset) {
      impl_->alloc->free(mine.offset);
      throw Error("ranks disagree on a collective heap allocation: rank " + std::to_string(rank()) + " asked for " +
                  std::to_string(mine.bytes) + " bytes (alignment " + std::to_string(mine.alignment) +
                  ") and got offset " + std::to_string(mine.offset) + ", rank " + std::to_string(r) +
                  " asked for " + std::to_string(q.bytes) + " bytes (alignment " + std::to_string(q.alignment) +
                  ") and got offset " + std::to_string(q.offset) +
                  "; every rank must make the same heap allocations and frees in the same order");
    }
  }
  return impl_->heap->local_base() + mine.offset;
}

void Context::heap_free(void* ptr) {
  if (!ptr) return;
  if (!impl_->in_heap(ptr)) {
    throw Error("heap_free: pointer " + std::to_string(reinterpret_cast<std::uintptr_t>(ptr)) +
                " is not in rank " + std::to_string(rank()) + "'s symmetric heap");
  }
  impl_->alloc->free(impl_->offset_of(ptr));
}

HeapInfo Context::heap_info() const {
  HeapInfo h;
  h.base = reinterpret_cast<std::uintptr_t>(impl_->heap->local_base());
  h.capacity = impl_->alloc->capacity();
  h.used = impl_->alloc->used_bytes();
  h.free = impl_->alloc->free_bytes();
  h.largest_free_block = impl_->alloc->largest_free_block();
  h.live_allocations = impl_->alloc->live_blocks();
  return h;
}

bool Context::in_heap(const void* ptr) const { return impl_->in_heap(ptr); }
bool Context::in_heap(const void* ptr, std::size_t bytes) const { return impl_->in_heap(ptr, bytes); }

void* Context::translate(const void* ptr, int to) const {
  if (to < 0 || to >= world()) {
    throw Error("rank " + std::to_string(to) + " is out of range [0, " + std::to_string(world()) + ")");
  }
  if (!impl_->in_heap(ptr)) throw Error("translate: the pointer is not in this rank's symmetric heap");
  return impl_->heap->base(to) + impl_->offset_of(ptr);
}

void* Context::alloc_tensor(const Shape& shape, DType dtype, std::size_t* numel) {
  auto shape_text = [&] {
    std::string t = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) t += (i ? ", " : "") + std::to_string(shape[i]);
    return t + "]";
  };
  std::size_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 0) throw Error("tensor shape " + shape_text() + " has a negative extent (" + std::to_string(d) + ")");
    if (__builtin_mul_overflow(n, static_cast<std::size_t>(d), &n)) {
      throw Error("tensor shape " + shape_text() + " has more elements than 64 bits can count");
    }
  }
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(n, dtype_size(dtype), &bytes)) {
    throw Error("tensor shape " + shape_text() + " of " + std::string(dtype_name(dtype)) + " needs " +
                std::to_string(n) + " x " + std::to_string(dtype_size(dtype)) + " bytes, more than 64 bits can count");
  }
  *numel = n;
  return heap_alloc(bytes);
}

void Context::fill(void* ptr, DType dtype, std::size_t n, double value) {
  const std::uint64_t bits = dtype_bits(dtype, value);
  switch (dtype_size(dtype)) {
    case 2:
    case 4:
      backend::active().memset_async(ptr, static_cast<std::uint32_t>(bits), dtype_size(dtype), n, impl_->stream);
      break;
    default: {
      impl_->require_runtime_kernels("Context::fill of 8-byte elements");
      unsigned long long nn = n, b = bits;
      impl_->launch_simple(impl_->fill_u64, n, {const_cast<device::Context*>(&impl_->dctx), &ptr, &nn, &b});
    }
  }
}

void Context::fill_arange(void* ptr, DType dtype, std::size_t n) {
  impl_->require_runtime_kernels("Context::fill_arange");
  unsigned long long nn = n;
  impl_->launch_simple(impl_->arange[dtype_index(dtype)], n, {const_cast<device::Context*>(&impl_->dctx), &ptr, &nn});
}

void Context::fill_random(void* ptr, DType dtype, std::size_t n, int kind, std::uint64_t seed, std::int64_t lo,
                          std::int64_t hi) {
  if (kind < 2 && !dtype_is_float(dtype)) {
    throw Error(std::string(kind == 0 ? "rand" : "randn") + " needs a floating dtype (f32, f16, bf16), not " +
                std::string(dtype_name(dtype)) + "; use randint for integers");
  }
  if (kind == 2 && hi <= lo) {
    throw Error("randint needs low < high (got [" + std::to_string(lo) + ", " + std::to_string(hi) + "))");
  }
  impl_->require_runtime_kernels("Context::fill_random");
  unsigned long long nn = n;
  // Mix the rank in, so ranks draw different numbers from the same seed.
  unsigned long long s = seed * 0x100000001b3ull + static_cast<unsigned long long>(rank()) + 1;
  long long l = lo, h = hi;
  impl_->launch_simple(impl_->random[dtype_index(dtype)], n,
                       {const_cast<device::Context*>(&impl_->dctx), &ptr, &nn, &kind, &s, &l, &h});
}

}  // namespace iris
