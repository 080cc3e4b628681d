// The TIR interpreter: how the host backend runs irisc kernels (docs/decisions/0004).
//
// A host code object (compiler/contract/host_code.hpp) is compiled at load, in-process,
// through irisc's front end and passes for the host target; a launch then runs the
// kernel's programs on threads (programs of every role at once, as a GPU holds them),
// each walking the TIR with whole tiles as values. Heap words are read and written
// through std::atomic_ref with the orders the statements give, so ranks (threads of one
// process) interact as GPUs do through their symmetric heaps.
//
// It checks as it runs: an access outside its tensor, a division by zero and a wait
// that can never be satisfied (host_job.hpp) are iris::Errors naming the kernel, the
// .iris file:line:column and the statement, the index and the tensor's shape.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "iris/module.hpp"

namespace iris::host {

struct LoadedProgram;  // the compiled module, its source and its contract

// A kernel of a loaded host code object, as the backend hands it out.
struct InterpretedKernel {
  std::shared_ptr<const LoadedProgram> program;
  int kernel = 0;  // index into its module
  std::string symbol;
  std::vector<std::size_t> param_sizes;
};

struct LoadedModule {
  std::shared_ptr<const LoadedProgram> program;
  std::string metadata;  // the launch contract (JSON), served as iris_metadata
  std::vector<InterpretedKernel> kernels;
};

// Compiles a host code object (NUL-terminated, as the runtime passes it); throws
// iris::Error with irisc's diagnostics when it does not compile for the host target.
std::unique_ptr<LoadedModule> load(const void* image, const std::string& name);

// Runs `kernel` over `programs` programs with the launch's argument pointers (one per
// contract argument) on the calling rank; returns when every program has finished.
// Throws iris::Error when a check fails (every program of the launch stops first).
void run(const InterpretedKernel& kernel, unsigned programs, void** args);

}  // namespace iris::host
