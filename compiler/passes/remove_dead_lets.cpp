// Dead `let` removal (see remove_dead_lets.hpp).
#include "compiler/passes/remove_dead_lets.hpp"

#include <set>

namespace irisc {
namespace {

using namespace tir;

void uses(const Value& v, std::set<int>& used) {
  if (v.kind == ValueKind::VarRef) used.insert(v.var);
  for (const ValuePtr& o : v.operands) uses(*o, used);
  if (v.view.offset) uses(*v.view.offset, used);
  if (v.view.extent) uses(*v.view.extent, used);
  if (v.rank) uses(*v.rank, used);
}

void uses(const std::vector<StmtPtr>& body, std::set<int>& used) {
  for (const StmtPtr& s : body) {
    for (const ValuePtr* v : {&s->value, &s->rank, &s->lo, &s->hi, &s->view.offset, &s->view.extent}) {
      if (*v) uses(**v, used);
    }
    if (s->kind == StmtKind::Assign) used.insert(s->var);  // assigned lets stay (loop-carried)
    uses(s->body, used);
    uses(s->else_body, used);
  }
}

bool has_effect(const Value& v) {
  if (v.kind == ValueKind::Atomic) return true;
  for (const ValuePtr& o : v.operands) {
    if (has_effect(*o)) return true;
  }
  // An atomic may hide in an index or a rank: x[atomic_add(c[0], 1)].
  for (const View* view : {&v.view, &v.view_b}) {
    for (const ValuePtr* p : {&view->offset, &view->extent, &view->row_extent, &view->ld, &view->full}) {
      if (*p && has_effect(**p)) return true;
    }
  }
  return v.rank && has_effect(*v.rank);
}

int remove(std::vector<StmtPtr>& body, const std::set<int>& used) {
  int n = 0;
  for (auto it = body.begin(); it != body.end();) {
    Stmt& s = **it;
    n += remove(s.body, used) + remove(s.else_body, used);
    if (s.kind == StmtKind::Let && !used.count(s.var) && !has_effect(*s.value)) {
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
    std::set<int> used;
    uses(k.body, used);
    n += remove(k.body, used);
  }
  return n;
}

}  // namespace irisc
