// cuBLAS through dlopen (see cublas.hpp). The few entry points used are declared here
// with the C ABI cublas_api.h gives them; handles and streams are opaque pointers.
#include "cublas.hpp"

#include "dynlib.hpp"

namespace iris::samples {
namespace {

// cublas_api.h / library_types.h values.
constexpr int kCublasOpN = 0, kCublasOpT = 1;
constexpr int kCudaR32F = 0, kCudaR16F = 2, kCudaR16BF = 14;
constexpr int kCublasCompute32F = 68;
constexpr int kCublasGemmDefault = -1;

using CublasCreate = int (*)(void** handle);
using CublasDestroy = int (*)(void* handle);
using CublasSetStream = int (*)(void* handle, void* stream);
using CublasGemmEx = int (*)(void* handle, int transa, int transb, int m, int n, int k, const void* alpha,
                             const void* A, int Atype, int lda, const void* B, int Btype, int ldb, const void* beta,
                             void* C, int Ctype, int ldc, int compute, int algo);

}  // namespace

struct Cublas::Impl {
  void* lib = nullptr;
  CublasCreate create = nullptr;
  CublasDestroy destroy = nullptr;
  CublasSetStream set_stream = nullptr;
  CublasGemmEx gemm = nullptr;
  void* handle = nullptr;
};

std::unique_ptr<Cublas> Cublas::load(Stream stream, std::string* why) {
  why->clear();
  auto impl = std::make_unique<Impl>();
  impl->lib = open_first("IRIS_CUBLAS_LIBRARY", {"libcublas.so.13", "libcublas.so"}, why);
  if (!impl->lib) return nullptr;
  impl->create = sym<CublasCreate>(impl->lib, "cublasCreate_v2", why);
  impl->destroy = sym<CublasDestroy>(impl->lib, "cublasDestroy_v2", why);
  impl->set_stream = sym<CublasSetStream>(impl->lib, "cublasSetStream_v2", why);
  impl->gemm = sym<CublasGemmEx>(impl->lib, "cublasGemmEx", why);
  if (!why->empty()) return nullptr;
  if (int rc = impl->create(&impl->handle); rc != 0) throw Error("cublasCreate failed: status " + std::to_string(rc));
  if (int rc = impl->set_stream(impl->handle, stream); rc != 0) {
    throw Error("cublasSetStream failed: status " + std::to_string(rc));
  }
  return std::unique_ptr<Cublas>(new Cublas(std::move(impl)));
}

Cublas::Cublas(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Cublas::~Cublas() {
  // The library stays loaded: its own teardown runs at exit.
  if (impl_->handle) impl_->destroy(impl_->handle);
}

void Cublas::gemm(DType dtype, const void* a, const void* b, void* c, std::int64_t M, std::int64_t N, std::int64_t K,
                  bool b_nk) {
  gemm(dtype, dtype, a, b, c, M, N, K, b_nk);
}

void Cublas::gemm(DType dtype, DType c_dtype, const void* a, const void* b, void* c, std::int64_t M, std::int64_t N,
                  std::int64_t K, bool b_nk) {
  if (dtype != DType::bf16 && dtype != DType::f16 && dtype != DType::f32) {
    throw Error("Cublas::gemm: operands must be bf16, f16 or f32");
  }
  if (c_dtype != dtype && c_dtype != DType::f32) throw Error("Cublas::gemm: C must be of the operands' type or f32");
  const auto cuda_type = [](DType t) { return t == DType::bf16 ? kCudaR16BF : t == DType::f16 ? kCudaR16F : kCudaR32F; };
  const int type = cuda_type(dtype), c_type = cuda_type(c_dtype);
  // Row-major C = A B is column-major C^T = B^T A^T: B's storage first. Row-major
  // [K, N] is column-major B^T (op N, ld N); row-major [N, K] is column-major B (op T,
  // ld K).
  const float alpha = 1.f, beta = 0.f;
  const int rc = impl_->gemm(impl_->handle, b_nk ? kCublasOpT : kCublasOpN, kCublasOpN, static_cast<int>(N),
                             static_cast<int>(M), static_cast<int>(K), &alpha, b, type,
                             static_cast<int>(b_nk ? K : N), a, type, static_cast<int>(K), &beta, c, c_type,
                             static_cast<int>(N), kCublasCompute32F, kCublasGemmDefault);
  if (rc != 0) throw Error("cublasGemmEx failed: status " + std::to_string(rc));
}

}  // namespace iris::samples
