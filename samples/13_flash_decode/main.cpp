// 13_flash_decode: attention of one new token per sequence over a KV cache split over
// the ranks by tokens; every rank gets the whole output (iris::ops::flash_decode).
// The iris version stores each rank's partial outputs into every rank from the
// attention kernel itself (fused); the baseline runs the same attention and combine
// kernels with the parts gathered by NCCL in between (unfused). Checked against a
// double-precision softmax on sampled rows.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "exact.hpp"
#include "ops_sample.hpp"
#include "sample.hpp"

using namespace iris;
using namespace iris::samples;

namespace {

void decode(Context& ctx, const SampleArgs& args) {
  const int W = ctx.world();
  const std::int64_t B = args.get("--batch"), H = args.get("--heads"), HKV = args.get("--kv-heads"), D = args.get("--dim");
  const std::int64_t L = args.get("--tokens") / W;  // this rank's tokens of each sequence
  if (H % HKV != 0 || L < 1) throw Error("--heads must be a multiple of --kv-heads, and --tokens at least the ranks");
  auto q = ctx.randn<bfloat16>({B * H, D}, 51);
  auto k = ctx.randn<bfloat16>({B * L, HKV * D}, 52 + static_cast<std::uint64_t>(ctx.rank()));
  auto v = ctx.randn<bfloat16>({B * L, HKV * D}, 53 + static_cast<std::uint64_t>(ctx.rank()));
  auto out = ctx.zeros<bfloat16>({B * H, D});
  // Every rank decodes the same queries: rank 0's (randn mixes the rank into the seed).
  ctx.barrier();
  const std::vector<bfloat16> q0 = host_copy(ctx, q, 0);
  ctx.barrier();
  q.copy_from_host(q0);
  ctx.barrier();

  // The reference on sampled rows: every rank's keys and values, in f64.
  const std::int64_t checks = std::min<std::int64_t>(args.get("--check"), B * H);
  std::vector<std::vector<bfloat16>> ks, vs;
  for (int r = 0; r < W; ++r) {
    ks.push_back(host_copy(ctx, k, r));
    vs.push_back(host_copy(ctx, v, r));
  }
  const std::vector<bfloat16> qh = q.to_host();
  std::vector<std::int64_t> rows;
  std::vector<std::vector<double>> want;
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  for (std::int64_t c = 0; c < checks; ++c) {
    const std::int64_t row = c * (B * H) / checks, b = row / H, kh = (row % H) / (H / HKV);
    std::vector<double> s;
    for (int r = 0; r < W; ++r) {
      for (std::int64_t t = 0; t < L; ++t) {
        double dot = 0;
        for (std::int64_t j = 0; j < D; ++j) {
          dot += as_double(qh[static_cast<std::size_t>(row * D + j)]) *
                 as_double(ks[static_cast<std::size_t>(r)][static_cast<std::size_t>((b * L + t) * HKV * D + kh * D + j)]);
        }
        s.push_back(dot * scale);
      }
    }
    const double top = *std::max_element(s.begin(), s.end());
    double total = 0;
    for (double x : s) total += std::exp(x - top);
    std::vector<double> o(static_cast<std::size_t>(D), 0.0);
    std::size_t at = 0;
    for (int r = 0; r < W; ++r) {
      for (std::int64_t t = 0; t < L; ++t, ++at) {
        const double p = std::exp(s[at] - top) / total;
        for (std::int64_t j = 0; j < D; ++j) {
          o[static_cast<std::size_t>(j)] +=
              p * as_double(vs[static_cast<std::size_t>(r)][static_cast<std::size_t>((b * L + t) * HKV * D + kh * D + j)]);
        }
      }
    }
    rows.push_back(row);
    want.push_back(std::move(o));
  }

  const int splits = static_cast<int>(args.get("--splits"));
  const ops::DecodeOptions fused{.heads = static_cast<int>(H), .splits = splits, .schedule = ops::Schedule::fused};
  std::vector<Variant> variants;
  std::unique_ptr<Nccl> nccl = baseline_nccl(ctx, args);
  if (nccl) {
    variants.push_back({"baseline",
                        [&] {
                          // `out` is a new tensor after each reset: the operands are taken per call.
                          const ops::detail::Decode a = ops::detail::check_decode(
                              DType::bf16, q.shape(), k.shape(), v.shape(), out.shape(), q.data(), k.data(), v.data(), out.data());
                          ops::detail::flash_decode(ctx, a, fused, [&](const void* from, void* to, std::size_t n, Stream s) {
                            nccl->all_gather(from, to, n, DType::f32, s);
                          });
                        },
                        "unfused, nccl all_gather"});
  }
  if (args.runs("iris")) {
    variants.push_back({"iris", [&] { ops::flash_decode(ctx, q, k, v, out, fused); }, "iris fused"});
    variants.push_back({"iris",
                        [&] {
                          ops::flash_decode(ctx, q, k, v, out,
                                            {.heads = static_cast<int>(H), .splits = splits, .schedule = ops::Schedule::unfused});
                        },
                        "iris unfused"});
  }
  Measure m;
  m.reference = nccl ? "baseline" : "iris";
  m.reset = [&] {
    ctx.barrier();
    out = ctx.zeros<bfloat16>({B * H, D});
    ctx.barrier();
  };
  m.validate = [&](int) {
    const std::vector<bfloat16> got = out.to_host();
    const double tol = 2 * unit_roundoff<bfloat16>() * 8 + 1e-3;
    for (std::size_t c = 0; c < rows.size(); ++c) {
      for (std::int64_t j = 0; j < D; ++j) {
        const double g = as_double(got[static_cast<std::size_t>(rows[c] * D + j)]);
        const double w = want[c][static_cast<std::size_t>(j)];
        if (!(std::fabs(g - w) <= tol * (1 + std::fabs(w)))) {
          throw Error("validation failed: rank " + std::to_string(ctx.rank()) + ": out[" + std::to_string(rows[c]) + ", " +
                      std::to_string(j) + "] = " + std::to_string(g) + ", want " + std::to_string(w));
        }
      }
    }
  };
  // Bytes of keys and values each rank reads per call.
  m.work_per_launch = static_cast<double>(2 * B * L * HKV * D * 2);
  m.unit = "GB/s";
  run_variants(ctx, args, variants, m);
  report(ctx, "  B = " + std::to_string(B) + " sequences, H = " + std::to_string(H) + " query heads over " +
                  std::to_string(HKV) + " key/value heads of D = " + std::to_string(D) + ", " + std::to_string(L * W) +
                  " tokens each (" + std::to_string(L) + " per rank), bf16; rates are the keys' and values' bytes per rank / time");
}

}  // namespace

