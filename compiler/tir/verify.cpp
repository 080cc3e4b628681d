// The TIR verifier (see verify.hpp).
#include "compiler/tir/verify.hpp"

#include <algorithm>
#include <cstddef>

#include "compiler/tir/gemm_loop.hpp"
#include "compiler/tir/visit.hpp"
#include "templates/include/iris/device/gemm/shapes.hpp"

namespace irisc::tir {
namespace {

struct Arity {
  int min, max;
};

Arity arity(ValueKind k) {
  switch (k) {
#define IRIS_TIR_VALUE(Kind, MinOperands, MaxOperands) \
  case ValueKind::Kind: return {MinOperands, MaxOperands};
#include "compiler/tir/value_kinds.def"
  }
  return {0, 0};
}

bool is_int_scalar(const Value& v) { return v.type.is_scalar() && is_integer(v.type.elem); }

class Verifier {
 public:
  Verifier(const Kernel& k, const Target& target) : k_(k), target_(target), defined_(k.vars.size(), false) {}

  std::string run() {
    for (const Param& p : k_.params) {
      for (const ValuePtr& d : p.dims) {
        if (!d) return "tensor '" + p.name + "' has a null extent";
        launch_value(*d, LaunchUse::extent, "the extent of '" + p.name + "'");
      }
      if (!p.is_tensor && !p.dims.empty()) fail("scalar '" + p.name + "' has extents");
    }
    if (k_.layouts_chosen && k_.roles.empty() != static_cast<bool>(k_.grid)) {
      fail("a kernel has a grid exactly when it has no roles");
    }
    if (k_.grid) launch_value(*k_.grid, LaunchUse::grid, "the grid");
    for (const Role& r : k_.roles) {
      if (!r.programs) fail("role '" + r.name + "' has no program count");
      else launch_value(*r.programs, LaunchUse::grid, "the program count of role '" + r.name + "'");
    }
    if (k_.layouts_chosen && (k_.block_threads < 1 || k_.block_threads > 1024)) {
      fail("block of " + std::to_string(k_.block_threads) + " threads");
    }
    int roles_seen = 0;
    body(k_.body, /*top=*/true, roles_seen);
    if (roles_seen != static_cast<int>(k_.roles.size())) fail("role statements and Kernel::roles disagree");
    if (err_.empty()) gemm();
    return err_;
  }

 private:
  void fail(const std::string& why) {
    if (err_.empty()) err_ = why;
  }
  std::string at(const Value& v) const { return name(v.kind) + std::string(" ") + print(k_, v); }

  bool valid_var(int v) const { return v >= 0 && v < static_cast<int>(k_.vars.size()); }

  void define(int v, const char* what) {
    if (!valid_var(v)) return fail(std::string(what) + " defines a bad variable");
    if (defined_[static_cast<std::size_t>(v)]) {
      return fail(std::string(what) + " defines %" + k_.vars[static_cast<std::size_t>(v)].name + " a second time");
    }
    defined_[static_cast<std::size_t>(v)] = true;
    scope_.push_back(v);
  }

  // Values computed from what the launcher knows: constants, sizes, world (and sms for
  // grids), with + - * / % min max.
  void launch_value(const Value& v, LaunchUse use, const std::string& what) {
    if (const Value* bad = not_at_launch(v, use)) fail(what + " holds " + at(*bad) + ", which is not known at launch");
    walk(v, [&](const Value& x) {
      if (x.kind == ValueKind::SizeRef && (x.size < 0 || x.size >= static_cast<int>(k_.size_symbols.size()))) {
        fail(what + " names no size");
      }
    });
  }

