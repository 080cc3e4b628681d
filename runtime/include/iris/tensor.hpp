// Tensor<T>: a typed, shaped block of one rank's symmetric heap. Every rank holds a
// twin at the same offset, so a kernel can address any rank's copy. Freed on
// destruction (keep the same destruction order on every rank).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "iris/context.hpp"
#include "iris/error.hpp"

namespace iris {

template <class T>
class Tensor {
 public:
  Tensor() = default;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  Tensor(Tensor&& o) noexcept { swap(o); }
  Tensor& operator=(Tensor&& o) noexcept {
    if (this != &o) {
      reset();
      swap(o);
    }
    return *this;
  }
  ~Tensor() { reset(); }

  T* data() const { return data_; }
  std::size_t numel() const { return numel_; }
  std::size_t bytes() const { return numel_ * sizeof(T); }
  const Shape& shape() const { return shape_; }
  static constexpr DType dtype() { return dtype_of_v<T>; }
  explicit operator bool() const { return data_ != nullptr; }

  // This tensor's twin on rank `r`, as an address this process can use (host copies).
  T* on_rank(int r) const { return ctx_->translate(data_, r); }

  std::vector<T> to_host() const {
    std::vector<T> out(numel_);
    if (numel_) ctx_->copy_to_host(out.data(), data_, bytes());
    return out;
  }
  void copy_from_host(std::span<const T> host) {
    if (host.size() != numel_) {
      throw Error("copy_from_host: " + std::to_string(host.size()) + " host elements for a tensor of " +
                  std::to_string(numel_));
    }
    if (numel_) ctx_->copy_from_host(data_, host.data(), bytes());
  }

  // Frees now (also done by the destructor).
  void reset() {
    if (data_ && ctx_) ctx_->heap_free(data_);
    data_ = nullptr;
    numel_ = 0;
    shape_.clear();
  }

 private:
  friend class Context;
  Tensor(Context* ctx, T* data, std::size_t numel, Shape shape)
      : ctx_(ctx), data_(data), numel_(numel), shape_(std::move(shape)) {}
  void swap(Tensor& o) noexcept {
    std::swap(ctx_, o.ctx_);
    std::swap(data_, o.data_);
    std::swap(numel_, o.numel_);
    std::swap(shape_, o.shape_);
  }
  Context* ctx_ = nullptr;
  T* data_ = nullptr;
  std::size_t numel_ = 0;
  Shape shape_;
};

namespace detail {

template <class A> struct KernelArg {
  static_assert(std::is_trivially_copyable_v<A>, "kernel arguments must be trivially copyable (or an iris::Tensor)");
  using type = A;
  static const A& get(const A& a) { return a; }
};
template <class T> struct KernelArg<Tensor<T>> {
  using type = T*;
  static T* get(const Tensor<T>& t) { return t.data(); }
};

}  // namespace detail

template <class T>
Tensor<T> Context::empty(const Shape& shape) {
  std::size_t n = 0;
  void* p = alloc_tensor(shape, dtype_of_v<T>, &n);
  return Tensor<T>(this, static_cast<T*>(p), n, shape);
}

template <class T>
Tensor<T> Context::full(const Shape& shape, double value) {
  Tensor<T> t = empty<T>(shape);
  fill(t.data(), dtype_of_v<T>, t.numel(), value);
  return t;
}

template <class T>
Tensor<T> Context::arange(std::size_t n) {
  Tensor<T> t = empty<T>(n);
  fill_arange(t.data(), dtype_of_v<T>, n);
  return t;
}

template <class T>
Tensor<T> Context::rand(const Shape& shape, std::uint64_t seed) {
  Tensor<T> t = empty<T>(shape);
  fill_random(t.data(), dtype_of_v<T>, t.numel(), 0, seed, 0, 0);
  return t;
}

template <class T>
Tensor<T> Context::randn(const Shape& shape, std::uint64_t seed) {
  Tensor<T> t = empty<T>(shape);
  fill_random(t.data(), dtype_of_v<T>, t.numel(), 1, seed, 0, 0);
  return t;
}

template <class T>
Tensor<T> Context::randint(const Shape& shape, std::int64_t low, std::int64_t high, std::uint64_t seed) {
  Tensor<T> t = empty<T>(shape);
  fill_random(t.data(), dtype_of_v<T>, t.numel(), 2, seed, low, high);
  return t;
}

template <class T>
void Context::broadcast(Tensor<T>& t, int root) {
  broadcast(static_cast<void*>(t.data()), t.bytes(), root);
}

template <class... Args>
void Context::launch(const Kernel& kernel, const LaunchConfig& cfg, const Args&... args) {
  std::tuple<device::Context, typename detail::KernelArg<Args>::type...> values{
      device_context(), detail::KernelArg<Args>::get(args)...};
  constexpr std::size_t n = 1 + sizeof...(Args);
  void* ptrs[n];
  std::size_t sizes[n];
  std::apply(
      [&](auto&... v) {
        std::size_t i = 0;
        ((ptrs[i] = static_cast<void*>(&v), sizes[i] = sizeof(v), ++i), ...);
      },
      values);
  launch_raw(kernel, cfg, ptrs, sizes, n);
}

}  // namespace iris
