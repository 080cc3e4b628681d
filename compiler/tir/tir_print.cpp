// TIR printer (see tir.hpp). What it writes, tir_read.hpp reads back: the listing is
// lossless for every module the compiler produces.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "compiler/tir/tir.hpp"
#include "compiler/tir/tir_read.hpp"
#include "compiler/tir/visit.hpp"

namespace irisc::tir {
namespace {

// The names variables are listed under. tir_read resolves a name to its innermost
// definition in scope, which is not always the variable a reference means: an inlined
// function's parameter becomes a `let` of its name, which hides a variable of that name
// that the caller uses after the call in the same scope (`e` in a kernel that calls
// hear(flags, 0, mark + 1) and then uses its own `e`). Such a variable is listed under a
// name of its own (`e_1`), so that the listing reads back as the same kernel; every
// other variable keeps its name.
class ListedNames {
 public:
  explicit ListedNames(const Kernel& k) {
    for (const Var& v : k.vars) names.push_back(v.name);
    // A renamed variable leaves its old name's scope, which only ever makes another
    // reference resolve where it means: a few rounds at most.
    for (int round = 0; round < 8; ++round) {
      hidden_.clear();
      body(k.body);
      if (hidden_.empty()) break;
      for (int v : hidden_) names[static_cast<std::size_t>(v)] = fresh(k.vars[static_cast<std::size_t>(v)].name);
    }
  }
  std::vector<std::string> names;

 private:
  void refer(int v) {
    if (v < 0 || static_cast<std::size_t>(v) >= names.size()) return;
    auto it = visible_.find(names[static_cast<std::size_t>(v)]);
    if (it == visible_.end() || it->second.back() != v) hidden_.insert(v);
  }
  void define(int v) {
    if (v < 0 || static_cast<std::size_t>(v) >= names.size()) return;
    defined_.push_back(v);
    visible_[names[static_cast<std::size_t>(v)]].push_back(v);
  }
  void close(std::size_t mark) {
    for (; defined_.size() > mark; defined_.pop_back()) {
      auto it = visible_.find(names[static_cast<std::size_t>(defined_.back())]);
      it->second.pop_back();
      if (it->second.empty()) visible_.erase(it);
    }
  }
  // In the reader's order: a statement's values, then what it defines (a loop's
  // variables after its bounds), then its bodies, each a scope of its own.
  void body(const std::vector<StmtPtr>& stmts) {
    const std::size_t mark = defined_.size();
    for (const StmtPtr& s : stmts) {
      for_each_value(*s, [&](const ValuePtr& v) {
        walk(*v, [&](const Value& x) {
          if (x.kind == ValueKind::VarRef) refer(x.var);
        });
      });
      if (s->kind == StmtKind::Assign) refer(s->var);
      const std::size_t loop = defined_.size();
      switch (s->kind) {
        case StmtKind::Let: define(s->var); break;
        case StmtKind::ForTiles: define(s->var_t); define(s->var); define(s->var2); break;
        case StmtKind::ForBlocks:
        case StmtKind::ForRanks:
        case StmtKind::ForRange:
        case StmtKind::ForChunks: define(s->var); break;
        default: break;
      }
      if (s->kind != StmtKind::Let) {
        for_each_body(*s, [&](const std::vector<StmtPtr>& b) { body(b); });
        close(loop);
      }
    }
    close(mark);
  }
  std::string fresh(const std::string& base) {
    std::set<std::string> taken(names.begin(), names.end());
    for (int i = 1;; ++i) {
      std::string n = base + "_" + std::to_string(i);
      if (!taken.count(n)) return n;
    }
  }
  std::vector<int> defined_;
  std::map<std::string, std::vector<int>> visible_;
  std::set<int> hidden_;
};

class Printer {
 public:
  // `whole`: the kernel is listed, with ListedNames; else one value of it, under the
  // variables' own names (the verifier's messages).
  Printer(const Kernel& k, bool positions, bool whole) : k_(k), positions_(positions) {
    if (whole) {
      names_ = ListedNames(k).names;
    } else {
      for (const Var& v : k.vars) names_.push_back(v.name);
    }
  }
  std::string out;

