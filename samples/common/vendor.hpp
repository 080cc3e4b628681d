// The vendor baseline for the GEMM samples: cuBLAS (GemmEx, bf16 in, fp32 accumulate)
// then NCCL all-gather, on the rank's stream. Both libraries are loaded at run time
// (dlopen) so the samples build without them; where one is missing on any rank, every
// rank reports the baseline as skipped.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "iris/iris.hpp"

namespace iris::samples {

class VendorGemmAllGather {
 public:
  // Collective. Returns null (with `why` set, the same on every rank) when cuBLAS or
  // NCCL cannot be loaded on some rank. Libraries: $IRIS_CUBLAS_LIBRARY or
  // libcublas.so.13, and $IRIS_NCCL_LIBRARY or libnccl.so.2, on the loader's path.
  static std::unique_ptr<VendorGemmAllGather> create(Context& ctx, std::string* why);
  ~VendorGemmAllGather();
  VendorGemmAllGather(const VendorGemmAllGather&) = delete;
  VendorGemmAllGather& operator=(const VendorGemmAllGather&) = delete;

  // c_local[M, N] = a[M, K] x b[K, N] (row-major bf16), then every rank's c_local
  // gathered into c_all[world * M, N] in rank order. Enqueued on ctx.stream().
  void run(const bfloat16* a, const bfloat16* b, bfloat16* c_local, bfloat16* c_all, std::int64_t M, std::int64_t N,
           std::int64_t K);

  struct Impl;

 private:
  explicit VendorGemmAllGather(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace iris::samples
