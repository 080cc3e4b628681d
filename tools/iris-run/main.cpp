// iris-run: runs the kernels of any .iris file with generated inputs, on the host
// backend by default (CPU threads; every access checked, deadlocks reported), or on the
// GPUs. A quick way to try a kernel without writing a host program, and how CI runs
// every .iris file of the repository.
//
//   iris-run file.iris [--ranks N] [--backend host|cuda|hip] [--kernel NAME]
//            [--size NAME=V | --size V] [--value NAME=V] [-D NAME=V] [--check-races]
//
// Each kernel runs in a job of its own: tensors get every size symbol's value (1000
// unless --size says otherwise), random contents (floats in [0, 1), integers in
// [0, 64)); scalar parameters are 1 unless --value says otherwise. Exit status: 0 when
// every kernel ran, 1 when a kernel failed (a check, a compile error), 2 bad usage.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/contract/launch_contract.hpp"
#include "compiler/driver/compile.hpp"
#include "iris/iris.hpp"

namespace {

using irisc::contract::DType;

struct Settings {
  std::string file;
  std::string backend;  // --backend, else IRIS_BACKEND, else host
  std::string kernel;
  int ranks = 2;
  std::int64_t default_size = 1000;
  std::map<std::string, std::int64_t> sizes;
  std::map<std::string, double> values;
  std::map<std::string, std::int64_t> defines;
  bool check_races = false;
};

bool parse_pair(const std::string& text, std::string* name, std::string* value) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) return false;
  *name = text.substr(0, eq);
  *value = text.substr(eq + 1);
  return true;
}

std::int64_t to_int(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 0);
  if (end == text.c_str() || *end) throw iris::Error(flag + ": '" + text + "' is not an integer");
  return v;
}

// One tensor argument, kept alive for the launch.
struct Holder {
  std::shared_ptr<void> tensor;
  iris::Arg arg = 0;
};

template <class T>
Holder make_tensor(iris::Context& ctx, const iris::Shape& shape, std::uint64_t seed) {
  auto t = std::make_shared<iris::Tensor<T>>(ctx.empty<T>(shape));
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, iris::half> || std::is_same_v<T, iris::bfloat16>) {
    *t = ctx.rand<T>(shape, seed);
  } else {
    *t = ctx.randint<T>(shape, 0, 64, seed);
  }
  return {t, iris::Arg(*t)};
}

Holder tensor_for(iris::Context& ctx, DType dtype, const iris::Shape& shape, std::uint64_t seed) {
  switch (dtype) {
    case DType::f32: return make_tensor<float>(ctx, shape, seed);
    case DType::f16: return make_tensor<iris::half>(ctx, shape, seed);
    case DType::bf16: return make_tensor<iris::bfloat16>(ctx, shape, seed);
    case DType::i32: return make_tensor<std::int32_t>(ctx, shape, seed);
    case DType::i64: return make_tensor<std::int64_t>(ctx, shape, seed);
    case DType::u32: return make_tensor<std::uint32_t>(ctx, shape, seed);
    case DType::u64: return make_tensor<std::uint64_t>(ctx, shape, seed);
    case DType::boolean: break;
  }
  throw iris::Error("tensors of bool cannot be allocated (libiris has no bool tensors)");
}

iris::Arg scalar_for(DType dtype, double v) {
  switch (dtype) {
    case DType::f32: return static_cast<float>(v);
    case DType::f16: return iris::half(static_cast<float>(v));
    case DType::bf16: return iris::bfloat16(static_cast<float>(v));
    case DType::i32: return static_cast<std::int32_t>(v);
    case DType::u32: return static_cast<std::uint32_t>(v);
    case DType::u64: return static_cast<std::uint64_t>(v);
    case DType::boolean: return v != 0;
    case DType::i64: break;
  }
  return static_cast<std::int64_t>(v);
}