int main(int argc, char** argv) {
  SampleSpec spec{"13_flash_decode",
                  "attention of one token per sequence over a KV cache split over the ranks; every rank gets the output",
                  0, 1, {}};
  spec.paths = "iris,baseline";
  spec.paths_help = "iris (fused, and unfused with iris's all_gather),\n"
                    "                  baseline (the same kernels, the parts gathered by NCCL)";
  spec.host_paths = "iris";
  spec.int_options = {{"--batch", "sequences", 8, 2},
                      {"--heads", "query heads", 32, 4},
                      {"--kv-heads", "key/value heads", 8, 2},
                      {"--dim", "head dimension (a power of two, 32 to 256)", 128, 64},
                      {"--tokens", "tokens of each sequence, over all ranks", 32768, 300},
                      {"--splits", "parts of each rank's tokens per query row (0: the library's choice)", 0, 0},
                      {"--check", "query rows checked", 16, 4}};
  spec.heap_bytes = [](const SampleArgs& a) {
    const auto b = static_cast<std::size_t>(a.get("--batch")), h = static_cast<std::size_t>(a.get("--heads")),
               hkv = static_cast<std::size_t>(a.get("--kv-heads")), d = static_cast<std::size_t>(a.get("--dim")),
               t = static_cast<std::size_t>(a.get("--tokens"));
    // k and v (all tokens on one rank at most), q and out, and the parts for 8 ranks.
    return 2 * (2 * b * t * hkv * d + 2 * b * h * d) + 4 * 8 * 512 * b * h * (d + 1) + (64u << 20);
  };
  return sample_main(argc, argv, spec, decode);
}
