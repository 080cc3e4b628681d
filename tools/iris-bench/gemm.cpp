// iris-bench gemm (see gemm.hpp).
#include "gemm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "cublas.hpp"
#include "iris/device/gemm/shapes.hpp"
#include "iris/embedded.hpp"
#include "iris/iris.hpp"

IRIS_DECLARE_EMBEDDED(gemm_kernels)

namespace iris::bench {
namespace {

namespace dg = iris::device::gemm;

struct Tile {
  int bm, bn, stages, cluster;
  std::string name() const {
    return std::to_string(bm) + "x" + std::to_string(bn) + (cluster > 1 ? "c" + std::to_string(cluster) : "");
  }
};
// The configurations gemm_kernels.cu instantiates; c2: clusters of 2 along M sharing B
// by multicast. The first three, largest first, are the shape-class table `auto` picks
// from (measured on H100: docs/performance.md).
const Tile kTiles[] = {{128, 256, 4, 2}, {128, 128, 6, 2}, {64, 128, 8, 1},
                       {128, 256, 4, 1}, {128, 128, 6, 1}, {64, 256, 5, 1}};
constexpr int kAutoTiles = 3;

const Tile& tile_named(const std::string& name) {
  for (const Tile& t : kTiles) {
    if (name == t.name()) return t;
  }
  throw Error("--tile: no kernel for '" + name + "' (128x256, 128x128, 64x256, 64x128, 128x256c2, 128x128c2)");
}

std::int64_t tiles_of(const GemmShape& s, const Tile& t) { return ((s.m + t.bm - 1) / t.bm) * ((s.n + t.bn - 1) / t.bn); }

// The shape-class table: the largest tile that still gives most SMs a tile.
const Tile& auto_tile(const GemmShape& s, int sms) {
  for (int i = 0; i < kAutoTiles; ++i) {
    if (tiles_of(s, kTiles[i]) >= sms * 3 / 4) return kTiles[i];
  }
  return kTiles[kAutoTiles - 1];
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class T>
float to_float(T v) {
  return static_cast<float>(v);
}

struct Check {
  double rel_error = 0;
  std::int64_t unwritten = 0;  // NaN entries among those sampled
};

// ||out - ref|| / ||ref|| over sampled entries (corners and the last row and column
// included), ref in f64 from the host copies of A and B.
template <class T>
Check check(const std::vector<T>& a, const std::vector<T>& b, const std::vector<T>& c, const GemmShape& s, bool b_nk,
            int samples, std::mt19937_64& rng) {
  std::vector<std::pair<std::int64_t, std::int64_t>> at = {{0, 0}, {s.m - 1, s.n - 1}, {0, s.n - 1}, {s.m - 1, 0}};
  std::uniform_int_distribution<std::int64_t> ri(0, s.m - 1), ci(0, s.n - 1);
  for (int i = 0; i < samples; ++i) at.emplace_back(ri(rng), i % 8 == 0 ? s.n - 1 : ci(rng));
  double num = 0, den = 0;
  Check r;
  for (auto [i, j] : at) {
    double ref = 0;
    for (std::int64_t k = 0; k < s.k; ++k) {
      const double bv = to_float(b_nk ? b[static_cast<std::size_t>(j * s.k + k)] : b[static_cast<std::size_t>(k * s.n + j)]);
      ref += static_cast<double>(to_float(a[static_cast<std::size_t>(i * s.k + k)])) * bv;
    }
    const double got = to_float(c[static_cast<std::size_t>(i * s.n + j)]);
    if (std::isnan(got)) ++r.unwritten;
    num += (got - ref) * (got - ref);
    den += ref * ref;
  }
  r.rel_error = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  return r;
}

struct Row {
  std::string dtype, layout, tile;
  GemmShape shape;
  double ours_ms = 0, cublas_ms = 0, iris_ms = 0;
  double ours_err = 0, cublas_err = 0, iris_err = 0;
  bool has_cublas = false, has_iris = false;
};

double tflops(const GemmShape& s, double ms) { return 2.0 * s.m * s.n * s.k / (ms * 1e-3) / 1e12; }

template <class T>
void bench_one(Context& ctx, const Module& mod, samples::Cublas* cublas, Program* iris_prog, const GemmBenchOptions& o,
               const GemmShape& s, bool b_nk, const std::string& dtype_name, std::vector<Row>& rows, std::uint64_t seed) {
  const DType dt = dtype_of_v<T>;
  const Tile& t = o.tile == "auto" ? auto_tile(s, ctx.multiprocessors()) : tile_named(o.tile);
  const std::string layout = b_nk ? "nk" : "kn";
  const std::string tname = t.name();
  Kernel kern = mod.kernel("gemm_sm90_" + dtype_name + "_" + layout + "_" + tname);

  auto A = ctx.randn<T>(Shape{s.m, s.k}, seed);
  auto B = b_nk ? ctx.randn<T>(Shape{s.n, s.k}, seed + 1) : ctx.randn<T>(Shape{s.k, s.n}, seed + 1);
  auto C = ctx.full<T>(Shape{s.m, s.n}, NAN);
  auto Cref = ctx.full<T>(Shape{s.m, s.n}, NAN);
  auto Ciris = ctx.full<T>(Shape{s.m, s.n}, NAN);

  const dg::Sm90Shape shape{t.bm, t.bn, 64, t.stages, 16, t.cluster};
  const dg::Box2D ba = dg::sm90_box_a(shape), bb = dg::sm90_box_b(shape, b_nk ? dg::BLayout::nk : dg::BLayout::kn);
  const TensorMap& amap = encode_tensor_map(TensorMapSpec::matrix(dt, A.data(), s.m, s.k, s.k, ba.outer, ba.inner));
  const TensorMap& bmap = b_nk ? encode_tensor_map(TensorMapSpec::matrix(dt, B.data(), s.n, s.k, s.k, bb.outer, bb.inner))
                               : encode_tensor_map(TensorMapSpec::matrix(dt, B.data(), s.k, s.n, s.n, bb.outer, bb.inner));
  LaunchConfig cfg;
  // Persistent: a program per SM, or as many whole clusters as the device holds at once
  // (a GPC whose SM count is odd leaves one SM out of clusters of 2); fewer when there
  // are fewer tiles.
  const std::int64_t resident =
      t.cluster > 1 ? std::int64_t{t.cluster} * max_active_clusters(kern, static_cast<unsigned>(t.cluster),
                                                                    static_cast<unsigned>(dg::sm90_threads(shape)),
                                                                    static_cast<std::size_t>(dg::sm90_shared_bytes(shape)))
                    : ctx.multiprocessors();
  if (resident < t.cluster) throw Error("no cluster of " + std::to_string(t.cluster) + " fits on this device");
  std::int64_t programs = std::min<std::int64_t>((tiles_of(s, t) + t.cluster - 1) / t.cluster * t.cluster, resident);
  if (o.programs > 0) programs = o.programs;
  cfg.grid = Dim3(static_cast<unsigned>(programs));
  cfg.block = Dim3(static_cast<unsigned>(dg::sm90_threads(shape)));
  cfg.shared_bytes = static_cast<std::size_t>(dg::sm90_shared_bytes(shape));
  const int M = static_cast<int>(s.m), N = static_cast<int>(s.n), K = static_cast<int>(s.k);
  T* cptr = C.data();
  const auto ours = [&] { ctx.launch(kern, cfg, amap, bmap, cptr, M, N, K); };
  const auto theirs = [&] { cublas->gemm(dt, A.data(), B.data(), Cref.data(), s.m, s.n, s.k, b_nk); };
  const std::string iris_kernel = "gemm_" + dtype_name + "_" + layout;
  const auto iris_run = [&] { iris_prog->launch(iris_kernel, {A, B, Ciris}); };

  Row row{dtype_name, layout, tname, s};
  row.has_cublas = cublas != nullptr;
  row.has_iris = iris_prog != nullptr;
  // Correctness first, on the poisoned outputs.
  ours();
  if (cublas) theirs();
  if (iris_prog) iris_run();
  ctx.synchronize();
  {
    const auto ha = A.to_host(), hb = B.to_host();
    std::mt19937_64 rng(seed);
    const Check c1 = check(ha, hb, C.to_host(), s, b_nk, o.check_samples, rng);
    row.ours_err = c1.rel_error;
    if (c1.unwritten) throw Error("sm90 kernel left " + std::to_string(c1.unwritten) + " sampled entries unwritten");
    if (cublas) row.cublas_err = check(ha, hb, Cref.to_host(), s, b_nk, o.check_samples, rng).rel_error;
    if (iris_prog) row.iris_err = check(ha, hb, Ciris.to_host(), s, b_nk, o.check_samples, rng).rel_error;
  }
  // Launches per timed sample: enough for about 0.5 ms of work, so that event
  // resolution and launch gaps stay small next to it.
  EventTimer timer(ctx.stream());
  timer.start();
  ours();
  const double one = std::max(1e-3, static_cast<double>(timer.stop()));
  const int reps = std::max(1, static_cast<int>(0.5 / one));
  const auto sample = [&](const auto& fn) {
    timer.start();
    for (int r = 0; r < reps; ++r) fn();
    return static_cast<double>(timer.stop()) / reps;
  };
  for (int w = 0; w < o.warmup; ++w) {
    sample(ours);
    if (cublas) sample(theirs);
    if (iris_prog) sample(iris_run);
  }
  std::vector<double> t_ours, t_cublas, t_iris;
  for (int i = 0; i < o.iters; ++i) {  // alternating: clocks and power affect all alike
    t_ours.push_back(sample(ours));
    if (cublas) t_cublas.push_back(sample(theirs));
    if (iris_prog) t_iris.push_back(sample(iris_run));
  }
  row.ours_ms = median(t_ours);
  if (cublas) row.cublas_ms = median(t_cublas);
  if (iris_prog) row.iris_ms = median(t_iris);
  std::printf("%-5s %-2s %5lld x %5lld x %5lld  %-9s %3u  ours %7.1f TFLOP/s (err %.1e)", dtype_name.c_str(),
              layout.c_str(), static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k),
              tname.c_str(), cfg.grid.x, tflops(s, row.ours_ms), row.ours_err);
  if (cublas) {
    std::printf("  cuBLAS %7.1f (err %.1e)  ratio %5.1f%%", tflops(s, row.cublas_ms), row.cublas_err,
                100.0 * row.cublas_ms / row.ours_ms);
  }
  if (iris_prog) {
    std::printf("  .iris %7.1f (err %.1e) = %5.1f%% of CUDA", tflops(s, row.iris_ms), row.iris_err,
                100.0 * row.ours_ms / row.iris_ms);
  }
  std::printf("\n");
  std::fflush(stdout);
  rows.push_back(row);
}

const std::vector<GemmShape>& standard_shapes() {
  static const std::vector<GemmShape> shapes = {
      {8192, 8192, 8192}, {4096, 4096, 4096}, {2048, 2048, 2048}, {128, 8192, 8192},  {256, 8192, 8192},
      {512, 8192, 8192},  {1024, 8192, 8192}, {2048, 8192, 8192}, {8192, 7168, 8192}, {8192, 8192, 7168}};
  return shapes;
}

}  // namespace

int run_gemm(const GemmBenchOptions& o) {
  Options opts = Options::from_env();
  opts.ranks = 1;
  std::vector<Row> rows;
  const int rc = run(opts, [&](Context& ctx) {
    Module mod = ctx.load_module(embedded::gemm_kernels(), "gemm_kernels");
    std::string why;
    std::unique_ptr<samples::Cublas> cublas = samples::Cublas::load(ctx.stream(), &why);
    if (!cublas) std::printf("cuBLAS baseline SKIPPED: %s\n", why.c_str());
    std::unique_ptr<Program> iris_prog;
    if (!o.iris_file.empty()) iris_prog = std::make_unique<Program>(jit_program_file(ctx, o.iris_file));
    std::printf("device: %s, %d SMs; median of %d alternating samples after %d warm-up\n", ctx.device_name().c_str(),
                ctx.multiprocessors(), o.iters, o.warmup);
    std::uint64_t seed = 1234;
    const auto& shapes = o.shapes.empty() ? standard_shapes() : o.shapes;
    for (const std::string& d : o.dtypes) {
      for (const std::string& l : o.layouts) {
        if (l != "kn" && l != "nk") throw Error("--layouts: kn or nk, not '" + l + "'");
        for (const GemmShape& s : shapes) {
          seed += 7;
          if (d == "bf16") bench_one<bfloat16>(ctx, mod, cublas.get(), iris_prog.get(), o, s, l == "nk", d, rows, seed);
          else if (d == "f16") bench_one<half>(ctx, mod, cublas.get(), iris_prog.get(), o, s, l == "nk", d, rows, seed);
          else throw Error("--dtypes: bf16 or f16, not '" + d + "'");
        }
      }
    }
  });
  if (rc != 0) return rc;
  int failures = 0;
  nlohmann::json js = nlohmann::json::array();
  for (const Row& r : rows) {
    const bool ok = r.ours_err <= 1e-2 && (!r.has_iris || r.iris_err <= 1e-2);
    failures += !ok;
    nlohmann::json j = {{"dtype", r.dtype},        {"layout", r.layout},     {"tile", r.tile},
                        {"m", r.shape.m},          {"n", r.shape.n},         {"k", r.shape.k},
                        {"ours_ms", r.ours_ms},    {"ours_tflops", tflops(r.shape, r.ours_ms)},
                        {"ours_rel_error", r.ours_err}};
    if (r.has_cublas) {
      j["cublas_ms"] = r.cublas_ms;
      j["cublas_tflops"] = tflops(r.shape, r.cublas_ms);
      j["cublas_rel_error"] = r.cublas_err;
      j["ratio_vs_cublas"] = r.cublas_ms / r.ours_ms;
    }
    if (r.has_iris) {
      j["iris_ms"] = r.iris_ms;
      j["iris_rel_error"] = r.iris_err;
      j["iris_vs_cuda"] = r.ours_ms / r.iris_ms;
    }
    js.push_back(j);
  }
  if (!o.json_path.empty()) {
    std::ofstream(o.json_path) << js.dump(2) << "\n";
    std::printf("JSON written to %s\n", o.json_path.c_str());
  }
  if (failures) std::printf("FAILED: %d shapes over relative error 1e-2\n", failures);
  return failures ? 1 : 0;
}

}  // namespace iris::bench
