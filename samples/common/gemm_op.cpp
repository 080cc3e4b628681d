// One GEMM op of iris/ops.hpp with its check and baseline (see gemm_op.hpp).
#include "gemm_op.hpp"

#include <cmath>
#include <optional>
#include <random>
#include <type_traits>
#include <vector>

#include "cublas.hpp"
#include "exact.hpp"
#include "iris/iris.hpp"
#include "nccl.hpp"

namespace iris::samples {

const char* name(LibraryOp op) {
  switch (op) {
    case LibraryOp::matmul_all_reduce: return "matmul_all_reduce";
    case LibraryOp::matmul_reduce_scatter: return "matmul_reduce_scatter";
    case LibraryOp::matmul_all_scatter: return "matmul_all_scatter";
    case LibraryOp::all_gather_matmul: return "all_gather_matmul";
    case LibraryOp::all_reduce: return "all_reduce";
  }
  return "?";
}

struct GemmOp::Impl {
  virtual ~Impl() = default;
  virtual Shape c_shape() const = 0;
  virtual double flops() const = 0;
  virtual void fresh_inputs(std::uint64_t seed) = 0;
  virtual void sample_entries(int count, std::uint64_t seed) = 0;
  virtual std::size_t wrong(std::string* first) const = 0;
  virtual void zero_c() = 0;
  virtual void run_iris(const ops::Options& o) = 0;
  virtual bool load_baseline(std::string* why) = 0;
  virtual void run_baseline() = 0;
  virtual void run_gemm_alone() = 0;
  virtual const char* baseline_label() const = 0;
};

namespace {

// A and B of type T, C of type CT (T, or f32 for matmul_all_reduce's atomic form).
template <class T, class CT = T>
class Typed final : public GemmOp::Impl {
 public:
  Typed(Context& ctx, LibraryOp op, GemmShape s, std::uint64_t seed) : ctx_(ctx), op_(op), s_(s) {
    const std::int64_t W = ctx.world();
    if (op == LibraryOp::all_reduce) throw Error("GemmOp: all_reduce is not a GEMM op");
    if (!std::is_same_v<T, CT> && op != LibraryOp::matmul_all_reduce) {
      throw Error(std::string(name(op)) + ": C is of A's type (an f32 C is matmul_all_reduce's alone)");
    }
    if (op == LibraryOp::matmul_reduce_scatter && s.m % W != 0) {
      throw Error("matmul_reduce_scatter: M = " + std::to_string(s.m) + " is not a multiple of the " +
                  std::to_string(W) + " ranks");
    }
    if (s.m > INT32_MAX || s.n > INT32_MAX || s.k > INT32_MAX) throw Error("M, N, K: at most 2^31 - 1 (cuBLAS)");
    c_shape_ = {s.m, s.n};
    if (op == LibraryOp::matmul_reduce_scatter) c_shape_ = {s.m / W, s.n};
    if (op == LibraryOp::matmul_all_scatter) c_shape_ = {s.m, W * s.n};
    if (op == LibraryOp::all_gather_matmul) c_shape_ = {W * s.m, s.n};
    fresh_inputs(seed);
    c_ = ctx.zeros<CT>(c_shape_);
    ctx.barrier();
  }

  Shape c_shape() const override { return c_shape_; }
  double flops() const override {
    const double rows = static_cast<double>(op_ == LibraryOp::all_gather_matmul ? ctx_.world() * s_.m : s_.m);
    return 2.0 * rows * static_cast<double>(s_.n) * static_cast<double>(s_.k);
  }

  void fresh_inputs(std::uint64_t seed) override {
    a_ = ctx_.randn<T>({s_.m, s_.k}, seed);
    b_ = ctx_.randn<T>({s_.k, s_.n}, seed + 1);
    if (op_ == LibraryOp::matmul_all_scatter) ctx_.broadcast(*a_, 0);  // one A, every rank its own B
    if (op_ == LibraryOp::all_gather_matmul) ctx_.broadcast(*b_, 0);   // every rank its own A, one B
    ctx_.barrier();
  }

