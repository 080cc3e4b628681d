// Dead `let` removal (see remove_dead_lets.hpp).
#include "compiler/passes/remove_dead_lets.hpp"

#include <vector>

#include "compiler/tir/gemm_loop.hpp"
#include "compiler/tir/visit.hpp"

namespace irisc {
namespace {

using namespace tir;

int remove(std::vector<StmtPtr>& body, const std::vector<bool>& used) {
  int n = 0;
  for (auto it = body.begin(); it != body.end();) {
    Stmt& s = **it;
    for_each_body(s, [&](std::vector<StmtPtr>& b) { n += remove(b, used); });
    // Atomics change memory; a receive empties its slots and a data-and-flag load waits
    // for its words: each must happen though nobody reads its value.
    const bool has_effect = s.value && any_value(*s.value, [](const Value& v) {
      return v.kind == ValueKind::Atomic || v.kind == ValueKind::Receive || v.kind == ValueKind::LoadFlagged;
    });
    if (s.kind == StmtKind::Let && !used[static_cast<std::size_t>(s.var)] && !has_effect) {
      it = body.erase(it);
      ++n;
    } else {
      ++it;
    }
  }
  return n;
}

}  // namespace

int remove_dead_lets(Module& module) {
  int n = 0;
  for (Kernel& k : module.kernels) {
    // Until nothing changes: removing a let may leave the lets it read unread.
    for (int removed = 1; removed > 0; n += removed) {
      std::vector<bool> used(k.vars.size(), false);
      walk(
          k.body,
          [&](const Stmt& s) {
            if (s.kind == StmtKind::Assign) used[static_cast<std::size_t>(s.var)] = true;  // loop-carried lets stay
          },
          [&](const Value& v) {
            if (v.kind == ValueKind::VarRef) used[static_cast<std::size_t>(v.var)] = true;
          });
      removed = remove(k.body, used);
    }
    // A listing's GEMM decision whose matmul was dead is gone with it.
    forget_stale_gemm(k);
  }
  return n;
}

}  // namespace irisc
