// The TIR interpreter (see interpreter.hpp): loading a host code object, and a launch's
// programs on threads. Each program (program.hpp) follows the CUDA printer
// (compiler/codegen/gpu_kernel_printer.cpp) statement for statement: where the two
// disagree, one of them is wrong, and the GPU suite compares them.
#include "backend/host/interpreter.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <span>
#include <system_error>
#include <thread>

#include "backend/host/host_job.hpp"
#include "backend/host/program.hpp"
#include "compiler/contract/host_code.hpp"
#include "compiler/driver/compile.hpp"

namespace iris::host {

using namespace interp;

Launch::Launch(const LoadedProgram& p, int kernel, void** args)
    : lp(p), k(p.module.kernels[static_cast<std::size_t>(kernel)]), ck(p.contract.kernels[static_cast<std::size_t>(kernel)]) {
  tensors.assign(k.params.size(), nullptr);
  scalars.assign(k.params.size(), S{});
  sizes.assign(k.size_symbols.size(), 0);
  for (std::size_t a = 0; a < ck.args.size(); ++a) {
    const irisc::contract::Arg& arg = ck.args[a];
    switch (arg.kind) {
      case irisc::contract::ArgKind::context: std::memcpy(&ctx, args[a], sizeof ctx); break;
      case irisc::contract::ArgKind::param: {
        const tir::Param& prm = k.params[static_cast<std::size_t>(arg.index)];
        if (prm.is_tensor) {
          std::memcpy(&tensors[static_cast<std::size_t>(arg.index)], args[a], sizeof(char*));
        } else {
          // The argument as packed: the scalar's own width.
          // Argument storage may be unaligned: copy it out before reading.
          S& s = scalars[static_cast<std::size_t>(arg.index)];
          const ScalarType t = prm.elem == ScalarType::int_ ? ScalarType::i64 : prm.elem;
          alignas(8) unsigned char word[8] = {};
          std::memcpy(word, args[a], static_cast<std::size_t>(elem_bytes(t)));
          s = read(t, word);
        }
        break;
      }
      case irisc::contract::ArgKind::size: std::memcpy(&sizes[static_cast<std::size_t>(arg.index)], args[a], 8); break;
      case irisc::contract::ArgKind::sms: std::memcpy(&sms, args[a], 8); break;
      case irisc::contract::ArgKind::tensor_map: throw Error("a tensor map argument on the host backend");
    }
  }
}

namespace {

// Programs of one launch that run at once when the kernel has no roles: what a GPU of
// the host backend's 4 multiprocessors x 4 resident programs would hold (role kernels
// run every program at once, as the launcher checked they fit).
constexpr unsigned kResidentPrograms = 16;

// Each tensor's extents, from the launch's size symbols and world.
void bind_shapes(Launch& l) {
  l.dims.assign(l.k.params.size(), {});
  l.elements.assign(l.k.params.size(), 0);
  for (std::size_t p = 0; p < l.k.params.size(); ++p) {
    const tir::Param& prm = l.k.params[p];
    if (!prm.is_tensor) continue;
    i64 n = 1;
    for (const irisc::contract::Expr& e : l.ck.params[p].dims) {
      i64 d = 0;
      irisc::contract::Bindings b{l.sizes, l.ctx.world, l.sms, 1};
      if (irisc::contract::eval(e, b, &d) != irisc::contract::EvalError::ok) d = 0;
      l.dims[p].push_back(d);
      n = d < 0 ? 0 : n * d;
    }
    l.elements[p] = n;
  }
}

}  // namespace

std::unique_ptr<LoadedModule> load(const void* image, const std::string& name) {
  const char* text = static_cast<const char*>(image);
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(text), std::strlen(text));
  irisc::HostCode code;
  std::string why;
  if (!irisc::read_host_code(bytes, &code, &why)) throw Error(name + " is not a well-formed host code object: " + why);
  // The verified listing, whose positions point into the source and the files the
  // compile appended to it, in their order: no front end runs here.
  auto lp = std::make_shared<LoadedProgram>(LoadedProgram{irisc::SourceBuffer(code.name, code.source), {}, {}});
  for (const auto& [file, text] : code.files) lp->source.add_file(file, text);
  if (!irisc::read_host_listing(code.tir, &lp->module, &why)) throw Error("cannot load " + name + ": " + why);
  auto out = std::make_unique<LoadedModule>();
  lp->contract = irisc::module_contract(lp->module);
  out->metadata = irisc::contract::write(lp->contract);
  for (std::size_t i = 0; i < lp->contract.kernels.size(); ++i) {
    InterpretedKernel k;
    k.kernel = static_cast<int>(i);
    k.symbol = lp->contract.kernels[i].symbol;
    for (const irisc::contract::Arg& a : lp->contract.kernels[i].args) k.param_sizes.push_back(static_cast<std::size_t>(a.bytes));
    out->kernels.push_back(std::move(k));
  }
  out->program = lp;
  for (InterpretedKernel& k : out->kernels) k.program = lp;
  return out;
}

void run(const InterpretedKernel& kernel, unsigned programs, void** args) {
  Launch l(*kernel.program, kernel.kernel, args);
  bind_shapes(l);
  if (programs == 0) return;
  // Role kernels run every program at once (their roles wait on each other); other
  // grids as many at once as the host's "GPU" holds.
  const unsigned workers = l.k.roles.empty() ? std::min(programs, kResidentPrograms) : programs;
  LaunchScope launch(l.ctx, static_cast<int>(workers));
  std::atomic<unsigned> next{0};
  auto worker = [&] {
    WorkerScope scope(l.ctx);
    for (unsigned p; !l.failed.load() && (p = next.fetch_add(1)) < programs;) {
      try {
        Program(l, p, programs).run();
      } catch (const Stopped&) {
        return;
      } catch (...) {
        l.fail(std::current_exception());
        return;
      }
    }
  };
  if (workers == 1) {
    worker();
  } else {
    std::vector<std::thread> threads;
    threads.reserve(workers);
    try {
      for (unsigned w = 0; w < workers; ++w) threads.emplace_back(worker);
    } catch (const std::system_error& e) {
      // The started workers stop at their next wait; the missing ones never count.
      l.fail(std::make_exception_ptr(Error("the host backend could not start thread " + std::to_string(threads.size()) +
                                           " of " + std::to_string(workers) + " for this launch: " + e.what())));
    }
    for (std::thread& t : threads) t.join();
  }
  if (l.error) std::rethrow_exception(l.error);
}

}  // namespace iris::host