  void sample_entries(int count, std::uint64_t seed) override {
    const int W = ctx_.world();
    const std::int64_t M = s_.m, N = s_.n, K = s_.k;
    std::vector<std::vector<T>> as, bs;
    for (int r = 0; r < W; ++r) {
      as.push_back(host_copy(ctx_, *a_, r));
      bs.push_back(host_copy(ctx_, *b_, r));
    }
    const auto dot = [&](int ra, std::int64_t i, int rb, std::int64_t j, double* magnitude) {
      double sum = 0, mag = 0;
      for (std::int64_t k = 0; k < K; ++k) {
        const double p = as_double(as[static_cast<std::size_t>(ra)][static_cast<std::size_t>(i * K + k)]) *
                         as_double(bs[static_cast<std::size_t>(rb)][static_cast<std::size_t>(k * N + j)]);
        sum += p;
        mag += std::fabs(p);
      }
      *magnitude = mag;
      return sum;
    };
    entries_.clear();
    std::mt19937_64 rng(seed + static_cast<unsigned>(ctx_.rank()));
    const std::int64_t rows = c_shape_[0], cols = c_shape_[1];
    for (int e = 0; e < count; ++e) {
      const auto i = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(rows));
      const auto j = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(cols));
      // Bounds: the f32 accumulation over K (K * 2^-23 of the summed magnitudes), and a
      // rounding to T of every partial and of every partial sum (at most world of them
      // for a sum over ranks: an atomic or ring sum rounds after each addition).
      const double u = unit_roundoff<CT>();
      double want = 0, rounded = 0, products = 0, m = 0;
      switch (op_) {
        case LibraryOp::matmul_all_reduce:
        case LibraryOp::matmul_reduce_scatter: {
          const std::int64_t row = op_ == LibraryOp::matmul_all_reduce ? i : ctx_.rank() * rows + i;
          for (int r = 0; r < W; ++r) {
            const double p = dot(r, row, r, j, &m);
            want += p;
            rounded += std::fabs(p);
            products += m;
          }
          rounded *= static_cast<double>(W);
          break;
        }
        case LibraryOp::matmul_all_scatter:
          want = dot(0, i, static_cast<int>(j / N), j % N, &products);
          rounded = std::fabs(want);
          break;
        case LibraryOp::all_gather_matmul:
          want = dot(static_cast<int>(i / M), i % M, 0, j, &products);
          rounded = std::fabs(want);
          break;
        case LibraryOp::all_reduce: break;
      }
      const double accumulation = static_cast<double>(K) * std::ldexp(products, -23);
      entries_.push_back({i, j, want, 2 * u * (rounded + std::fabs(want)) + accumulation + 1e-3});
    }
    ctx_.barrier();
  }

  std::size_t wrong(std::string* first) const override {
    if (!gathered_rows_) return count_wrong(c_.to_host(), c_.shape().back(), entries_, first);
    // The baseline's all-scatter gathers row blocks [world * M, N]: entry (i, q * N + j)
    // of C is row q * M + i there.
    std::vector<Entry> moved;
    for (const Entry& e : entries_) moved.push_back({(e.j / s_.n) * s_.m + e.i, e.j % s_.n, e.want, e.bound});
    return count_wrong(scratch_->to_host(), scratch_->shape().back(), moved, first);
  }

  void zero_c() override {
    ctx_.barrier();
    c_ = ctx_.zeros<CT>(c_shape_);
    ctx_.barrier();
  }

  void run_iris(const ops::Options& o) override {
    gathered_rows_ = false;
    switch (op_) {
      case LibraryOp::matmul_all_reduce: ops::matmul_all_reduce(ctx_, *a_, *b_, c_, o); break;
      case LibraryOp::all_reduce: break;
      default:
        if constexpr (std::is_same_v<T, CT>) {
          if (op_ == LibraryOp::matmul_reduce_scatter) ops::matmul_reduce_scatter(ctx_, *a_, *b_, c_, o);
          if (op_ == LibraryOp::matmul_all_scatter) ops::matmul_all_scatter(ctx_, *a_, *b_, c_, o);
          if (op_ == LibraryOp::all_gather_matmul) ops::all_gather_matmul(ctx_, *a_, *b_, c_, o);
        }
        break;
    }
  }

  bool load_baseline(std::string* why) override {
    const int W = ctx_.world();
    std::string reason;
    nccl_ = Nccl::create(ctx_, &reason);
    if (nccl_) cublas_ = Cublas::load(ctx_.stream(), &reason);
    const std::vector<char> ok = ctx_.all_gather(static_cast<char>(cublas_ != nullptr));
    for (int r = 0; r < W && reason.empty(); ++r) {
      if (!ok[static_cast<std::size_t>(r)]) reason = "rank " + std::to_string(r) + " could not load cuBLAS";
    }
    if (!reason.empty()) {
      nccl_.reset();
      cublas_.reset();
      if (why) *why = reason;
      return false;
    }
    const std::int64_t M = s_.m, N = s_.n, K = s_.k;
    if (op_ == LibraryOp::matmul_all_scatter) scratch_ = ctx_.empty<T>({W * M, N});
    else if (op_ == LibraryOp::all_gather_matmul) scratch_ = ctx_.empty<T>({W * M, K});
    else if (op_ == LibraryOp::matmul_all_reduce) partial_ = ctx_.empty<CT>({M, N});
    else scratch_ = ctx_.empty<T>({M, N});
    return true;
  }