  // Lookups that survive malformed IR: the verifier prints the nodes it rejects.
  template <class T>
  static const T* at(const std::vector<T>& list, int i) {
    return i >= 0 && static_cast<std::size_t>(i) < list.size() ? &list[static_cast<std::size_t>(i)] : nullptr;
  }
  std::string var(int v) const {
    const std::string* x = at(names_, v);
    return "%" + (x ? *x : "<bad var " + std::to_string(v) + ">");
  }
  std::string param_name(int p) const {
    const Param* x = at(k_.params, p);
    return x ? x->name : "<bad param " + std::to_string(p) + ">";
  }
  std::string value(const ValuePtr& p) const { return p ? value(*p) : "<null>"; }
  std::string operand(const Value& v, std::size_t i) const {
    return i < v.operands.size() ? value(v.operands[i]) : "<missing>";
  }

  std::string view(const View& v) const {
    std::string s = (v.gathered ? "gathered " : "") + param_name(v.param) + "[" + value(v.offset);
    if (v.slice_dim == 1) s += " rows " + std::to_string(v.rows) + " valid " + value(v.row_extent) + " x all " + value(v.full);
    else if (v.slice_dim == 0) s += " all " + value(v.full) + " x cols " + std::to_string(v.size) + " valid " + value(v.extent);
    else if (v.rows) {
      // `x` follows a call's `)` directly; after a name or number it needs spaces.
      const std::string rows = value(v.row_extent);
      s += " +: " + std::to_string(v.rows) + "x" + std::to_string(v.size) + " valid " + rows +
           (!rows.empty() && rows.back() == ')' ? "x" : " x ") + value(v.extent);
    }
    else if (v.size) s += " +: " + std::to_string(v.size) + " valid " + value(v.extent);
    if (v.ld) s += " ld " + value(v.ld);
    // With positions (a host code object's listing, which the host backend checks with),
    // each dimension's first index too.
    if (positions_ && !v.index.empty()) {
      s += " at (";
      for (std::size_t i = 0; i < v.index.size(); ++i) s += (i ? ", " : "") + value(v.index[i]);
      s += ")";
    }
    return s + "]";
  }

  // With positions, a value whose source range is not empty starts with it.
  std::string value(const Value& v) const {
    if (!positions_ || v.range.end <= v.range.begin) return value_text(v);
    return "@" + std::to_string(v.range.begin) + ":" + std::to_string(v.range.end) + " " + value_text(v);
  }

