// Loading code objects and looking kernels up (see iris/module.hpp).
#include <cuda.h>

#include <cstring>
#include <string_view>

#include "backend/cuda/cuda_driver.hpp"
#include "iris/error.hpp"
#include "iris/module.hpp"
#include "module_impl.hpp"

namespace iris {

CodeObjectFormat detect_code_object_format(std::span<const std::byte> bytes) {
  auto at = [&](size_t i) { return static_cast<unsigned char>(bytes[i]); };
  if (bytes.size() >= 4 && at(0) == 0x7f && at(1) == 'E' && at(2) == 'L' && at(3) == 'F') return CodeObjectFormat::cubin;
  // nvcc -fatbin output starts with the little-endian fatbin magic 0xBA55ED50.
  if (bytes.size() >= 16 && at(0) == 0x50 && at(1) == 0xED && at(2) == 0x55 && at(3) == 0xBA) return CodeObjectFormat::fatbin;
  // PTX is text: look for its mandatory ".version" directive near the top.
  const size_t n = bytes.size() < 4096 ? bytes.size() : 4096;
  std::string_view head(reinterpret_cast<const char*>(bytes.data()), n);
  if (head.find(".version") != std::string_view::npos && head.find(".target") != std::string_view::npos) {
    for (size_t i = 0; i < n; ++i) {
      if (at(i) == 0 && i + 1 != bytes.size()) return CodeObjectFormat::unknown;  // binary junk
    }
    return CodeObjectFormat::ptx;
  }
  return CodeObjectFormat::unknown;
}

const char* code_object_format_name(CodeObjectFormat f) {
  switch (f) {
    case CodeObjectFormat::cubin: return "cubin";
    case CodeObjectFormat::fatbin: return "fatbin";
    case CodeObjectFormat::ptx: return "PTX";
    case CodeObjectFormat::unknown: return "unknown";
  }
  return "?";
}

Module::Impl::~Impl() {
  if (mod) cuda::driver().cuModuleUnload(mod);
}

std::shared_ptr<Module::Impl> load_module_impl(std::span<const std::byte> code, const std::string& name) {
  const CodeObjectFormat format = detect_code_object_format(code);
  if (format == CodeObjectFormat::unknown) {
    throw Error(name + " is not a code object (expected a cubin, a fatbin or PTX text; it is " +
                std::to_string(code.size()) + " bytes that look like none of them)");
  }
  auto impl = std::make_shared<Module::Impl>();
  impl->name = name;
  impl->format = format;
  // PTX must reach the driver NUL-terminated; binaries are passed as they are.
  std::string ptx;
  const void* image = code.data();
  if (format == CodeObjectFormat::ptx) {
    ptx.assign(reinterpret_cast<const char*>(code.data()), code.size());
    image = ptx.c_str();
  }
  CUresult rc = cuda::driver().cuModuleLoadData(&impl->mod, image);
  if (rc == CUDA_ERROR_NO_BINARY_FOR_GPU || rc == CUDA_ERROR_INVALID_PTX || rc == CUDA_ERROR_UNSUPPORTED_PTX_VERSION) {
    throw Error("cannot load " + name + " (" + code_object_format_name(format) + "): " + cuda::describe(rc) +
                "; was it built for this GPU's architecture?");
  }
  cuda::check(rc, "cuModuleLoadData(" + name + ")");
  return impl;
}

const std::string& Module::name() const {
  static const std::string none = "<no module>";
  return impl_ ? impl_->name : none;
}

CodeObjectFormat Module::format() const { return impl_ ? impl_->format : CodeObjectFormat::unknown; }

std::vector<std::string> Module::kernel_names() const {
  std::vector<std::string> names;
  const auto& cu = cuda::driver();
  if (!impl_ || !cu.cuModuleGetFunctionCount || !cu.cuModuleEnumerateFunctions || !cu.cuFuncGetName) return names;
  unsigned count = 0;
  if (cu.cuModuleGetFunctionCount(&count, impl_->mod) != CUDA_SUCCESS) return names;
  std::vector<CUfunction> fns(count);
  if (count && cu.cuModuleEnumerateFunctions(fns.data(), count, impl_->mod) != CUDA_SUCCESS) return names;
  for (CUfunction f : fns) {
    const char* n = nullptr;
    if (cu.cuFuncGetName(&n, f) == CUDA_SUCCESS && n) names.emplace_back(n);
  }
  return names;
}

Kernel Module::kernel(const std::string& name) const {
  if (!impl_) throw Error("kernel lookup of '" + name + "' in an empty Module");
  const auto& cu = cuda::driver();
  CUfunction fn = nullptr;
  CUresult rc = cu.cuModuleGetFunction(&fn, impl_->mod, name.c_str());
  if (rc == CUDA_ERROR_NOT_FOUND) {
    std::string have;
    for (const auto& n : kernel_names()) have += (have.empty() ? "" : ", ") + n;
    throw Error("kernel '" + name + "' not found in " + impl_->name +
                (have.empty() ? std::string() : "; it has: " + have) +
                " (declare kernels extern \"C\" to look them up by their plain name)");
  }
  cuda::check(rc, "cuModuleGetFunction(" + name + ")");
  Kernel k;
  k.fn_ = fn;
  k.owner_ = impl_;
  k.name_ = name;
  if (cu.cuFuncGetParamInfo) {
    for (size_t i = 0;; ++i) {
      size_t offset = 0, size = 0;
      if (cu.cuFuncGetParamInfo(fn, i, &offset, &size) != CUDA_SUCCESS) break;
      k.param_sizes_.push_back(size);
    }
  }
  return k;
}

}  // namespace iris
