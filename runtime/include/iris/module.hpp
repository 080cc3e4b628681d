// Code objects (cubin, fatbin, PTX; AMDGPU ELF on the hip backend) loaded into a rank's
// GPU context, and the kernels in them. Kernels launch through Context::launch, which binds the device context.
#pragma once

#include <cstddef>
#include <cstdint>
#include <atomic>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace iris {

// Opaque handles of the device backend's objects. Each is the driver's own handle
// (on CUDA, a Stream is a CUstream and a FunctionHandle* a CUfunction), so code that
// calls the driver itself may reinterpret_cast between the two.
struct StreamHandle;
struct FunctionHandle;
using Stream = StreamHandle*;

enum class CodeObjectFormat { unknown, cubin, fatbin, ptx, host, amdgpu };

// Sniffs the bytes: ELF with e_machine EM_AMDGPU (224) -> amdgpu (an AMD code object,
// for the hip backend), any other ELF -> cubin (EM_CUDA, 190, when well formed),
// fatbin magic -> fatbin, ".version" text -> PTX, "IRIS-HOST-CODE" -> host (irisc
// --target=host, for the host backend).
CodeObjectFormat detect_code_object_format(std::span<const std::byte> bytes);
const char* code_object_format_name(CodeObjectFormat f);

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
  Dim3() = default;
  Dim3(unsigned x_, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

struct LaunchConfig {
  Dim3 grid;
  Dim3 block;
  std::size_t shared_bytes = 0;
  Stream stream = nullptr;  // nullptr: the rank's own stream
};

class Kernel {
 public:
  Kernel() = default;
  const std::string& name() const { return name_; }
  FunctionHandle* handle() const { return fn_; }
  // Byte size of each parameter, when the driver can tell (CUDA 12.4+); else empty.
  const std::vector<std::size_t>& param_sizes() const { return param_sizes_; }
  explicit operator bool() const { return fn_ != nullptr; }

 private:
  friend class Module;
  friend class Context;
  friend int max_active_clusters(const Kernel&, unsigned, unsigned, std::size_t);
  FunctionHandle* fn_ = nullptr;
  // Dynamic shared memory the function has been allowed (beyond 48 KiB the driver needs
  // an opt-in, done once per size rather than on every launch); shared by copies.
  std::shared_ptr<std::atomic<std::size_t>> shared_allowed_;
  std::shared_ptr<const void> owner_;  // keeps the module loaded while the kernel lives
  std::string name_;
  std::vector<std::size_t> param_sizes_;
};

// Clusters of `cluster` programs (along x) of `threads` threads and `shared_bytes` of
// dynamic shared memory that the current device runs at once: a persistent grid of
// clusters launches at most that many. 0 when the driver cannot tell.
int max_active_clusters(const Kernel& kernel, unsigned cluster, unsigned threads, std::size_t shared_bytes);

class Module {
 public:
  Module() = default;
  // Looks a kernel up by its (extern "C" or mangled) name. Throws iris::Error naming
  // the module and listing the kernels it has when the name is not there.
  Kernel kernel(const std::string& name) const;
  // Names of all kernels in the module (empty if the driver cannot enumerate them).
  std::vector<std::string> kernel_names() const;
  const std::string& name() const;
  CodeObjectFormat format() const;
  explicit operator bool() const { return impl_ != nullptr; }

  struct Impl;

 private:
  friend class Context;
  friend class Program;
  std::shared_ptr<Impl> impl_;
};

}  // namespace iris