  std::string value_text(const Value& v) const {
    switch (v.kind) {
      case ValueKind::Const: {
        if (is_float(v.type.elem)) {
          // %g, or all 17 digits where %g would not read back as the same double.
          char buf[64];
          std::snprintf(buf, sizeof buf, "%g", v.float_value);
          if (std::strtod(buf, nullptr) != v.float_value) std::snprintf(buf, sizeof buf, "%.17g", v.float_value);
          return std::string(buf) + ":" + ast::scalar_type_name(v.type.elem);
        }
        return std::to_string(v.int_value) + ":" + ast::scalar_type_name(v.type.elem);
      }
      case ValueKind::ParamRef: return "$" + param_name(v.param);
      case ValueKind::SizeRef: {
        const std::string* n = at(k_.size_symbols, v.size);
        return "#" + (n ? *n : "<bad size " + std::to_string(v.size) + ">");
      }
      case ValueKind::VarRef: return var(v.var);
      case ValueKind::BuiltinRef: return name(v.builtin);
      case ValueKind::RangeStart: return "start" + typed(v) + "(" + operand(v, 0) + ")";
      case ValueKind::RangeExtent: return "extent" + typed(v) + "(" + operand(v, 0) + ")";
      case ValueKind::Unary: return name(v.unop) + typed(v) + "(" + operand(v, 0) + ")";
      case ValueKind::Binary:
        return name(v.binop) + typed(v) + "(" + operand(v, 0) + ", " + operand(v, 1) + ")";
      case ValueKind::Cast: return "cast<" + to_string(v.type) + ">(" + operand(v, 0) + ")";
      case ValueKind::Load:
      case ValueKind::LoadFlagged:
      case ValueKind::Receive:
      case ValueKind::Matmul:
      case ValueKind::Atomic: return memory_text(v);
      case ValueKind::Fill: return "fill<" + to_string(v.type) + ">(" + operand(v, 0) + ")";
      case ValueKind::Iota: return "index" + typed(v) + "(" + operand(v, 0) + ")";
      case ValueKind::Reduce:
        return name(v.reduce_op) + typed(v) + "(" + operand(v, 0) + (v.axis >= 0 ? ", axis " + std::to_string(v.axis) : "") + ")";
      case ValueKind::Broadcast:
        return "broadcast<" + to_string(v.type) + ">(" + operand(v, 0) + ", axis " + std::to_string(v.axis) + ")";
      case ValueKind::Select:
        return "select" + typed(v) + "(" + operand(v, 0) + ", " + operand(v, 1) + ", " + operand(v, 2) + ")";
    }
    return "?";
  }

  // The values that access memory through views, apart from value_text: a deeply nested
  // expression recurses through value_text, whose frame holds every case's temporaries
  // (sanitizer builds do not overlap them), so the cases with the most stay out of it.
  [[gnu::noinline]] std::string memory_text(const Value& v) const {
    switch (v.kind) {
      case ValueKind::Load:
        return "load<" + to_string(v.type) + ">(" + view(v.view) + (v.rank ? ", from " + value(v.rank) : "") +
               (v.operands.empty() ? "" : ", other " + operand(v, 0)) + ")";
      case ValueKind::LoadFlagged:
        return "load_flagged<" + to_string(v.type) + ">(" + view(v.view) + ", flag " + operand(v, 0) + ")";
      case ValueKind::Receive: return "receive<" + to_string(v.type) + ">(" + view(v.view) + ")";
      case ValueKind::Matmul:
        return "matmul<" + to_string(v.type) + (v.matmul == MatmulLowering::unchosen ? "" : std::string(", ") + name(v.matmul)) +
               ">(" + view(v.view) + ", " + view(v.view_b) + ")";
      case ValueKind::Atomic: {
        const std::string t = typed(v);
        std::string s = std::string("atomic_") + name(v.atomic_op) + "<" + name(v.order) + ", " + name(v.scope) +
                        (t.empty() ? "" : ", " + t.substr(1, t.size() - 2)) + ">(" + view(v.view);
        for (const ValuePtr& o : v.operands) s += ", " + value(o);
        if (v.rank) s += ", to " + value(v.rank);
        return s + ")";
      }
      default: return "?";
    }
  }

  // "<type>" where the value's type is not the one the reader would imply, else "".
  std::string typed(const Value& v) const {
    const std::optional<Type> t = implied_type(k_, v);
    return t && !(*t == v.type) ? "<" + to_string(v.type) + ">" : "";
  }

  void line(int d, const std::string& s) {
    out += std::string(static_cast<std::size_t>(d) * 2, ' ') + at_ + s + "\n";
    at_.clear();
  }

  void stmts(const std::vector<StmtPtr>& body, int d) {
    for (const StmtPtr& s : body) stmt(*s, d);
  }

