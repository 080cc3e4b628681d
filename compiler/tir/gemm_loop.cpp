// The shape of a kernel the sm90 GEMM template runs (see gemm_loop.hpp).
#include "compiler/tir/gemm_loop.hpp"

#include <algorithm>
#include <vector>

#include "compiler/tir/visit.hpp"

namespace irisc::tir {
namespace {

bool is_var(const ValuePtr& v, int var) { return v && v->kind == ValueKind::VarRef && v->var == var; }

bool is_part_of(const ValuePtr& v, ValueKind part, int var) {
  return v && v->kind == part && v->operands.size() == 1 && is_var(v->operands[0], var);
}

bool same(const ValuePtr& a, const ValuePtr& b) { return a && b && same_value(*a, *b); }

// A row panel X[r, :] of a 2-D tensor, `rows` high, r being exactly loop range `var`:
// offset start(r) * ld, ld and K the tensor's columns.
bool row_panel(const Kernel& k, const View& w, int var, std::int64_t rows) {
  const Param& p = k.params[static_cast<std::size_t>(w.param)];
  if (w.slice_dim != 1 || w.rows != rows || p.dims.size() != 2 || !is_part_of(w.row_extent, ValueKind::RangeExtent, var)) {
    return false;
  }
  const ValuePtr& o = w.offset;
  return o && o->kind == ValueKind::Binary && o->binop == BinOp::mul && o->operands.size() == 2 &&
         is_part_of(o->operands[0], ValueKind::RangeStart, var) && same(o->operands[1], w.ld) && same(w.ld, p.dims[1]) &&
         same(w.full, p.dims[1]);
}

// A column panel B[:, c] of a [K, N] tensor, `cols` wide, c being exactly loop range `var`.
bool column_panel(const Kernel& k, const View& w, int var, std::int64_t cols) {
  const Param& p = k.params[static_cast<std::size_t>(w.param)];
  return w.slice_dim == 0 && w.size == cols && p.dims.size() == 2 && is_part_of(w.extent, ValueKind::RangeExtent, var) &&
         is_part_of(w.offset, ValueKind::RangeStart, var) && same(w.ld, p.dims[1]) && same(w.full, p.dims[0]);
}

bool is_matmul(const ValuePtr& v) { return v && v->kind == ValueKind::Matmul; }

// The product of `let c = matmul(...) [as T]`, or null where `s` is not one.
const Value* product_of(const Stmt& s) {
  const ValuePtr& v = s.value;
  if (s.kind != StmtKind::Let || !v) return nullptr;
  if (is_matmul(v)) return v.get();
  if (v->kind == ValueKind::Cast && v->operands.size() == 1 && is_matmul(v->operands[0])) return v->operands[0].get();
  return nullptr;
}

class EpilogueCheck {
 public:
  EpilogueCheck(std::int64_t bm, std::int64_t bn) : bm_(bm), bn_(bn) {}

  std::string stmts(const std::vector<StmtPtr>& body, std::size_t from) {
    for (std::size_t i = from; i < body.size() && why_.empty(); ++i) stmt(*body[i]);
    return why_;
  }

 private:
  void fail(const std::string& why) {
    if (why_.empty()) why_ = why;
  }

  bool accumulator_shape(std::int64_t rows, std::int64_t cols) const { return rows == bm_ && cols == bn_; }

  void view(const View& w) {
    if ((w.size || w.rows) && !accumulator_shape(w.rows, w.size)) {
      fail("the epilogue has a tile view that is not " + std::to_string(bm_) + " x " + std::to_string(bn_));
    }
  }

  // `top_atomic`: the value is an atomic statement's own (its result unused).
  void value(const Value& v, bool top_atomic) {
    switch (v.kind) {
      case ValueKind::Reduce: return fail("the epilogue reduces a tile (that needs the whole program)");
      case ValueKind::Broadcast: return fail("the epilogue broadcasts a tile (that needs the whole program)");
      case ValueKind::Matmul: return fail("the epilogue has a second matmul");
      case ValueKind::Atomic:
        if (!top_atomic) return fail("the epilogue uses an atomic's result (a broadcast over the whole program)");
        break;
      default: break;
    }
    if (v.type.is_tile() && !accumulator_shape(v.type.rows, v.type.size)) {
      return fail("the epilogue has a " + to_string(v.type) + ", not the accumulator's shape");
    }
    if (v.kind == ValueKind::Load || v.kind == ValueKind::Atomic) view(v.view);
    for_each_child(v, [&](const ValuePtr& c) { value(*c, false); });
  }

