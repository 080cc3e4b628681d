// Program: a module compiled by irisc, loaded into one rank's context together with
// its launch contract (the metadata irisc embeds, validated once at load). Any irisc
// kernel launches through it by name; arguments are checked against the contract, size
// symbols are bound from the tensors' shapes, the grid comes from the kernel's policy or
// roles, and the arguments are packed in the contract's order.
#pragma once

#include <array>
#include <cstdint>
#include <cstddef>
#include <initializer_list>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "iris/context.hpp"
#include "iris/tensor.hpp"

// The launch contract (compiler/contract/launch_contract.hpp): a Program keeps one per
// kernel; code that reads them includes that header. No public header includes a
// compiler header.
namespace irisc::contract {
struct Kernel;
struct Bindings;
}  // namespace irisc::contract

namespace iris {

// One launch argument: a tensor (with its dtype, shape, and whether it lives on the
// symmetric heap) or a scalar.
class Arg {
 public:
  template <class T>
  Arg(const Tensor<T>& t)  // NOLINT: implicit, so launches read like calls
      : tensor_(true), dtype_(dtype_of_v<T>), ptr_(t.data()), on_heap_(true), bytes_(t.bytes()) {
    set_shape(t.shape());
  }
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Arg(T v)  // NOLINT
      : is_float_(std::is_floating_point_v<T>), f_(static_cast<double>(v)), i_(static_cast<std::int64_t>(v)) {}
  // f16 and bf16 scalars: the value converts back exactly when Program packs it.
  Arg(half v) : is_float_(true), f_(static_cast<float>(v)), i_(static_cast<std::int64_t>(static_cast<float>(v))) {}  // NOLINT
  Arg(bfloat16 v)  // NOLINT
      : is_float_(true), f_(static_cast<float>(v)), i_(static_cast<std::int64_t>(static_cast<float>(v))) {}
  // A device buffer that is not on the heap (local tensor parameters only), of `bytes`
  // bytes (a launch checks that the shape fits in them; SIZE_MAX: not checked).
  static Arg device_buffer(void* ptr, DType dtype, Shape shape, std::size_t bytes = SIZE_MAX);
  // Memory on the symmetric heap seen as a tensor of `shape` (a reshape, or part of a
  // larger allocation): accepted where a symmetric tensor is required.
  static Arg heap_buffer(void* ptr, DType dtype, Shape shape, std::size_t bytes);

  bool is_tensor() const { return tensor_; }
  DType dtype() const { return dtype_; }
  void* ptr() const { return ptr_; }
  // The extents (a launch rejects tensors of more than kMaxDims dimensions).
  std::span<const std::int64_t> shape() const { return {dims_.data(), rank_ <= kMaxDims ? rank_ : 0}; }
  std::size_t rank() const { return rank_; }
  static constexpr std::size_t kMaxDims = 8;
  bool on_heap() const { return on_heap_; }
  // Bytes of the allocation behind ptr() (SIZE_MAX: not known).
  std::size_t bytes() const { return bytes_; }
  bool is_float() const { return is_float_; }
  double float_value() const { return f_; }
  std::int64_t int_value() const { return i_; }

 private:
  Arg() = default;
  bool tensor_ = false;
  DType dtype_ = DType::f32;
  void* ptr_ = nullptr;
  void set_shape(const Shape& shape) {
    rank_ = shape.size();
    for (std::size_t i = 0; i < shape.size() && i < kMaxDims; ++i) dims_[i] = shape[i];
  }
  // Inline, so building the argument list of a launch allocates nothing.
  std::array<std::int64_t, kMaxDims> dims_{};
  std::size_t rank_ = 0;
  bool on_heap_ = false;
  std::size_t bytes_ = SIZE_MAX;
  bool is_float_ = false;
  double f_ = 0;
  std::int64_t i_ = 0;
};

class Program {
 public:
  // Out of line: the contracts' type is complete in program.cpp alone.
  Program();
  ~Program();
  Program(const Program&);
  Program(Program&&) noexcept;
  Program& operator=(const Program&);
  Program& operator=(Program&&) noexcept;
  // Loads an irisc code object (cubin or PTX with an `iris_metadata` launch contract)
  // into `ctx`, and validates the contract once. Throws iris::Error when the code or its
  // contract is not usable.
  Program(Context& ctx, std::span<const std::byte> code, const std::string& name);

