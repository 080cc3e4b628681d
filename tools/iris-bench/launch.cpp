// Launch overhead of Program (see launch.hpp).
#include "launch.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "compiler/contract/launch_contract.hpp"
#include "iris/iris.hpp"
#include "iris/jit.hpp"

namespace iris::bench {
namespace {

namespace contract = irisc::contract;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A tensor of `dtype` with `shape`, on the heap, as a launch argument.
struct AnyTensor {
  std::vector<Tensor<float>> f32;
  std::vector<Tensor<half>> f16;
  std::vector<Tensor<bfloat16>> bf16;
  std::vector<Tensor<std::int32_t>> i32;
  std::vector<Tensor<std::int64_t>> i64;
  std::vector<Tensor<std::uint32_t>> u32;
  std::vector<Tensor<std::uint64_t>> u64;
};

}  // namespace

int run_launch(const LaunchBenchOptions& o) {
  Options opts = Options::from_env();
  if (!o.backend.empty()) opts.backend = o.backend;
  opts.ranks = 1;
  return run(opts, [&](Context& ctx) {
    Program p = jit_program_file(ctx, o.iris_file);
    const contract::Kernel& k = o.kernel.empty() ? p.kernels().at(0) : p.kernel(o.kernel);
    // Arguments: every size symbol = o.size, tensors shaped by their extents, scalars 1.
    std::vector<std::int64_t> sizes(k.sizes.size(), o.size);
    const contract::Bindings b{sizes, ctx.world(), ctx.multiprocessors()};
    AnyTensor keep;
    std::vector<Arg> args;
    std::vector<void*> tensor_ptrs(k.params.size(), nullptr);
    std::vector<Shape> tensor_shapes(k.params.size());
    for (std::size_t i = 0; i < k.params.size(); ++i) {
      const contract::Param& prm = k.params[i];
      if (!prm.tensor) {
        args.emplace_back(std::int64_t{1});
        continue;
      }
      Shape shape;
      for (const contract::Expr& d : prm.dims) {
        std::int64_t v = 0;
        if (contract::eval(d, b, &v) != contract::EvalError::ok || v < 1) throw Error("bad extent for " + prm.name);
        shape.push_back(v);
      }
      tensor_shapes[i] = shape;
      switch (prm.dtype) {
#define IRIS_BENCH_TENSOR(dt, T)                 \
  case contract::DType::dt:                      \
    keep.dt.push_back(ctx.zeros<T>(shape));      \
    args.emplace_back(keep.dt.back());           \
    tensor_ptrs[i] = keep.dt.back().data();      \
    break;
        IRIS_BENCH_TENSOR(f32, float)
        IRIS_BENCH_TENSOR(f16, half)
        IRIS_BENCH_TENSOR(bf16, bfloat16)
        IRIS_BENCH_TENSOR(i32, std::int32_t)
        IRIS_BENCH_TENSOR(i64, std::int64_t)
        IRIS_BENCH_TENSOR(u32, std::uint32_t)
        IRIS_BENCH_TENSOR(u64, std::uint64_t)
#undef IRIS_BENCH_TENSOR
        case contract::DType::boolean: throw Error("bool tensors are not supported here");
      }
    }
    // The same launch packed once, by hand, for launch_raw.
    std::vector<std::array<unsigned char, 8>> storage(k.args.size());
    std::vector<void*> ptrs(k.args.size());
    std::vector<std::size_t> arg_sizes(k.args.size());
    const std::int64_t sms = ctx.multiprocessors();
    for (std::size_t n = 0; n < k.args.size(); ++n) {
      const contract::Arg& a = k.args[n];
      ptrs[n] = storage[n].data();
      arg_sizes[n] = static_cast<std::size_t>(a.bytes);
      switch (a.kind) {
        case contract::ArgKind::context: ptrs[n] = const_cast<device::Context*>(&ctx.device_context()); break;
        case contract::ArgKind::size: std::memcpy(storage[n].data(), &sizes[static_cast<std::size_t>(a.index)], 8); break;
        case contract::ArgKind::sms: std::memcpy(storage[n].data(), &sms, 8); break;
        case contract::ArgKind::tensor_map: {  // encoded here, passed by address (as Program does)
          const auto i = static_cast<std::size_t>(a.index);
          const Shape& s = tensor_shapes[i];
          const contract::DType cd = k.params[i].dtype;
          if ((cd != contract::DType::bf16 && cd != contract::DType::f16) || s.size() != 2) {
            throw Error("bad tensor-map operand " + k.params[i].name);
          }
          const DType dt = cd == contract::DType::bf16 ? DType::bf16 : DType::f16;
          ptrs[n] = const_cast<TensorMap*>(&encode_tensor_map(TensorMapSpec::matrix(
              dt, tensor_ptrs[i], s[0], s[1], s[1], static_cast<std::uint32_t>(a.box_rows),
              static_cast<std::uint32_t>(a.box_cols))));
          break;
        }
        case contract::ArgKind::param: {
          const std::int64_t one = 1;
          if (tensor_ptrs[static_cast<std::size_t>(a.index)]) std::memcpy(storage[n].data(), &tensor_ptrs[static_cast<std::size_t>(a.index)], 8);
          else std::memcpy(storage[n].data(), &one, static_cast<std::size_t>(a.bytes));
          break;
        }
      }
    }
    std::map<std::string, std::int64_t> size_map;
    for (std::size_t s = 0; s < k.sizes.size(); ++s) size_map[k.sizes[s]] = o.size;
    LaunchConfig cfg{p.grid_size(k.name, size_map), static_cast<unsigned>(k.threads)};
    cfg.shared_bytes = static_cast<std::size_t>(k.dynamic_shared_bytes);
    const Kernel fn = p.module().kernel(k.symbol);

    auto program_batch = [&] {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < o.launches; ++i) {
        switch (args.size()) {
          case 3: p.launch(k.name, {args[0], args[1], args[2]}); break;
          default: throw Error("iris-bench launch: kernels of 3 parameters only (like sample 07's)");
        }
      }
      const auto t1 = std::chrono::steady_clock::now();
      ctx.synchronize();
      return std::chrono::duration<double, std::micro>(t1 - t0).count() / o.launches;
    };
    auto raw_batch = [&] {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < o.launches; ++i) ctx.launch_raw(fn, cfg, ptrs.data(), arg_sizes.data(), ptrs.size());
      const auto t1 = std::chrono::steady_clock::now();
      ctx.synchronize();
      return std::chrono::duration<double, std::micro>(t1 - t0).count() / o.launches;
    };
    program_batch();
    raw_batch();
    std::vector<double> prog, raw, diff;
    for (int bt = 0; bt < o.batches; ++bt) {
      const double a = program_batch(), r = raw_batch();
      prog.push_back(a);
      raw.push_back(r);
      diff.push_back(a - r);
    }
    std::printf("iris-bench launch: %s, kernel '%s' (%zu args), %d batches x %d launches, all sizes %lld\n",
                o.iris_file.c_str(), k.name.c_str(), k.args.size(), o.batches, o.launches, o.size);
    std::printf("  Program::launch      %.3f us per launch (median of batches)\n", median(prog));
    std::printf("  Context::launch_raw  %.3f us per launch (same arguments packed beforehand)\n", median(raw));
    std::printf("  added by Program     %.3f us (median of per-batch differences; target <= 0.5 us)\n", median(diff));
    std::printf("{\"bench\":\"launch\",\"program_us\":%.4f,\"raw_us\":%.4f,\"added_us\":%.4f}\n", median(prog), median(raw),
                median(diff));
  });
}

}  // namespace iris::bench