  void stmt(const Stmt& s, int d) {
    // With positions, the statement's source range before its first line: `@BEGIN:END `.
    if (positions_) at_ = "@" + std::to_string(s.range.begin) + ":" + std::to_string(s.range.end) + " ";
    switch (s.kind) {
      case StmtKind::Let:
        line(d, "let " + var(s.var) + ": " + (at(k_.vars, s.var) ? to_string(at(k_.vars, s.var)->type) : std::string("?")) + " = " +
                    value(s.value));
        break;
      case StmtKind::Assign: line(d, var(s.var) + " = " + value(s.value)); break;
      case StmtKind::Store:
        line(d, "store " + view(s.view) + " <- " + value(s.value) + (s.rank ? ", to " + value(s.rank) : ""));
        break;
      case StmtKind::StoreFlagged:
        line(d, "store_flagged " + view(s.view) + " <- " + value(s.value) + (s.rank ? ", to " + value(s.rank) : "") +
                    ", flag " + value(s.flag));
        break;
      case StmtKind::Send:
        line(d, "send " + view(s.view) + " <- " + value(s.value) + (s.rank ? ", to " + value(s.rank) : ""));
        break;
      case StmtKind::Signal:
        line(d, std::string("signal<") + name(s.order) + ", " + name(s.scope) + ">" +
                    (s.signal_op == SignalOp::add ? " add " : " set ") + view(s.view) + " <- " + value(s.value) +
                    (s.rank ? ", to " + value(s.rank) : ""));
        break;
      case StmtKind::Wait:
        line(d, std::string("wait<") + name(s.order) + ", " + name(s.scope) + "> " + view(s.view) + " " + name(s.cmp) +
                    " " + value(s.value));
        break;
      case StmtKind::Fence: line(d, std::string("fence<") + name(s.order) + ", " + name(s.scope) + ">"); break;
      case StmtKind::Eval: line(d, "eval " + value(s.value)); break;
      case StmtKind::ForBlocks:
        line(d, "for " + var(s.var) + " in blocks(" + value(s.hi) + ", " + std::to_string(s.step) + ")" +
                    (s.persistent ? " persistent" : "") + " {");
        stmts(s.body, d + 1);
        line(d, "}");
        break;
      case StmtKind::ForTiles:
        line(d, "for " + (s.var_t >= 0 ? var(s.var_t) + ", " : std::string()) + "(" + var(s.var) + ", " + var(s.var2) +
                    ") in tiles([" + value(s.hi) + ", " + value(s.hi2) + "], [" + std::to_string(s.step) + ", " +
                    std::to_string(s.step2) + "]" + (s.lo ? ", from_row: " + value(s.lo) : std::string()) + ")" +
                    (s.persistent ? " persistent" : "") + " {");
        stmts(s.body, d + 1);
        line(d, "}");
        break;
      case StmtKind::ForRanks:
        line(d, "for " + var(s.var) + " in " + (s.peers_only ? "peers" : "ranks") + " {");
        stmts(s.body, d + 1);
        line(d, "}");
        break;
      case StmtKind::ForRange:
        line(d, "for " + var(s.var) + " in range(" + value(s.lo) + ", " + value(s.hi) +
                    (s.stride ? ", " + value(s.stride) : std::string()) + ") {");
        stmts(s.body, d + 1);
        line(d, "}");
        break;
      case StmtKind::ForChunks:
        line(d, "for " + var(s.var) + " in chunks(" + value(s.lo) + ", " + value(s.hi) + ", " + std::to_string(s.step) + ") {");
        stmts(s.body, d + 1);
        line(d, "}");
        break;
      case StmtKind::If:
        line(d, "if " + value(s.value) + " {");
        stmts(s.body, d + 1);
        if (!s.else_body.empty()) {
          line(d, "} else {");
          stmts(s.else_body, d + 1);
        }
        line(d, "}");
        break;
      case StmtKind::Role:
        line(d, "role " + (at(k_.roles, s.role) ? at(k_.roles, s.role)->name + " = " + value(at(k_.roles, s.role)->programs)
                                                 : "<bad role " + std::to_string(s.role) + ">") +
                    " {");
        stmts(s.body, d + 1);
        line(d, "}");
        break;
    }
  }