  // The launch contracts of the module's kernels (include
  // compiler/contract/launch_contract.hpp to read them).
  const std::vector<irisc::contract::Kernel>& kernels() const { return kernels_; }
  const irisc::contract::Kernel& kernel(const std::string& name) const;
  const Module& module() const { return module_; }

  // Launches `name` with `args` in the kernel's parameter order on `stream` (default:
  // the rank's). Throws iris::Error naming the kernel and parameter on a wrong count,
  // kind, dtype, shape, or a local buffer where a symmetric tensor is required.
  void launch(const std::string& name, std::initializer_list<Arg> args, Stream stream = nullptr) const;
  // The same with arguments built at run time (one per parameter, in order).
  void launch(const std::string& name, std::span<const Arg> args, Stream stream = nullptr) const;
  // The grid (programs) a launch of `name` with these size bindings would use.
  unsigned grid_size(const std::string& name, const std::map<std::string, std::int64_t>& sizes) const;

  // What to launch instead when a kernel reads a GEMM operand through a TMA tensor map
  // that the tensor passed cannot have (rows not a multiple of 16 bytes, a base not
  // 16-byte aligned): a Program with a kernel of the same name and parameters, made on
  // first need and kept. jit_program sets it for what it compiles for sm_90a: the same
  // source compiled for sm_90 (the mma.sync lowering, which takes any shape), and says
  // so once per kernel at IRIS_LOG=info. Without one such a launch throws.
  void set_fallback(std::function<Program()> make);
  // Whether the last launch of `name` ran the fallback's kernel.
  bool fell_back(const std::string& name) const;

 private:
  // Per kernel, what a launch needs beyond the contract, computed at load.
  struct SizeBinding {
    int param = -1, dim = -1;  // the first bare extent naming the size
  };
  struct Prepared {
    Kernel function;
    std::vector<SizeBinding> sizes;
    std::vector<DType> dtypes;  // per parameter (tensors: the element type)
    std::int64_t resident = 1;  // programs one SM holds at once (grids of persistent loops)
    std::int64_t clusters = 0;  // clusters the device holds at once (kernels launched in clusters)
    std::int64_t co_resident = 0;  // programs the device holds at once (kernels with roles)
    // Per argument slot: the tensor a tensor map was last encoded for, and the map, so
    // that launching again with the same tensor skips the lookup (launches are hot).
    // A gathered operand's maps (one per rank) are copied into `every_rank`, the
    // argument's bytes.
    struct MapMemo {
      const void* ptr = nullptr;
      std::int64_t rows = 0, cols = 0;
      void* map = nullptr;
      std::vector<unsigned char> every_rank;
    };
    mutable std::vector<MapMemo> maps;
    bool has_maps = false;  // any tensor-map argument slot
  };
  std::size_t index_of(const std::string& name) const;
  unsigned grid_for(std::size_t kernel, std::span<const std::int64_t> sizes) const;
  irisc::contract::Bindings bindings(std::size_t kernel, std::span<const std::int64_t> sizes) const;

  // The rule a tensor map of this launch breaks ("" when every map can be made).
  std::string map_problem(std::size_t kernel, const Arg* args) const;
  struct Fallback;

  Context* ctx_ = nullptr;
  std::shared_ptr<Fallback> fallback_;
  Module module_;
  std::vector<irisc::contract::Kernel> kernels_;
  std::vector<Prepared> prepared_;
};

}  // namespace iris
