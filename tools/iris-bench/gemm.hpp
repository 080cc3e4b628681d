// iris-bench gemm: the sm90 GEMM template (hand-written CUDA, and an .iris kernel that
// lowers to it) against cuBLAS on the same fresh random inputs, alternating launch by
// launch in one run, checked against an f64 reference on sampled entries.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace iris::bench {

struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
};

struct GemmBenchOptions {
  std::vector<GemmShape> shapes;            // empty: the standard list (see --help)
  std::vector<std::string> dtypes{"bf16"};  // bf16, f16
  std::vector<std::string> layouts{"kn"};   // kn: B is [K, N]; nk: B is [N, K]
  std::string tile = "auto";                // auto, or BMxBN (128x256, 128x128, 64x256, 64x128)
  std::string iris_file;                    // also time this .iris file's gemm_<dtype>_<layout> kernels
  int programs = 0;                         // grid override (0: persistent default)
  int iters = 20;                           // timed samples per kernel (median reported)
  int warmup = 5;
  int check_samples = 1024;                 // entries compared with the f64 reference
  std::string json_path;
};

int run_gemm(const GemmBenchOptions& options);

}  // namespace iris::bench