 private:
  const Kernel& k_;
  bool positions_ = false;
  std::vector<std::string> names_;  // ListedNames
  std::string at_;  // the position the next line starts with
};

}  // namespace

std::string print(const Module& module) { return print(module, false); }

std::string print(const Module& module, bool positions) {
  std::string out;
  for (const Kernel& k : module.kernels) {
    Printer p(k, positions, true);
    std::string head = "kernel " +
                       (positions ? "@" + std::to_string(k.range.begin) + ":" + std::to_string(k.range.end) + " "
                                  : std::string()) +
                       k.name + "(";
    for (std::size_t i = 0; i < k.params.size(); ++i) {
      const Param& prm = k.params[i];
      head += (i ? ", " : "") + prm.name + ": ";
      if (prm.is_tensor) {
        head += std::string(prm.symmetric ? "symmetric " : "") + "tensor<" + ast::scalar_type_name(prm.elem) + ">[";
        for (std::size_t d = 0; d < prm.dims.size(); ++d) head += (d ? ", " : "") + p.value(prm.dims[d]);
        head += "]";
      } else {
        head += ast::scalar_type_name(prm.elem);
      }
    }
    head += ")";
    // The hidden size arguments' order, where it is not the order of first use above.
    std::vector<std::string> first_use;
    for (const Param& prm : k.params) {
      for (const ValuePtr& d : prm.dims) {
        walk(*d, [&](const Value& x) {
          if (x.kind != ValueKind::SizeRef || x.size < 0 || x.size >= static_cast<int>(k.size_symbols.size())) return;
          const std::string& n = k.size_symbols[static_cast<std::size_t>(x.size)];
          if (std::find(first_use.begin(), first_use.end(), n) == first_use.end()) first_use.push_back(n);
        });
      }
    }
    if (first_use != k.size_symbols) {
      head += " sizes(";
      for (std::size_t i = 0; i < k.size_symbols.size(); ++i) head += (i ? ", #" : "#") + k.size_symbols[i];
      head += ")";
    }
    if (!k.constants.empty()) {
      head += " with";
      for (const auto& [n, v] : k.constants) head += " " + n + "=" + std::to_string(v);
    }
    if (k.grid) head += " grid " + p.value(k.grid);
    p.out += head + " {\n";
    std::string launch;
    if (k.layouts_chosen || k.block_threads != 256) launch += ", threads " + std::to_string(k.block_threads);
    if (k.min_blocks_per_sm) launch += ", blocks/sm " + std::to_string(k.min_blocks_per_sm);
    if (k.dynamic_shared_bytes) launch += ", dynamic shared " + std::to_string(k.dynamic_shared_bytes);
    if (k.gemm.stages) {
      launch += ", gemm stages " + std::to_string(k.gemm.stages) + " group_m " + std::to_string(k.gemm.group_m) +
                " cluster " + std::to_string(k.gemm.cluster);
      if (k.gemm.tma_stores) launch += " tma_stores";
      if (k.gemm.role >= 0 && k.gemm.role < static_cast<int>(k.roles.size())) {
        launch += " role " + k.roles[static_cast<std::size_t>(k.gemm.role)].name + " others " +
                  std::to_string(k.gemm.others_threads);
      }
    }
    if (k.layouts_chosen) {
      launch += ", layouts";
      for (const Layout& l : k.layouts) {
        launch += " " + (l.rows ? std::to_string(l.rows) + "x" + std::to_string(l.cols) +
                                      (l.accumulator ? std::string("/acc")
                                       : l.vec != 1  ? "/" + std::to_string(l.vec)
                                                     : std::string())
                                : std::to_string(l.cols) + "/" + std::to_string(l.vec));
      }
    }
    if (!launch.empty()) p.line(1, "launch" + launch.substr(1));
    p.stmts(k.body, 1);
    p.out += "}\n";
    out += p.out;
  }
  return out;
}

std::string print(const Kernel& kernel, const Value& value) { return Printer(kernel, false, false).value(value); }

}  // namespace irisc::tir