  void stmt(const Stmt& s) {
    switch (s.kind) {
      case StmtKind::ForBlocks:
      case StmtKind::ForTiles:
      case StmtKind::ForChunks: return fail("the epilogue has a blocks, tiles or chunks loop");
      case StmtKind::Role: return fail("the epilogue has a role");
      case StmtKind::Let:
      case StmtKind::Assign:
      case StmtKind::Store:
      case StmtKind::StoreFlagged:
      case StmtKind::Send:
      case StmtKind::Signal:
      case StmtKind::Wait:
      case StmtKind::Fence:
      case StmtKind::Eval:
      case StmtKind::ForRanks:
      case StmtKind::ForRange:
      case StmtKind::If: break;
    }
    view(s.view);
    for_each_value(s, [&](const ValuePtr& v) { value(*v, s.kind == StmtKind::Eval && v == s.value); });
    for_each_body(s, [&](const std::vector<StmtPtr>& b) { stmts(b, 0); });
  }

  std::int64_t bm_, bn_;
  std::string why_;
};

// The statements before the product: what the producer's thread may run alone before
// it loads a tile. `defined` collects the variables their lets define.
std::string check_prologue(const std::vector<StmtPtr>& body, std::size_t end, int tile_var, std::vector<int>& defined) {
  std::string why;
  const auto value_ok = [&](const ValuePtr& v) {
    if (!v || !why.empty()) return;
    if (any_value(*v, [](const Value& x) { return x.type.is_tile() || x.kind == ValueKind::Atomic; })) {
      why = "the statements before the matmul compute a tile or an atomic (they run on one thread)";
    } else if (tile_var >= 0 && any_value(*v, [&](const Value& x) { return x.kind == ValueKind::VarRef && x.var == tile_var; })) {
      why = "the statements before the matmul read the tile number";
    }
  };
  for (std::size_t i = 0; i < end && why.empty(); ++i) {
    const Stmt& s = *body[i];
    switch (s.kind) {
      case StmtKind::Let: defined.push_back(s.var); break;
      case StmtKind::Wait:
      case StmtKind::ForRanks:
      case StmtKind::ForRange:
      case StmtKind::If: break;
      default: return "the statements before the matmul do more than wait (waits, scalar lets, loops and ifs of them)";
    }
    for_each_value(s, value_ok);
    for_each_body(s, [&](const std::vector<StmtPtr>& b) {
      if (why.empty()) why = check_prologue(b, b.size(), tile_var, defined);
    });
    if (s.kind == StmtKind::ForRanks || s.kind == StmtKind::ForRange) defined.push_back(s.var);
  }
  return why;
}

// "" where `s` is a scalar let computing no tile (what may precede `what`), else why not.
std::string scalar_let(const Stmt& s, const char* what) {
  if (s.kind != StmtKind::Let || !s.value || !s.value->type.is_scalar()) {
    return std::string("the statements before ") + what + " are not scalar lets";
  }
  if (any_value(*s.value, [](const Value& v) { return v.type.is_tile(); })) {
    return std::string("a let before ") + what + " computes a tile";
  }
  return {};
}

// The GEMM of `body`: scalar lets, then one tiles loop of the shape above.
std::string match_body(const Kernel& k, const std::vector<StmtPtr>& body, GemmLoop& out) {
  const Stmt* loop = nullptr;
  for (const StmtPtr& s : body) {
    if (loop) return "statements follow the tiles loop";
    if (s->kind == StmtKind::ForTiles) {
      loop = s.get();
      continue;
    }
    if (std::string why = scalar_let(*s, "the loop"); !why.empty()) return why;
  }
  if (!loop) return "the kernel has no tiles loop";
  if (loop->body.empty()) return "the tiles loop is empty";
  // The product is the first `let c = matmul(...) [as T]`; what precedes it is the prologue.
  std::size_t at = 0;
  while (at < loop->body.size() && !product_of(*loop->body[at])) ++at;
  if (at == loop->body.size()) return "the tiles loop has no `let c = matmul(...)`";
  std::vector<int> prologue_vars;
  if (std::string why = check_prologue(loop->body, at, loop->var_t, prologue_vars); !why.empty()) return why;
  if (!prologue_vars.empty()) {
    bool read = false;
    const auto reads = [&](const Value& x) {
      read = read || (x.kind == ValueKind::VarRef &&
                      std::find(prologue_vars.begin(), prologue_vars.end(), x.var) != prologue_vars.end());
    };
    for (std::size_t i = at; i < loop->body.size(); ++i) {
      const Stmt& st = *loop->body[i];
      for_each_value(st, [&](const ValuePtr& v) { walk(*v, reads); });
      for_each_body(st, [&](const std::vector<StmtPtr>& b) { walk(b, [](const Stmt&) {}, reads); });
    }
    if (read) return "the matmul or the epilogue reads a variable of the statements before the matmul";
  }
  const Stmt& let = *loop->body[at];
  const ValuePtr& lv = let.value;
  const Value& m = *product_of(let);
  GemmLoop g;
  g.loop = loop;
  g.let = &let;
  g.prologue = at;
  g.matmul = &m;
  g.bm = loop->step;
  g.bn = loop->step2;
  if (m.type.elem != ScalarType::f32 || m.type.rows != g.bm || m.type.size != g.bn) {
    return "the matmul is not an f32 tile of the loop's tile shape";
  }
  const auto var_ok = let.var >= 0 && let.var < static_cast<int>(k.vars.size());
  if (lv->type.rows != g.bm || lv->type.size != g.bn || !var_ok || !(k.vars[static_cast<std::size_t>(let.var)].type == lv->type)) {
    return "c is not a tile of the loop's tile shape";
  }
  const auto valid_param = [&](int p) { return p >= 0 && p < static_cast<int>(k.params.size()) && k.params[static_cast<std::size_t>(p)].is_tensor; };
  if (!valid_param(m.view.param) || !valid_param(m.view_b.param)) return "a matmul operand is not a tensor";
  g.a = m.view.param;
  g.b = m.view_b.param;
  g.elem = k.params[static_cast<std::size_t>(g.a)].elem;
  if ((g.elem != ScalarType::bf16 && g.elem != ScalarType::f16) || k.params[static_cast<std::size_t>(g.b)].elem != g.elem) {
    return "the operands are not both bf16 or both f16";
  }
  if (!row_panel(k, m.view, loop->var, g.bm)) return "A is not A[m, :] of the loop's row range";
  g.b_nk = m.view_b.slice_dim == 1;
  g.a_gathered = m.view.gathered;
  if (g.b_nk ? !row_panel(k, m.view_b, loop->var2, g.bn) : !column_panel(k, m.view_b, loop->var2, g.bn)) {
    return "B is not B[:, n] or Bt[n, :] of the loop's column range";
  }
  if (std::string why = EpilogueCheck(g.bm, g.bn).stmts(loop->body, at + 1); !why.empty()) return why;
  out = g;
  return {};
}

// A kernel of roles runs the GEMM in the first role whose body has the shape; outside
// the roles only scalar lets. The other roles' programs run on the template's thread
// count too (they run their code on the first threads of it: GpuKernelPrinter), with
// the layouts choose_launch gave their tiles: none of them may have the accumulator's
// shape, whose layout is the template's, nor a matmul, whose shared memory would be the
// template's ring.
std::string match_roles(const Kernel& k, GemmLoop& g) {
  const auto role_name = [&](const Stmt& s) { return "role '" + k.roles[static_cast<std::size_t>(s.role)].name + "'"; };
  std::string why_not;
  for (const StmtPtr& s : k.body) {
    if (s->kind != StmtKind::Role) {
      if (std::string why = scalar_let(*s, "the roles"); !why.empty()) return why;
      continue;
    }
    if (g.role >= 0) continue;
    GemmLoop r;
    if (std::string why = match_body(k, s->body, r); why.empty()) {
      g = r;
      g.role = s->role;
    } else if (why_not.empty() && any_value(s->body, [](const Value& v) { return v.kind == ValueKind::Matmul; })) {
      why_not = role_name(*s) + ": " + why;
    }
  }
  if (g.role < 0) return why_not.empty() ? "no role has a matmul" : why_not;
  for (const StmtPtr& s : k.body) {
    if (s->kind != StmtKind::Role || s->role == g.role) continue;
    const auto accumulator_shaped = [&](std::int64_t rows, std::int64_t cols) { return rows == g.bm && cols == g.bn; };
    std::string why;
    walk(
        s->body,
        [&](const Stmt& st) {
          if (why.empty() && accumulator_shaped(st.view.rows, st.view.size)) why = "has a view of the GEMM's tile shape";
        },
        [&](const Value& v) {
          if (!why.empty()) return;
          if (v.kind == ValueKind::Matmul) why = "has a matmul too";
          else if (v.type.is_tile() && accumulator_shaped(v.type.rows, v.type.size)) why = "has a tile of the GEMM's tile shape";
          else if (accumulator_shaped(v.view.rows, v.view.size)) why = "has a view of the GEMM's tile shape";
        });
    if (!why.empty()) return role_name(*s) + " " + why + " (another role runs the GEMM)";
  }
  return {};
}

}  // namespace

std::string match_gemm_loop(const Kernel& k, GemmLoop* out) {
  GemmLoop g;
  if (std::string why = k.roles.empty() ? match_body(k, k.body, g) : match_roles(k, g); !why.empty()) return why;
  if (out) *out = g;
  return {};
}

std::vector<TmaStore> epilogue_tma_stores(const Kernel& k, const GemmLoop& g) {
  std::vector<TmaStore> out;
  if (!k.gemm.stages || !k.gemm.tma_stores || g.role >= 0 || !g.loop) return out;
  // Every statement and value of the epilogue.
  const auto epilogue = [&](auto&& on_stmt, auto&& on_value) {
    for (std::size_t i = g.prologue + 1; i < g.loop->body.size(); ++i) {
      const Stmt& s = *g.loop->body[i];
      on_stmt(s);
      for_each_value(s, [&](const ValuePtr& v) { walk(*v, on_value); });
      for_each_body(s, [&](const std::vector<StmtPtr>& b) { walk(b, on_stmt, on_value); });
    }
  };
  bool ordered = false;
  epilogue([&](const Stmt& s) {
    ordered = ordered || s.kind == StmtKind::Signal || s.kind == StmtKind::Wait || s.kind == StmtKind::Fence ||
              s.kind == StmtKind::Eval || s.kind == StmtKind::StoreFlagged || s.kind == StmtKind::Send;
  }, [&](const Value& v) { ordered = ordered || v.kind == ValueKind::Atomic; });
  if (ordered) return out;
  // A store that names a rank is to a symmetric tensor (sema: RemoteOnLocalTensor).
  epilogue([&](const Stmt& s) {
    if (s.kind != StmtKind::Store || !s.view.rows || s.view.param < 0) return;
    const Param& p = k.params[static_cast<std::size_t>(s.view.param)];
    if (!p.is_tensor || p.dims.size() != 2 || byte_size(p.elem) != 2) return;
    auto it = std::find_if(out.begin(), out.end(), [&](const TmaStore& t) { return t.param == s.view.param; });
    if (it == out.end()) it = out.insert(out.end(), TmaStore{s.view.param, false});
    it->every_rank = it->every_rank || s.rank != nullptr;
  }, [](const Value&) {});
  return out;
}

void forget_gemm(Kernel& k) {
  k.gemm = {};
  mutate(k.body, [](ValuePtr& v) {
    if (v->kind == ValueKind::Matmul && v->matmul == MatmulLowering::wgmma_ws) v->matmul = MatmulLowering::unchosen;
  });
  for (Layout& l : k.layouts) l.accumulator = false;
}

bool forget_stale_gemm(Kernel& k) {
  if (!k.gemm.stages || match_gemm_loop(k, nullptr).empty()) return false;
  forget_gemm(k);
  return true;
}

}  // namespace irisc::tir