  // A GEMM decision (select_gemm_mainloop) holds together: the kernel has the shape the
  // template runs, its one matmul is the template's, and the launch is the template's
  // (threads, shared memory, the accumulator layout), which codegen prints as is.
  void gemm() {
    const bool wgmma = any_value(k_.body, [](const Value& v) {
      return v.kind == ValueKind::Matmul && v.matmul == MatmulLowering::wgmma_ws;
    });
    const bool acc_layout = std::any_of(k_.layouts.begin(), k_.layouts.end(), [](const Layout& l) { return l.accumulator; });
    if (!k_.gemm.stages) {
      if (wgmma) fail("a wgmma_ws matmul in a kernel that is no GEMM (no `gemm` on its launch line)");
      if (acc_layout) fail("an accumulator layout in a kernel that is no GEMM");
      return;
    }
    GemmLoop g;
    if (std::string why = match_gemm_loop(k_, &g); !why.empty()) return fail("a GEMM kernel of the wrong shape: " + why);
    if (g.matmul->matmul != MatmulLowering::wgmma_ws) return fail("a GEMM kernel whose matmul is not wgmma_ws");
    const iris::device::gemm::Sm90Shape shape{static_cast<int>(g.bm), static_cast<int>(g.bn), 64, k_.gemm.stages,
                                              k_.gemm.group_m, k_.gemm.cluster};
    if (g.bm > 1024 || g.bn > 1024 || !iris::device::gemm::sm90_shape_ok(shape)) {
      return fail("a GEMM of " + std::to_string(g.bm) + " x " + std::to_string(g.bn) + " tiles and " +
                  std::to_string(k_.gemm.stages) + " stages, which the sm90 template does not run");
    }
    if (g.a_gathered && k_.gemm.cluster != 1) return fail("a GEMM of a gathered A in clusters");
    if (!k_.layouts_chosen) return fail("a GEMM decision before the layouts were chosen");
    if (k_.block_threads != iris::device::gemm::sm90_threads(shape) || k_.min_blocks_per_sm != 1 ||
        k_.dynamic_shared_bytes != iris::device::gemm::sm90_shared_bytes(shape)) {
      return fail("a GEMM kernel whose threads, blocks/sm or dynamic shared memory are not the template's");
    }
    if (k_.gemm.role != g.role) return fail("a GEMM decision naming another role than the one that runs it");
    if (g.role >= 0) {
      // The other roles run on the first others_threads threads: at most the template's
      // consumers, a whole number of warps.
      const int t = k_.gemm.others_threads;
      if (k_.gemm.cluster != 1) return fail("a GEMM role in clusters");
      if (t < 32 || t % 32 != 0 || t > k_.block_threads) {
        return fail("the other roles of a GEMM kernel run on " + std::to_string(t) + " threads");
      }
    } else if (k_.gemm.others_threads) {
      return fail("threads of other roles in a GEMM kernel without roles");
    }
    const Layout acc{g.bm, g.bn, 1, true};
    const bool one_acc = std::count_if(k_.layouts.begin(), k_.layouts.end(), [](const Layout& l) { return l.accumulator; }) == 1;
    if (!one_acc || std::find(k_.layouts.begin(), k_.layouts.end(), acc) == k_.layouts.end() ||
        (g.role < 0 && k_.layouts.size() != 1)) {
      fail(g.role < 0 ? "a GEMM kernel whose only layout is not the accumulator's"
                      : "a GEMM kernel whose one accumulator layout is not the GEMM's");
    }
    for (const Layout& l : k_.layouts) {
      if (!l.accumulator && l.rows == g.bm && l.cols == g.bn) fail("a GEMM kernel with a second layout of the GEMM's tile");
    }
  }

  // The matrix instructions a matmul's lowering needs are the target's.
  bool lowering_available(MatmulLowering m) const {
    switch (m) {
      case MatmulLowering::unchosen: case MatmulLowering::simt: return true;
      case MatmulLowering::mma_sync: return target_.mma_sync;
      case MatmulLowering::wgmma_ws: return target_.wgmma;
      case MatmulLowering::mfma: return target_.mfma;
    }
    return false;
  }

  // matmul_a: the view is a matmul's first operand, the one view that may be gathered.
  void view(const View& w, const char* what, bool matmul_a = false) {
    if (w.param < 0 || w.param >= static_cast<int>(k_.params.size()) ||
        !k_.params[static_cast<std::size_t>(w.param)].is_tensor) {
      return fail(std::string(what) + " has a view of no tensor");
    }
    if (!w.offset) return fail(std::string(what) + " has a view without an offset");
    if (w.size && w.slice_dim != 0 && !w.extent) fail(std::string(what) + " has a tile view without an extent");
    if (w.rows && (!w.row_extent || !w.ld)) fail(std::string(what) + " has a 2-D view without row bounds");
    if (w.slice_dim >= 0 && (!w.full || !w.ld)) fail(std::string(what) + " has a panel without its full extent");
    const Param& p = k_.params[static_cast<std::size_t>(w.param)];
    if (w.gathered && (!matmul_a || w.slice_dim != 1 || !p.symmetric || p.dims.size() != 2)) {
      fail(std::string(what) + " has a gathered view that is not a matmul's row panel of a symmetric 2-D tensor");
    }
    for_each_child(w, [&](const ValuePtr& c) {
      if (!is_int_scalar(*c)) fail(std::string(what) + " has a view bound that is not an integer: " + at(*c));
    });
  }

