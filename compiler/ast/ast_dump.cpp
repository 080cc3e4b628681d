// Printing the syntax tree (see ast.hpp).
#include <algorithm>
#include <cstdio>

#include "compiler/ast/ast.hpp"

namespace irisc::ast {
namespace {

class Dumper {
 public:
  explicit Dumper(const SourceBuffer& src) : src_(src) {}
  std::string out;

  void line(int depth, const std::string& text, SourceRange r) {
    const LineCol lc = src_.line_col(r.begin);
    out += std::string(static_cast<std::size_t>(depth) * 2, ' ') + text + "  @" + std::to_string(lc.line) + ":" +
           std::to_string(lc.column) + "\n";
  }

  void expr(const Expr& e, int d) {
    switch (e.kind) {
      case ExprKind::IntLit: line(d, "Int " + std::to_string(e.int_value), e.range); break;
      case ExprKind::FloatLit: {
        char buf[64];
        std::snprintf(buf, sizeof buf, "Float %g", e.float_value);
        line(d, buf, e.range);
        break;
      }
      case ExprKind::BoolLit: line(d, std::string("Bool ") + (e.bool_value ? "true" : "false"), e.range); break;
      case ExprKind::Name: line(d, "Name " + e.name, e.range); break;
      case ExprKind::Unary: line(d, "Unary " + token_kind_spelling(e.op), e.range); break;
      case ExprKind::Binary: line(d, "Binary " + token_kind_spelling(e.op), e.range); break;
      case ExprKind::Call:
        line(d, "Call " + e.name + (e.type_arg ? "<" + e.type_arg->spelling() + ">" : ""),
             e.range);
        break;
      case ExprKind::Index: line(d, "Index", e.range); break;
      case ExprKind::Cast: line(d, "Cast " + e.type_arg->spelling(), e.range); break;
      case ExprKind::List: line(d, "List", e.range); break;
      case ExprKind::Slice: line(d, "Slice", e.range); break;
      case ExprKind::Comprehension: line(d, "Comprehension " + e.name, e.range); break;
    }
    for (const ExprPtr& a : e.args) expr(*a, d + 1);
    for (const NamedArg& n : e.named) {
      line(d + 1, n.name + ":", n.name_range);
      expr(*n.value, d + 2);
    }
  }

  void stmts(const std::vector<StmtPtr>& body, int d) {
    for (const StmtPtr& s : body) stmt(*s, d);
  }

  void stmt(const Stmt& s, int d) {
    switch (s.kind) {
      case StmtKind::Let:
        line(d, "Let " + s.name, s.range);
        expr(*s.value, d + 1);
        break;
      case StmtKind::Assign:
        line(d, "Assign " + s.name + " " + token_kind_spelling(s.assign_op), s.range);
        expr(*s.value, d + 1);
        break;
      case StmtKind::Expr:
        line(d, "ExprStmt", s.range);
        expr(*s.value, d + 1);
        break;
      case StmtKind::For: {
        std::string vars;
        if (s.index_var) vars += s.index_var->name + ", ";
        vars += "(";
        for (std::size_t i = 0; i < s.loop_vars.size(); ++i) vars += (i ? ", " : "") + s.loop_vars[i].name;
        vars += ")";
        line(d, "For " + vars + (s.persistent ? " persistent" : ""), s.range);
        expr(*s.iter, d + 1);
        stmts(s.body, d + 1);
        break;
      }
      case StmtKind::If:
        line(d, "If", s.range);
        expr(*s.cond, d + 1);
        line(d + 1, "Then", s.range);
        stmts(s.body, d + 2);
        if (!s.else_body.empty()) {
          line(d + 1, "Else", s.range);
          stmts(s.else_body, d + 2);
        }
        break;
      case StmtKind::Role:
        line(d, "Role " + s.name, s.range);
        expr(*s.value, d + 1);
        stmts(s.body, d + 1);
        break;
      case StmtKind::Return:
        line(d, "Return", s.range);
        if (s.value) expr(*s.value, d + 1);
        break;
    }
  }

 private:
  const SourceBuffer& src_;
};

}  // namespace

const char* scalar_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::f32: return "f32";
    case ScalarType::f16: return "f16";
    case ScalarType::bf16: return "bf16";
    case ScalarType::i32: return "i32";
    case ScalarType::i64: return "i64";
    case ScalarType::u32: return "u32";
    case ScalarType::u64: return "u64";
    case ScalarType::boolean: return "bool";
    case ScalarType::int_: return "int";
  }
  return "?";
}

ScalarType scalar_type_of(TokenKind k) {
  switch (k) {
    case TokenKind::TyF16: return ScalarType::f16;
    case TokenKind::TyBf16: return ScalarType::bf16;
    case TokenKind::TyI32: return ScalarType::i32;
    case TokenKind::TyI64: return ScalarType::i64;
    case TokenKind::TyU32: return ScalarType::u32;
    case TokenKind::TyU64: return ScalarType::u64;
    case TokenKind::TyBool: return ScalarType::boolean;
    case TokenKind::TyInt: return ScalarType::int_;
    default: return ScalarType::f32;
  }
}

std::string dump(const Module& module, const SourceBuffer& source) {
  Dumper d(source);
  for (const Import& i : module.imports) d.line(0, "Import \"" + i.path + "\"", i.range);
  auto item = [&](const Kernel& k, const char* what) {
    d.line(0, what + k.name, k.range);
    for (const ConstParam& c : k.consts) {
      d.line(1, "Const " + c.name + ": " + (c.is_type ? std::string("type") : c.type.spelling()) +
                    (c.default_type ? " = " + c.default_type->spelling() : ""),
             c.range);
      if (c.default_value) d.expr(*c.default_value, 2);
    }
    for (const Param& p : k.params) {
      const std::string kind = p.is_tensor ? "tensor<" : p.is_tile ? "tile<" : "";
      d.line(1,
             "Param " + p.name + ": " + (p.symmetric ? "symmetric " : "") +
                 (p.is_range ? "range" : kind + p.type.spelling() + (kind.empty() ? "" : ">")),
             p.range);
      for (const ExprPtr& dim : p.dims) d.expr(*dim, 2);
    }
    d.stmts(k.body, 1);
  };
  // In source order.
  std::vector<std::pair<const Kernel*, const char*>> items;
  for (const Kernel& k : module.functions) items.emplace_back(&k, "Fn ");
  for (const Kernel& k : module.kernels) items.emplace_back(&k, "Kernel ");
  std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.first->range.begin < b.first->range.begin; });
  for (const auto& [k, what] : items) item(*k, what);
  return d.out;
}

}  // namespace irisc::ast
