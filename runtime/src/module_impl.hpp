// Module::Impl: the loaded CUmodule (one per rank context), shared by Module copies.
#pragma once

#include <cuda.h>

#include <memory>
#include <span>
#include <string>

#include "iris/module.hpp"

namespace iris {

struct Module::Impl {
  CUmodule mod = nullptr;
  std::string name;
  CodeObjectFormat format = CodeObjectFormat::unknown;
  ~Impl();
};

// Loads into the calling thread's current context. Throws iris::Error for bytes that
// are not a code object, and for code not built for this GPU.
std::shared_ptr<Module::Impl> load_module_impl(std::span<const std::byte> code, const std::string& name);

}  // namespace iris