  void value(const Value& v) {
    const Arity a = arity(v.kind);
    const int n = static_cast<int>(v.operands.size());
    if (n < a.min || n > a.max) {
      return fail(at(v) + " has " + std::to_string(n) + " operand(s)");
    }
    for (const ValuePtr& o : v.operands) {
      if (!o) return fail(at(v) + " has a null operand");
    }
    auto op = [&](int i) -> const Value& { return *v.operands[static_cast<std::size_t>(i)]; };
    switch (v.kind) {
      case ValueKind::Const:
        if (!v.type.is_scalar()) fail(at(v) + " is not a scalar");
        break;
      case ValueKind::BuiltinRef:
        if (!v.type.is_scalar()) fail(at(v) + " is not a scalar");
        if (v.builtin == Builtin::resident) fail("a kernel body reads resident, which only grids may");
        break;
      case ValueKind::ParamRef:
        if (v.param < 0 || v.param >= static_cast<int>(k_.params.size()) ||
            k_.params[static_cast<std::size_t>(v.param)].is_tensor) {
          fail(at(v) + " names no scalar parameter");
        }
        break;
      case ValueKind::SizeRef:
        if (v.size < 0 || v.size >= static_cast<int>(k_.size_symbols.size())) fail("a size reference names no size");
        break;
      case ValueKind::VarRef:
        if (!valid_var(v.var)) return fail("a reference to a bad variable");
        if (!defined_[static_cast<std::size_t>(v.var)]) {
          fail("%" + k_.vars[static_cast<std::size_t>(v.var)].name + " is used where no definition is in scope");
        }
        if (!(v.type == k_.vars[static_cast<std::size_t>(v.var)].type)) fail(at(v) + " disagrees with its variable's type");
        break;
      case ValueKind::RangeStart:
      case ValueKind::RangeExtent:
      case ValueKind::Iota:
        if (op(0).type.kind != TypeKind::Range) fail(at(v) + " takes a range");
        break;
      case ValueKind::Unary:
      case ValueKind::Cast:
        if (v.type.is_tile() != op(0).type.is_tile()) fail(at(v) + " changes the shape of its operand");
        break;
      case ValueKind::Binary:
        for (int i = 0; i < 2; ++i) {
          if (op(i).type.is_tile() && !(op(i).type.size == v.type.size && op(i).type.rows == v.type.rows)) {
            fail(at(v) + " has an operand of another shape");
          }
        }
        if (v.type.is_tile() && !op(0).type.is_tile() && !op(1).type.is_tile()) fail(at(v) + " makes a tile of scalars");
        break;
      case ValueKind::Load:
        view(v.view, "a load");
        if (n == 1 && (!v.type.is_tile() || op(0).type.is_tile())) fail(at(v) + " has a masked value but is no tile load");
        break;
      case ValueKind::LoadFlagged:
        view(v.view, "a flagged load");
        if (v.rank) fail(at(v) + " reads another rank's words");
        if (byte_size(v.type.elem) > 4 || v.type.rows) fail(at(v) + " is not of values of at most 4 bytes");
        if (!op(0).type.is_scalar()) fail(at(v) + " has a flag that is not a scalar");
        break;
      case ValueKind::Receive:
        view(v.view, "a receive");
        if (v.rank) fail(at(v) + " reads another rank's slots");
        if (!is_float(v.type.elem) || !v.type.is_tile() || v.type.rows) fail(at(v) + " is not a 1-D tile of floating-point values");
        break;
      case ValueKind::Fill:
        if (!v.type.is_tile() || op(0).type.is_tile()) fail(at(v) + " does not fill a tile with a scalar");
        break;
      case ValueKind::Reduce:
        if (v.axis < 0) {
          if (v.type.is_tile() || !op(0).type.is_tile()) fail(at(v) + " does not reduce a tile to a scalar");
        } else if (v.axis > 1 || !op(0).type.is_tile() || !op(0).type.rows || !v.type.is_tile() || v.type.rows ||
                   v.type.size != (v.axis == 0 ? op(0).type.size : op(0).type.rows)) {
          fail(at(v) + " does not reduce an axis of a 2-D tile to a 1-D tile");
        }
        break;
      case ValueKind::Broadcast:
        if (v.axis < 0 || v.axis > 1 || !op(0).type.is_tile() || op(0).type.rows || !v.type.is_tile() || !v.type.rows ||
            op(0).type.size != (v.axis == 0 ? v.type.size : v.type.rows) || op(0).type.elem != v.type.elem) {
          fail(at(v) + " does not repeat a 1-D tile along an axis of a 2-D tile");
        }
        break;
      case ValueKind::Select:
        if (op(0).type.elem != ScalarType::boolean) fail(at(v) + " has a condition that is not bool");
        for (int i = 0; i < 3; ++i) {
          if (op(i).type.is_tile() && !(op(i).type.size == v.type.size && op(i).type.rows == v.type.rows)) {
            fail(at(v) + " has an operand of another shape");
          }
        }
        if (op(1).type.elem != v.type.elem || op(2).type.elem != v.type.elem) fail(at(v) + " has choices of another type");
        break;
      case ValueKind::Atomic:
        view(v.view, "an atomic");
        for (const ValuePtr& o : v.operands) {
          if (o->type.is_tile() && !v.type.is_tile()) fail(at(v) + " has a tile operand on one element");
        }
        break;
      case ValueKind::Matmul:
        view(v.view, "a matmul", true);
        view(v.view_b, "a matmul");
        // B is a column panel of [K, N], or a row panel of [N, K] (B transposed).
        if (v.view.slice_dim != 1 || v.view_b.slice_dim < 0 || !v.type.is_tile() || !v.type.rows ||
            v.type.rows != v.view.rows || v.type.size != (v.view_b.slice_dim == 0 ? v.view_b.size : v.view_b.rows)) {
          fail(at(v) + " is not panel x panel -> 2-D tile");
        }
        if (!lowering_available(v.matmul)) {
          fail(at(v) + " is lowered to " + name(v.matmul) + ", which " + target_.name + " does not have");
        }
        break;
    }
    if (v.rank && !is_int_scalar(*v.rank)) fail(at(v) + " has a rank that is not an integer");
    if (k_.layouts_chosen && v.type.is_tile() && !k_.has_layout(v.type)) {
      fail(at(v) + " has a tile shape with no layout");
    }
    for_each_child(v, [&](const ValuePtr& c) { value(*c); });
  }

