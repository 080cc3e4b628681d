// Program: loading irisc code objects with their metadata, checking arguments and
// launching by the launch contract (see iris/program.hpp).
#include "iris/program.hpp"

#include <cuda.h>

#include <array>
#include <cctype>
#include <climits>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>

#include "backend/cuda/cuda_driver.hpp"
#include "iris/error.hpp"
#include "launch_expr.hpp"
#include "module_impl.hpp"

namespace iris {
namespace {

std::string dims_text(const std::vector<std::string>& dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + dims[i];
  return s + "]";
}

std::string shape_text(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

bool is_symbol(const std::string& d) {
  if (d.empty() || !(std::isalpha(static_cast<unsigned char>(d[0])) || d[0] == '_')) return false;
  for (char c : d) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return d != "world";
}

}  // namespace

Arg Arg::device_buffer(void* ptr, DType dtype, Shape shape) {
  Arg a;
  a.tensor_ = true;
  a.dtype_ = dtype;
  a.ptr_ = ptr;
  a.shape_ = std::move(shape);
  a.on_heap_ = false;
  return a;
}

std::vector<ProgramKernel> parse_program_metadata(const std::string& text) {
  std::vector<ProgramKernel> out;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (j.value("format", "") != "irisc-metadata") throw Error("not irisc metadata");
    if (j.value("version", 0) != 1) throw Error("metadata version " + std::to_string(j.value("version", 0)) + " is not 1");
    for (const auto& k : j.at("kernels")) {
      ProgramKernel pk;
      pk.name = k.at("name").get<std::string>();
      pk.symbol = k.at("symbol").get<std::string>();
      pk.threads = k.at("threads").get<int>();
      pk.grid = k.at("grid").get<std::string>();
      for (const auto& r : k.at("roles")) pk.roles.push_back({r.at("name"), r.at("programs")});
      for (const auto& [n, v] : k.at("constants").items()) pk.constants[n] = v.get<std::int64_t>();
      for (const auto& s : k.at("sizes")) pk.sizes.push_back(s.get<std::string>());
      for (const auto& p : k.at("params")) {
        ProgramParam pp;
        pp.name = p.at("name");
        pp.tensor = p.at("kind") == "tensor";
        pp.dtype = p.at("dtype");
        if (pp.tensor) {
          pp.symmetric = p.at("symmetric").get<bool>();
          for (const auto& d : p.at("dims")) pp.dims.push_back(d.get<std::string>());
        }
        pk.params.push_back(std::move(pp));
      }
      out.push_back(std::move(pk));
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("malformed irisc metadata: ") + e.what());
  }
  return out;
}

Program::Program(Context& ctx, std::span<const std::byte> code, const std::string& name) : ctx_(&ctx) {
  module_ = ctx.load_module(code, name);
  CUdeviceptr dptr = 0;
  size_t bytes = 0;
  const CUresult rc = cuda::driver().cuModuleGetGlobal(&dptr, &bytes, module_.impl_->mod, "iris_metadata");
  if (rc == CUDA_ERROR_NOT_FOUND) {
    throw Error(name + " has no irisc metadata (iris_metadata): was it compiled by irisc? Load plain CUDA modules "
                "with Context::load_module");
  }
  cuda::check(rc, "cuModuleGetGlobal(iris_metadata)");
  std::string json(bytes, '\0');
  IRIS_CU(cuMemcpyDtoH(json.data(), dptr, bytes));
  while (!json.empty() && json.back() == '\0') json.pop_back();
  kernels_ = parse_program_metadata(json);
  for (const ProgramKernel& k : kernels_) functions_.push_back(module_.kernel(k.symbol));
}

const ProgramKernel& Program::kernel(const std::string& name) const {
  for (const ProgramKernel& k : kernels_) {
    if (k.name == name) return k;
  }
  std::string have;
  for (const ProgramKernel& k : kernels_) have += (have.empty() ? "" : ", ") + k.name;
  throw Error("no kernel '" + name + "' in " + module_.name() + " (it has: " + have + ")");
}

unsigned Program::grid_size(const std::string& name, const std::map<std::string, std::int64_t>& sizes) const {
  const ProgramKernel& k = kernel(name);
  std::map<std::string, std::int64_t> vars = sizes;
  vars["sms"] = ctx_->multiprocessors();
  vars["world"] = ctx_->world();
  std::int64_t grid = 0;
  if (k.roles.empty()) {
    grid = eval_launch_expr(k.grid, vars);
  } else {
    for (const ProgramRole& r : k.roles) {
      const std::int64_t n = eval_launch_expr(r.programs, vars);
      if (n < 1) {
        throw Error("kernel '" + name + "': role '" + r.name + "' gets " + std::to_string(n) + " programs on this GPU (" +
                    std::to_string(ctx_->multiprocessors()) + " SMs)");
      }
      grid += n;
    }
  }
  if (grid < 1) grid = 1;
  if (grid > 0x7fffffff) throw Error("kernel '" + name + "': grid of " + std::to_string(grid) + " programs is too large");
  return static_cast<unsigned>(grid);
}

void Program::launch(const std::string& name, std::initializer_list<Arg> args, Stream stream) const {
  const ProgramKernel& k = kernel(name);
  const Kernel& fn = functions_[static_cast<std::size_t>(&k - kernels_.data())];
  const std::string who = "kernel '" + name + "'";
  if (args.size() != k.params.size()) {
    std::string names;
    for (const ProgramParam& p : k.params) names += (names.empty() ? "" : ", ") + p.name;
    throw Error(who + " takes " + std::to_string(k.params.size()) + " argument(s) (" + names + ") but " +
                std::to_string(args.size()) + " were given");
  }
  // Bind size symbols from bare extents, then check every extent.
  std::map<std::string, std::int64_t> sizes;
  std::map<std::string, std::string> bound_by;
  const Arg* a = args.begin();
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const ProgramParam& p = k.params[i];
    const Arg& arg = a[i];
    const std::string prm = "parameter '" + p.name + "' of " + who;
    if (p.tensor != arg.is_tensor()) {
      throw Error(prm + " is a " + (p.tensor ? "tensor" : "scalar") + " but a " + (arg.is_tensor() ? "tensor" : "scalar") +
                  " was passed");
    }
    if (!p.tensor) continue;
    if (dtype_name(arg.dtype()) != p.dtype) {
      throw Error(prm + " is a tensor of " + p.dtype + " but a tensor of " + std::string(dtype_name(arg.dtype())) +
                  " was passed");
    }
    if (p.symmetric && !(arg.on_heap() && ctx_->in_heap(arg.ptr()))) {
      throw Error(prm + " must be a symmetric tensor (allocated on the heap with ctx.empty/zeros/...), but this buffer "
                        "is not on the symmetric heap");
    }
    if (arg.shape().size() != p.dims.size()) {
      throw Error(prm + " has " + std::to_string(p.dims.size()) + " dimension(s) " + dims_text(p.dims) +
                  " but the tensor passed has shape " + shape_text(arg.shape()));
    }
    for (std::size_t d = 0; d < p.dims.size(); ++d) {
      if (!is_symbol(p.dims[d])) continue;
      auto [it, fresh] = sizes.emplace(p.dims[d], arg.shape()[d]);
      if (fresh) bound_by[p.dims[d]] = p.name;
    }
  }
  std::map<std::string, std::int64_t> vars = sizes;
  vars["world"] = ctx_->world();
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const ProgramParam& p = k.params[i];
    if (!p.tensor) continue;
    for (std::size_t d = 0; d < p.dims.size(); ++d) {
      const std::int64_t want = eval_launch_expr(p.dims[d], vars);
      if (a[i].shape()[d] != want) {
        std::string why = is_symbol(p.dims[d]) && bound_by[p.dims[d]] != p.name
                              ? " (" + p.dims[d] + " = " + std::to_string(want) + " from '" + bound_by[p.dims[d]] + "')"
                              : " (" + p.dims[d] + " = " + std::to_string(want) + ")";
        throw Error("parameter '" + p.name + "' of " + who + " has shape " + dims_text(p.dims) + " = " +
                    std::to_string(want) + " in dimension " + std::to_string(d) + why + ", but the tensor passed has " +
                    shape_text(a[i].shape()));
      }
    }
  }

  // Pack: context, parameters, size symbols, sms.
  std::vector<std::array<unsigned char, 8>> storage(k.params.size() + k.sizes.size() + 1);
  std::vector<void*> ptrs;
  std::vector<std::size_t> arg_sizes;
  ptrs.push_back(const_cast<device::Context*>(&ctx_->device_context()));
  arg_sizes.push_back(sizeof(device::Context));
  for (std::size_t i = 0; i < k.params.size(); ++i) {
    const ProgramParam& p = k.params[i];
    const Arg& arg = a[i];
    auto& slot = storage[i];
    std::size_t n = 8;
    if (p.tensor) {
      void* ptr = arg.ptr();
      std::memcpy(slot.data(), &ptr, 8);
    } else {
      const std::string prm = "parameter '" + p.name + "' of " + who;
      const bool want_float = p.dtype == "f32" || p.dtype == "f16" || p.dtype == "bf16";
      if (!want_float && arg.is_float()) throw Error(prm + " is an integer (" + p.dtype + ") but a floating value was passed");
      if (p.dtype == "f32") {
        const float f = static_cast<float>(arg.float_value());
        std::memcpy(slot.data(), &f, n = 4);
      } else if (p.dtype == "f16") {
        const std::uint16_t h = half(static_cast<float>(arg.float_value())).bits;
        std::memcpy(slot.data(), &h, n = 2);
      } else if (p.dtype == "bf16") {
        const std::uint16_t h = bfloat16(static_cast<float>(arg.float_value())).bits;
        std::memcpy(slot.data(), &h, n = 2);
      } else if (p.dtype == "i32" || p.dtype == "u32") {
        const std::int64_t v = arg.int_value();
        const bool fits = p.dtype == "i32" ? (v >= INT32_MIN && v <= INT32_MAX) : (v >= 0 && v <= UINT32_MAX);
        if (!fits) throw Error(prm + " is " + p.dtype + "; " + std::to_string(v) + " does not fit");
        const std::uint32_t u = static_cast<std::uint32_t>(v);
        std::memcpy(slot.data(), &u, n = 4);
      } else if (p.dtype == "bool") {
        const unsigned char b = arg.int_value() != 0;
        std::memcpy(slot.data(), &b, n = 1);
      } else {
        const std::int64_t v = arg.int_value();
        std::memcpy(slot.data(), &v, 8);
      }
    }
    ptrs.push_back(slot.data());
    arg_sizes.push_back(n);
  }
  for (std::size_t s = 0; s < k.sizes.size(); ++s) {
    auto& slot = storage[k.params.size() + s];
    const std::int64_t v = sizes.at(k.sizes[s]);
    std::memcpy(slot.data(), &v, 8);
    ptrs.push_back(slot.data());
    arg_sizes.push_back(8);
  }
  auto& sms_slot = storage.back();
  const std::int64_t sms = ctx_->multiprocessors();
  std::memcpy(sms_slot.data(), &sms, 8);
  ptrs.push_back(sms_slot.data());
  arg_sizes.push_back(8);

  LaunchConfig cfg{grid_size(name, sizes), static_cast<unsigned>(k.threads)};
  cfg.stream = stream;
  ctx_->launch_raw(fn, cfg, ptrs.data(), arg_sizes.data(), ptrs.size());
}

}  // namespace iris