  // The baseline: cuBLAS's GEMM (run_gemm_alone) and NCCL's collective, in the op's
  // order.
  void run_baseline() override {
    const std::int64_t W = ctx_.world(), M = s_.m, N = s_.n, K = s_.k;
    const DType dt = dtype_of_v<T>;
    const Stream st = ctx_.stream();
    gathered_rows_ = false;
    switch (op_) {
      case LibraryOp::matmul_all_reduce:
        // The partials in C's type (cuBLAS writes f32 from bf16 or f16), summed in it.
        run_gemm_alone();
        nccl_->all_reduce(partial_->data(), c_.data(), static_cast<std::size_t>(M * N), dtype_of_v<CT>,
                          ccl::ReduceOp::sum, st);
        break;
      case LibraryOp::matmul_reduce_scatter:
        run_gemm_alone();
        nccl_->reduce_scatter(scratch_->data(), c_.data(), static_cast<std::size_t>(M / W * N), dt, ccl::ReduceOp::sum,
                              st);
        break;
      case LibraryOp::matmul_all_scatter:
        // C's first M rows hold this rank's block; then gathered by rows.
        run_gemm_alone();
        nccl_->all_gather(c_.data(), scratch_->data(), static_cast<std::size_t>(M * N), dt, st);
        gathered_rows_ = true;
        break;
      case LibraryOp::all_gather_matmul:
        nccl_->all_gather(a_->data(), scratch_->data(), static_cast<std::size_t>(M * K), dt, st);
        run_gemm_alone();
        break;
      case LibraryOp::all_reduce: break;
    }
  }

  // The baseline's cuBLAS GEMM without its collective (all_gather_matmul: over the
  // gathered rows as they stand): no schedule of the op can take less.
  void run_gemm_alone() override {
    const std::int64_t W = ctx_.world(), M = s_.m, N = s_.n, K = s_.k;
    const DType dt = dtype_of_v<T>;
    switch (op_) {
      case LibraryOp::matmul_all_reduce: cublas_->gemm(dt, dtype_of_v<CT>, a_->data(), b_->data(), partial_->data(), M, N, K); break;
      case LibraryOp::matmul_reduce_scatter: cublas_->gemm(dt, a_->data(), b_->data(), scratch_->data(), M, N, K); break;
      case LibraryOp::matmul_all_scatter: cublas_->gemm(dt, a_->data(), b_->data(), c_.data(), M, N, K); break;
      case LibraryOp::all_gather_matmul: cublas_->gemm(dt, scratch_->data(), b_->data(), c_.data(), W * M, N, K); break;
      case LibraryOp::all_reduce: break;
    }
  }

  const char* baseline_label() const override {
    return op_ == LibraryOp::all_gather_matmul ? "nccl+cublas" : "cublas+nccl";
  }

 private:
  Context& ctx_;
  LibraryOp op_;
  GemmShape s_;
  Shape c_shape_;
  std::optional<Tensor<T>> a_, b_, scratch_;
  std::optional<Tensor<CT>> partial_;  // matmul_all_reduce's baseline: A B in C's type
  Tensor<CT> c_;
  std::vector<Entry> entries_;
  std::unique_ptr<Nccl> nccl_;
  std::unique_ptr<Cublas> cublas_;
  bool gathered_rows_ = false;
};

}  // namespace

GemmOp::GemmOp(Context& ctx, LibraryOp op, DType dtype, GemmShape shape, std::uint64_t seed, std::optional<DType> c_dtype) {
  if (c_dtype && *c_dtype != dtype) {
    if (*c_dtype != DType::f32 || dtype == DType::f32) {
      throw Error(std::string(name(op)) + ": C of " + std::string(dtype_name(*c_dtype)) + " with A and B of " +
                  std::string(dtype_name(dtype)) + ": C is of their type, or f32 with bf16 or f16 operands");
    }
    if (dtype == DType::bf16) impl_ = std::make_unique<Typed<bfloat16, float>>(ctx, op, shape, seed);
    else impl_ = std::make_unique<Typed<half, float>>(ctx, op, shape, seed);
    return;
  }
  switch (dtype) {
    case DType::bf16: impl_ = std::make_unique<Typed<bfloat16>>(ctx, op, shape, seed); break;
    case DType::f16: impl_ = std::make_unique<Typed<half>>(ctx, op, shape, seed); break;
    case DType::f32: impl_ = std::make_unique<Typed<float>>(ctx, op, shape, seed); break;
    default: throw Error(std::string(name(op)) + " of " + std::string(dtype_name(dtype)) + ": bf16, f16 or f32 expected");
  }
}
GemmOp::~GemmOp() = default;
Shape GemmOp::c_shape() const { return impl_->c_shape(); }
double GemmOp::flops() const { return impl_->flops(); }
void GemmOp::fresh_inputs(std::uint64_t seed) { impl_->fresh_inputs(seed); }
void GemmOp::sample_entries(int count, std::uint64_t seed) { impl_->sample_entries(count, seed); }
std::size_t GemmOp::wrong(std::string* first) const { return impl_->wrong(first); }
void GemmOp::zero_c() { impl_->zero_c(); }
void GemmOp::run_iris(const ops::Options& o) { impl_->run_iris(o); }
bool GemmOp::load_baseline(std::string* why) { return impl_->load_baseline(why); }
void GemmOp::run_baseline() { impl_->run_baseline(); }
void GemmOp::run_gemm_alone() { impl_->run_gemm_alone(); }
const char* GemmOp::baseline_label() const { return impl_->baseline_label(); }

}  // namespace iris::samples
