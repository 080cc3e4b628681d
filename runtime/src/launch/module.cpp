// Loading code objects and looking kernels up (see iris/module.hpp).
#include <cstring>
#include <string_view>

#include "backend/backend.hpp"
#include "launch/code_object_check.hpp"
#include "compiler/contract/host_code.hpp"
#include "iris/error.hpp"
#include "iris/module.hpp"
#include "launch/module_impl.hpp"

namespace iris {

CodeObjectFormat detect_code_object_format(std::span<const std::byte> bytes) {
  auto at = [&](size_t i) { return static_cast<unsigned char>(bytes[i]); };
  if (bytes.size() >= 4 && at(0) == 0x7f && at(1) == 'E' && at(2) == 'L' && at(3) == 'F') {
    // e_machine: a little-endian u16 at byte 18 (ELF64 and ELF32 alike). An ELF too
    // short to say stays a cubin, which check_code_object reports as truncated.
    constexpr unsigned kEmAmdgpu = 224;
    if (bytes.size() >= 20 && (at(18) | at(19) << 8) == kEmAmdgpu) return CodeObjectFormat::amdgpu;
    return CodeObjectFormat::cubin;
  }
  // nvcc -fatbin output starts with the little-endian fatbin magic 0xBA55ED50.
  if (bytes.size() >= 16 && at(0) == 0x50 && at(1) == 0xED && at(2) == 0x55 && at(3) == 0xBA) return CodeObjectFormat::fatbin;
  if (irisc::is_host_code(bytes)) return CodeObjectFormat::host;
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
    case CodeObjectFormat::host: return "host code";
    case CodeObjectFormat::amdgpu: return "AMDGPU code object";
    case CodeObjectFormat::unknown: return "unknown";
  }
  return "?";
}

Module::Impl::~Impl() {
  if (handle) backend::active().module_unload(handle);
}

std::shared_ptr<Module::Impl> load_module_impl(std::span<const std::byte> code, const std::string& name) {
  // Checked before the backend is touched: the driver reads wherever a corrupt image's
  // offsets point, and a bad image must be an error even on a machine without a GPU.
  const CodeObjectFormat format = detect_code_object_format(code);
  check_code_object(code, format, name);
  auto impl = std::make_shared<Module::Impl>();
  impl->name = name;
  impl->format = format;
  const std::string_view backend_name = backend::active().name();
  const bool host_backend = backend_name == "host";
  if (format == CodeObjectFormat::host && !host_backend) {
    throw Error("cannot load " + name + ": it is host code (irisc --target=host), which runs on the host backend only "
                "(IRIS_BACKEND=host); compile for this GPU instead (the JIT picks its target)");
  }
  // NVIDIA code on an AMD GPU and the reverse: say both, before the driver does worse.
  if (format == CodeObjectFormat::amdgpu && backend_name != "hip") {
    throw Error("cannot load " + name + ": it is an AMDGPU code object (AMD GPU code), which runs on the hip backend "
                "only (IRIS_BACKEND=hip), and this job runs on the " + std::string(backend_name) +
                " backend; compile for this backend's target instead (the JIT picks it)");
  }
  const bool nvidia_code =
      format == CodeObjectFormat::cubin || format == CodeObjectFormat::fatbin || format == CodeObjectFormat::ptx;
  if (nvidia_code && backend_name == "hip") {
    const std::string what = format == CodeObjectFormat::ptx ? "PTX" : std::string("a ") + code_object_format_name(format);
    throw Error("cannot load " + name + ": it is " + what +
                " (NVIDIA GPU code), which runs on the cuda backend only, and this job runs on the hip backend (AMD "
                "GPUs); compile for this GPU's gfx target instead (the JIT picks it)");
  }
  // PTX and host code must reach the backend NUL-terminated; binaries are passed as
  // they are.
  std::string ptx;
  const void* image = code.data();
  if (format == CodeObjectFormat::ptx || format == CodeObjectFormat::host) {
    ptx.assign(reinterpret_cast<const char*>(code.data()), code.size());
    image = ptx.c_str();
  }
  try {
    impl->handle = backend::active().module_load(image, name);
  } catch (const backend::IncompatibleCodeError& e) {
    throw Error("cannot load " + name + " (" + code_object_format_name(format) + "): " + e.what() +
                (host_backend ? "" : "; was it built for this GPU's architecture?"));
  }
  return impl;
}

std::shared_ptr<Module::Impl> runtime_module_impl(const backend::RuntimeKernelImages& images, const std::string& name) {
  auto impl = std::make_shared<Module::Impl>();
  impl->name = name;
  impl->format = backend::active().name() == std::string_view("hip") ? CodeObjectFormat::amdgpu : CodeObjectFormat::fatbin;
  impl->handle = backend::active().runtime_module(images, name);
  return impl;
}

const std::string& Module::name() const {
  static const std::string none = "<no module>";
  return impl_ ? impl_->name : none;
}

CodeObjectFormat Module::format() const { return impl_ ? impl_->format : CodeObjectFormat::unknown; }

std::vector<std::string> Module::kernel_names() const {
  if (!impl_) return {};
  return backend::active().module_function_names(impl_->handle);
}

int max_active_clusters(const Kernel& kernel, unsigned cluster, unsigned threads, std::size_t shared_bytes) {
  if (!kernel) throw Error("max_active_clusters of an empty Kernel");
  auto& bk = backend::active();
  if (shared_bytes > (48u << 10)) {
    bk.set_max_dynamic_shared_bytes(kernel.handle(), shared_bytes);
    if (kernel.shared_allowed_ && shared_bytes > kernel.shared_allowed_->load(std::memory_order_relaxed)) {
      kernel.shared_allowed_->store(shared_bytes, std::memory_order_relaxed);
    }
  }
  return bk.max_active_clusters(kernel.handle(), static_cast<int>(cluster), static_cast<int>(threads), shared_bytes);
}

Kernel Module::kernel(const std::string& name) const {
  if (!impl_) throw Error("kernel lookup of '" + name + "' in an empty Module");
  auto& bk = backend::active();
  FunctionHandle* fn = bk.module_function(impl_->handle, name);
  if (!fn) {
    std::string have;
    for (const auto& n : kernel_names()) have += (have.empty() ? "" : ", ") + n;
    throw Error("kernel '" + name + "' not found in " + impl_->name +
                (have.empty() ? std::string() : "; it has: " + have) +
                " (declare kernels extern \"C\" to look them up by their plain name)");
  }
  Kernel k;
  k.fn_ = fn;
  k.owner_ = impl_;
  k.name_ = name;
  k.param_sizes_ = bk.function_param_sizes(fn);
  k.shared_allowed_ = std::make_shared<std::atomic<std::size_t>>(48u << 10);
  return k;
}

}  // namespace iris