// Runs one kernel in a job of its own; returns the error text ("" when it ran).
std::string run_kernel(const Settings& s, const std::string& source, const std::string& kernel) {
  iris::Options o = iris::Options::from_env();
  o.backend = s.backend;
  o.ranks = s.ranks;
  o.share_gpus = true;
  o.check_races = s.check_races;
  // Generated inputs are small: a 64 MiB heap unless IRIS_HEAP_SIZE says otherwise.
  if (!std::getenv("IRIS_HEAP_SIZE")) o.heap_bytes = std::size_t{64} << 20;
  if (o.wait_timeout > 10) o.wait_timeout = 10;  // a kernel waiting on what nobody signals
  std::string error;
  std::mutex mu;
  int rc = 0;
  // What fails before any rank runs (no GPU for this backend, more ranks than it takes)
  // is this kernel's failure, reported as such, not an uncaught exception.
  try {
    rc = iris::run(o, [&](iris::Context& ctx) {
      try {
        iris::JitOptions jo;
        jo.defines = s.defines;
        iris::Program p = iris::jit_program(ctx, source, s.file, jo);
        const irisc::contract::Kernel* k = nullptr;
        for (const auto& c : p.kernels()) {
          if (c.name == kernel) k = &c;
        }
        if (!k) throw iris::Error("no kernel named '" + kernel + "'");
        std::vector<std::int64_t> sizes;
        for (const std::string& name : k->sizes) {
          const auto it = s.sizes.find(name);
          sizes.push_back(it == s.sizes.end() ? s.default_size : it->second);
        }
        std::vector<Holder> held;
        std::vector<iris::Arg> args;
        std::uint64_t seed = 1;
        for (const irisc::contract::Param& prm : k->params) {
          if (!prm.tensor) {
            const auto it = s.values.find(prm.name);
            args.push_back(scalar_for(prm.dtype, it == s.values.end() ? 1.0 : it->second));
            continue;
          }
          iris::Shape shape;
          for (const irisc::contract::Expr& e : prm.dims) {
            std::int64_t d = 0;
            const irisc::contract::Bindings b{sizes, ctx.world(), ctx.multiprocessors(), 1};
            if (irisc::contract::eval(e, b, &d) != irisc::contract::EvalError::ok || d < 0) {
              throw iris::Error("the extent " + irisc::contract::to_string(e, k->sizes) + " of " + prm.name +
                                " has no value for these sizes (--size)");
            }
            shape.push_back(d);
          }
          held.push_back(tensor_for(ctx, prm.dtype, shape, seed++));
          args.push_back(held.back().arg);
        }
        ctx.barrier();
        p.launch(kernel, std::span<const iris::Arg>(args));
        ctx.synchronize();
        ctx.barrier();
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mu);
        if (error.empty()) error = e.what();
        throw;
      }
    });
  } catch (const std::exception& e) {
    return e.what();
  }
  if (rc != 0 && error.empty()) error = "a rank failed";
  return error;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"iris-run: runs every kernel of a .iris file with generated inputs", "iris-run"};
  app.footer(
      "Tensors hold random values: floats in [0, 1), integers in [0, 64). Exit status: 0 every kernel ran, 1 a\n"
      "kernel failed (a check or a compile error), 2 bad usage.");
  std::vector<std::string> size_args, value_args, define_args;
  app.add_option("file", s.file, "the .iris file")->required();
  app.add_option("--ranks", s.ranks, "ranks, as threads (default 2)")->check(CLI::Range(1, 1 << 20));
  app.add_option("--backend", s.backend,
                 "host (default, or IRIS_BACKEND: CPU threads, every access checked, deadlocks reported), cuda or hip "
                 "(NVIDIA or AMD GPUs; ranks may share one)");
  app.add_option("--kernel", s.kernel, "run only this kernel");
  app.add_option("--size", size_args, "NAME=V: a size symbol's value (default 1000); V alone sets the default")
      ->allow_extra_args(false);
  app.add_option("--value", value_args, "NAME=V: a scalar parameter's value (default 1)")
      ->allow_extra_args(false);
  app.add_option("-D", define_args, "NAME=V: a compile-time parameter (an integer, or a type name)")
      ->allow_extra_args(false);
  app.add_flag("--check-races", s.check_races, "report unordered accesses from two ranks (host backend)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "iris-run: error: %s (see --help)\n", e.what());
    return 2;
  }
  try {
    std::string name, v;
    for (const std::string& t : size_args) {
      if (parse_pair(t, &name, &v)) s.sizes[name] = to_int("--size", v);
      else s.default_size = to_int("--size", t);
    }
    for (const std::string& t : value_args) {
      if (!parse_pair(t, &name, &v)) throw iris::Error("--value: expected NAME=V, got '" + t + "'");
      s.values[name] = std::strtod(v.c_str(), nullptr);
    }
    for (const std::string& t : define_args) {
      std::int64_t x = 0;
      if (!irisc::parse_define(t, &name, &x)) throw iris::Error("-D: expected NAME=INTEGER or NAME=TYPE, got '" + t + "'");
      s.defines[name] = x;
    }
    if (s.backend.empty()) {
      const char* env = std::getenv("IRIS_BACKEND");
      s.backend = env && *env ? env : "host";
    }
    if (s.backend != "host" && s.backend != "cuda" && s.backend != "hip") {
      throw iris::Error("unknown backend '" + s.backend + "' (--backend or IRIS_BACKEND: host, cuda or hip)");
    }
  } catch (const iris::Error& e) {
    std::fprintf(stderr, "iris-run: error: %s\n", e.what());
    return 2;
  }
  std::ifstream in(s.file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "iris-run: error: cannot read %s\n", s.file.c_str());
    return 1;
  }
  std::ostringstream text;
  text << in.rdbuf();
  const std::string source = text.str();
  // The kernels and their parameters, from a compile for the host target: every target
  // has the same ones, and this one needs no GPU toolchain.
  irisc::CompileOptions co;
  co.target = "host";
  co.stop_after = irisc::Stage::code_object;
  co.defines = s.defines;
  const irisc::CompileResult r = irisc::compile(irisc::SourceBuffer(s.file, source), co);
  if (!r.ok) {
    std::fprintf(stderr, "%s", r.rendered_diagnostics.c_str());
    return 1;
  }
  int failed = 0, ran = 0;
  for (const irisc::contract::Kernel& k : irisc::contract::read(r.metadata).kernels) {
    if (!s.kernel.empty() && k.name != s.kernel) continue;
    ++ran;
    const std::string error = run_kernel(s, source, k.name);
    if (error.empty()) {
      std::printf("%s: kernel '%s' ran on %d rank(s) (%s)\n", s.file.c_str(), k.name.c_str(), s.ranks, s.backend.c_str());
    } else {
      ++failed;
      std::printf("%s: kernel '%s' failed on %d rank(s) (%s): %s\n", s.file.c_str(), k.name.c_str(), s.ranks,
                  s.backend.c_str(), error.c_str());
    }
  }
  if (!s.kernel.empty() && ran == 0) {
    std::fprintf(stderr, "iris-run: error: %s has no kernel named '%s'\n", s.file.c_str(), s.kernel.c_str());
    return 2;
  }
  return failed ? 1 : 0;
}
