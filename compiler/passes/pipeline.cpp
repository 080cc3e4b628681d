// The straight pass list (see pipeline.hpp).
#include "compiler/passes/pipeline.hpp"

#include <chrono>
#include <cstdio>

#include "compiler/passes/choose_launch.hpp"
#include "compiler/passes/fold_constants.hpp"
#include "compiler/passes/remove_dead_lets.hpp"
#include "compiler/passes/select_gemm_mainloop.hpp"
#include "compiler/passes/select_matmul.hpp"
#include "compiler/tir/verify.hpp"

namespace irisc {
namespace {

struct Pass {
  const char* name;
  int (*run)(tir::Module&);
};

const Pass kPasses[] = {
    {"fold-constants", fold_constants},
    {"remove-dead-lets", remove_dead_lets},
    {"choose-launch", choose_launch},
    {"select-gemm-mainloop", select_gemm_mainloop},
    {"select-matmul", select_matmul},
};

}  // namespace

const std::vector<std::string>& pass_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const Pass& p : kPasses) n.push_back(p.name);
    return n;
  }();
  return names;
}

PipelineLog run_pipeline(tir::Module& module, const PipelineOptions& options) {
  PipelineLog log;
  if (std::string err = tir::verify(module); !err.empty()) {
    log.verify_error = "after sema: " + err;
    return log;
  }
  for (const Pass& p : kPasses) {
    if (!options.only_pass.empty() && options.only_pass != p.name) continue;
    const auto t0 = std::chrono::steady_clock::now();
    const int changed = p.run(module);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (options.time_passes) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "%-20s %8.3f ms  %d change(s)\n", p.name, ms, changed);
      log.timing += buf;
    }
    if (std::string err = tir::verify(module); !err.empty()) {
      log.verify_error = std::string("after ") + p.name + ": " + err;
      return log;
    }
    if (options.dump_ir_after == p.name || options.dump_ir_after == "all") {
      log.dumps += std::string("// after ") + p.name + (changed ? "" : " (no change)") + "\n" + tir::print(module);
    }
  }
  return log;
}

}  // namespace irisc
