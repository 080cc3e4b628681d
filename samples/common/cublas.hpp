// cuBLAS, loaded at run time, as the GEMM baseline of the samples and of iris-bench:
// row-major C = A x B with 16-bit operands and f32 accumulation (cublasGemmEx).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "iris/iris.hpp"

namespace iris::samples {

class Cublas {
 public:
  // Null (with `why` set) when the library cannot be loaded: $IRIS_CUBLAS_LIBRARY, else
  // libcublas.so.13 or libcublas.so on the loader's path. The handle works on `stream`.
  static std::unique_ptr<Cublas> load(Stream stream, std::string* why);
  ~Cublas();
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  // c[M, N] = a[M, K] x b, all row-major; b is [K, N], or [N, K] when b_nk. dtype: bf16,
  // f16 or f32 (c has the same type; f32 multiplies in full f32, not TF32). Enqueued on the stream given to load().
  void gemm(DType dtype, const void* a, const void* b, void* c, std::int64_t M, std::int64_t N, std::int64_t K,
            bool b_nk = false);
  // The same with c of type c_dtype: dtype's, or f32 (from bf16 or f16 operands).
  void gemm(DType dtype, DType c_dtype, const void* a, const void* b, void* c, std::int64_t M, std::int64_t N,
            std::int64_t K, bool b_nk = false);

  struct Impl;

 private:
  explicit Cublas(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace iris::samples
