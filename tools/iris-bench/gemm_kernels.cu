// The sm90 GEMM template (templates/include/iris/device/gemm/sm90) called from
// hand-written CUDA: C = A x B, row-major (the first parameter is the iris device
// context that Context::launch passes; these kernels do not use it), one kernel per operand type, B layout and
// tile shape that iris-bench gemm measures against cuBLAS.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "iris/device/context.hpp"
#include "iris/device/gemm/sm90/gemm.hpp"

using namespace iris::device;

namespace {

// Stores the accumulators as T through the template's staged, coalesced tile store.
template <class G, class T>
struct StoreC {
  T* c;
  int M, N;
  __device__ __forceinline__ void operator()(float (&acc)[G::Acc::kPerThread], int m0, int n0) const {
    G::store_tile(acc, c + static_cast<long long>(m0) * N + n0, N, M - m0, N - n0);
  }
};

template <class G, class T>
__device__ __forceinline__ void run_gemm(const TensorMap& a, const TensorMap& b, T* c, int M, int N, int K) {
  extern __shared__ __align__(1024) unsigned char smem[];
  G::run(a, b, M, N, K, smem, StoreC<G, T>{c, M, N});
}

}  // namespace

#define IRIS_BENCH_GEMM(NAME, T, BM, BN, STAGES, LAYOUT, CLUSTER)                                                  \
  extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1)                                                       \
      __launch_bounds__(sm90::Gemm<T, BM, BN, STAGES, 16, gemm::BLayout::LAYOUT, CLUSTER>::kThreads, 1)            \
          NAME(const __grid_constant__ Context, const __grid_constant__ TensorMap a,                               \
               const __grid_constant__ TensorMap b, T* c, int M, int N, int K) {                                   \
    run_gemm<sm90::Gemm<T, BM, BN, STAGES, 16, gemm::BLayout::LAYOUT, CLUSTER>>(a, b, c, M, N, K);               \
  }

IRIS_BENCH_GEMM(gemm_sm90_bf16_kn_128x256, __nv_bfloat16, 128, 256, 4, kn, 1)
IRIS_BENCH_GEMM(gemm_sm90_bf16_nk_128x256, __nv_bfloat16, 128, 256, 4, nk, 1)
IRIS_BENCH_GEMM(gemm_sm90_f16_kn_128x256, __half, 128, 256, 4, kn, 1)
IRIS_BENCH_GEMM(gemm_sm90_f16_nk_128x256, __half, 128, 256, 4, nk, 1)
IRIS_BENCH_GEMM(gemm_sm90_bf16_kn_128x128, __nv_bfloat16, 128, 128, 6, kn, 1)
IRIS_BENCH_GEMM(gemm_sm90_bf16_nk_128x128, __nv_bfloat16, 128, 128, 6, nk, 1)
IRIS_BENCH_GEMM(gemm_sm90_f16_kn_128x128, __half, 128, 128, 6, kn, 1)
IRIS_BENCH_GEMM(gemm_sm90_f16_nk_128x128, __half, 128, 128, 6, nk, 1)
IRIS_BENCH_GEMM(gemm_sm90_bf16_kn_64x256, __nv_bfloat16, 64, 256, 5, kn, 1)
IRIS_BENCH_GEMM(gemm_sm90_bf16_nk_64x256, __nv_bfloat16, 64, 256, 5, nk, 1)
IRIS_BENCH_GEMM(gemm_sm90_f16_kn_64x256, __half, 64, 256, 5, kn, 1)
IRIS_BENCH_GEMM(gemm_sm90_f16_nk_64x256, __half, 64, 256, 5, nk, 1)
IRIS_BENCH_GEMM(gemm_sm90_bf16_kn_64x128, __nv_bfloat16, 64, 128, 8, kn, 1)
IRIS_BENCH_GEMM(gemm_sm90_bf16_nk_64x128, __nv_bfloat16, 64, 128, 8, nk, 1)
IRIS_BENCH_GEMM(gemm_sm90_f16_kn_64x128, __half, 64, 128, 8, kn, 1)
IRIS_BENCH_GEMM(gemm_sm90_f16_nk_64x128, __half, 64, 128, 8, nk, 1)
IRIS_BENCH_GEMM(gemm_sm90_bf16_kn_128x256c2, __nv_bfloat16, 128, 256, 4, kn, 2)
IRIS_BENCH_GEMM(gemm_sm90_bf16_nk_128x256c2, __nv_bfloat16, 128, 256, 4, nk, 2)
IRIS_BENCH_GEMM(gemm_sm90_f16_kn_128x256c2, __half, 128, 256, 4, kn, 2)
IRIS_BENCH_GEMM(gemm_sm90_f16_nk_128x256c2, __half, 128, 256, 4, nk, 2)
IRIS_BENCH_GEMM(gemm_sm90_bf16_kn_128x128c2, __nv_bfloat16, 128, 128, 6, kn, 2)
IRIS_BENCH_GEMM(gemm_sm90_bf16_nk_128x128c2, __nv_bfloat16, 128, 128, 6, nk, 2)
IRIS_BENCH_GEMM(gemm_sm90_f16_kn_128x128c2, __half, 128, 128, 6, kn, 2)
IRIS_BENCH_GEMM(gemm_sm90_f16_nk_128x128c2, __half, 128, 128, 6, nk, 2)