  void body(const std::vector<StmtPtr>& stmts, bool top, int& roles_seen) {
    const std::size_t mark = scope_.size();
    for (const StmtPtr& sp : stmts) {
      if (!err_.empty()) return;
      stmt(*sp, top, roles_seen);
    }
    while (scope_.size() > mark) {
      defined_[static_cast<std::size_t>(scope_.back())] = false;
      scope_.pop_back();
    }
  }

  void loop_body(const Stmt& s, std::initializer_list<int> vars, int& roles_seen) {
    const std::size_t mark = scope_.size();
    for (int v : vars) {
      if (v >= 0) define(v, name(s.kind));
    }
    body(s.body, false, roles_seen);
    while (scope_.size() > mark) {
      defined_[static_cast<std::size_t>(scope_.back())] = false;
      scope_.pop_back();
    }
  }

  void stmt(const Stmt& s, bool top, int& roles_seen) {
    const bool has_body = s.kind == StmtKind::ForBlocks || s.kind == StmtKind::ForTiles || s.kind == StmtKind::ForRanks ||
                          s.kind == StmtKind::ForRange || s.kind == StmtKind::ForChunks || s.kind == StmtKind::If ||
                          s.kind == StmtKind::Role;
    if (!has_body && (!s.body.empty() || !s.else_body.empty())) fail(std::string(name(s.kind)) + " has a body");
    for_each_value(s, [&](const ValuePtr& v) { value(*v); });
    auto need = [&](const ValuePtr& v, const char* what) {
      if (!v) fail(std::string(name(s.kind)) + " without " + what);
    };
    switch (s.kind) {
      case StmtKind::Let:
        need(s.value, "a value");
        if (valid_var(s.var) && s.value &&
            k_.vars[static_cast<std::size_t>(s.var)].type.kind != s.value->type.kind) {
          fail("let %" + k_.vars[static_cast<std::size_t>(s.var)].name + " of another kind than its value");
        }
        define(s.var, "a let");
        break;
      case StmtKind::Assign:
        need(s.value, "a value");
        if (!valid_var(s.var) || !defined_[static_cast<std::size_t>(s.var)]) fail("assignment to a variable not in scope");
        break;
      case StmtKind::Store:
        need(s.value, "a value");
        view(s.view, "a store");
        break;
      case StmtKind::StoreFlagged:
        need(s.value, "a value");
        need(s.flag, "a flag");
        view(s.view, "a flagged store");
        if (s.value && (byte_size(s.value->type.elem) > 4 || s.value->type.rows)) {
          fail("a flagged store of values of more than 4 bytes");
        }
        break;
      case StmtKind::Send:
        need(s.value, "a value");
        view(s.view, "a send");
        if (s.value && (!is_float(s.value->type.elem) || !s.value->type.is_tile() || s.value->type.rows)) {
          fail("a send of other than a 1-D tile of floating-point values");
        }
        break;
      case StmtKind::Signal:
      case StmtKind::Wait:
        need(s.value, "a value");
        view(s.view, name(s.kind));
        if (s.view.size || s.view.rows) fail(std::string(name(s.kind)) + " on more than one element");
        break;
      case StmtKind::Fence:
        if (s.order != Order::acq_rel) fail(std::string("a fence with order ") + name(s.order) + " (fences are acq_rel)");
        break;
      case StmtKind::Eval: need(s.value, "a value"); break;
      case StmtKind::ForBlocks:
        need(s.hi, "a bound");
        if (s.step < 1) fail("blocks loop with step " + std::to_string(s.step));
        loop_body(s, {s.var}, roles_seen);
        break;
      case StmtKind::ForTiles:
        need(s.hi, "a row bound");
        need(s.hi2, "a column bound");
        if (s.step < 1 || s.step2 < 1) fail("tiles loop with an empty tile");
        if (s.lo && !(s.lo->type.is_scalar() && s.lo->type.elem == ScalarType::int_)) fail("tiles loop from a row that is not an int");
        loop_body(s, {s.var, s.var2, s.var_t}, roles_seen);
        break;
      case StmtKind::ForRanks: loop_body(s, {s.var}, roles_seen); break;
      case StmtKind::ForRange:
        need(s.lo, "a lower bound");
        need(s.hi, "an upper bound");
        if (s.stride && !is_int_scalar(*s.stride)) fail("range loop with a step that is not an integer");
        loop_body(s, {s.var}, roles_seen);
        break;
      case StmtKind::ForChunks:
        need(s.lo, "a lower bound");
        need(s.hi, "an upper bound");
        if (s.step < 1) fail("chunks loop with step " + std::to_string(s.step));
        loop_body(s, {s.var}, roles_seen);
        break;
      case StmtKind::If:
        need(s.value, "a condition");
        body(s.body, false, roles_seen);
        body(s.else_body, false, roles_seen);
        break;
      case StmtKind::Role:
        if (!top) fail("a role below the top level");
        if (s.role != roles_seen++) fail("role statements out of order");
        body(s.body, false, roles_seen);
        break;
    }
  }

  const Kernel& k_;
  const Target& target_;
  std::vector<bool> defined_;
  std::vector<int> scope_;
  std::string err_;
};

}  // namespace

std::string verify(const Module& module) {
  const Target& target = module.target ? *module.target : default_target();
  for (const Kernel& k : module.kernels) {
    std::string err = Verifier(k, target).run();
    if (!err.empty()) return "kernel " + k.name + ": " + err;
  }
  return {};
}

}  // namespace irisc::tir
