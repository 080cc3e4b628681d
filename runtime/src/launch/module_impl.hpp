// Module::Impl: the loaded module (one per rank context), shared by Module copies.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "backend/backend.hpp"
#include "iris/module.hpp"

namespace iris {

struct ModuleHandle;

struct Module::Impl {
  ModuleHandle* handle = nullptr;  // the backend's module (see backend/backend.hpp)
  std::string name;
  CodeObjectFormat format = CodeObjectFormat::unknown;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl();
};

// Loads into the calling thread's current context. Throws iris::Error for bytes that
// are not a well-formed code object (checked before any driver call, see
// code_object_check.hpp), and for code not built for this GPU.
std::shared_ptr<Module::Impl> load_module_impl(std::span<const std::byte> code, const std::string& name);
// libiris's own kernels on the active backend (see Backend::runtime_module).
std::shared_ptr<Module::Impl> runtime_module_impl(const backend::RuntimeKernelImages& images, const std::string& name);

}  // namespace iris
