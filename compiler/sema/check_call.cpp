// Built-in calls: one table of names, each with its handler (check_call_*.cpp by
// feature), and what every call shares (the dispatch, argument counts, the value of a
// call made as a statement).
#include "compiler/sema/sema_state.hpp"

namespace irisc::sema {

using namespace tir;

namespace {

struct Builtin {
  const char* name;
  KernelChecker::Handler handler;  // null: a name of the language that is no call (loops)
  int variant = 0;                 // passed on in CallSite (the atomics' AtomicOp)
};

const Builtin* find_builtin(std::string_view name) {
  using K = KernelChecker;
  auto atomic = [](const char* n, AtomicOp op) { return Builtin{n, &K::builtin_atomic, static_cast<int>(op)}; };
  static const Builtin kBuiltins[] = {
      // memory (check_call_memory.cpp)
      {"store", &K::builtin_store}, {"put", &K::builtin_store}, {"get", &K::builtin_store}, {"load", &K::builtin_load},
      {"send", &K::builtin_send}, {"receive", &K::builtin_receive},
      atomic("atomic_add", AtomicOp::add), atomic("atomic_sub", AtomicOp::sub), atomic("atomic_and", AtomicOp::and_),
      atomic("atomic_or", AtomicOp::or_), atomic("atomic_xor", AtomicOp::xor_), atomic("atomic_min", AtomicOp::min),
      atomic("atomic_max", AtomicOp::max), atomic("atomic_xchg", AtomicOp::xchg), atomic("atomic_cas", AtomicOp::cas),
      // ordering (check_call_signals.cpp)
      {"signal", &K::builtin_signal}, {"fence", &K::builtin_fence}, {"wait", &K::builtin_wait},
      // tiles (check_call_tiles.cpp)
      {"fill", &K::builtin_fill}, {"zeros", &K::builtin_fill}, {"ones", &K::builtin_fill}, {"index", &K::builtin_index},
      {"start", &K::builtin_range_bound}, {"extent", &K::builtin_range_bound}, {"broadcast", &K::builtin_broadcast},
      {"select", &K::builtin_select}, {"gathered", &K::builtin_gathered},
      // arithmetic (check_call_math.cpp)
      {"sum", &K::builtin_reduce}, {"max", &K::builtin_max_min}, {"min", &K::builtin_max_min},
      {"abs", &K::builtin_unary}, {"sqrt", &K::builtin_unary}, {"exp", &K::builtin_unary}, {"log", &K::builtin_unary},
      // matmul (check_call_matmul.cpp)
      {"matmul", &K::builtin_matmul},
      // loops and their ranges (check_stmt.cpp), not calls
      {"blocks", nullptr}, {"tiles", nullptr}, {"chunks", nullptr}, {"range", nullptr}, {"ranks", nullptr},
      {"peers", nullptr},
  };
  for (const Builtin& b : kBuiltins) {
    if (name == b.name) return &b;
  }
  return nullptr;
}

}  // namespace

bool is_builtin_name(std::string_view name) { return find_builtin(name) != nullptr; }

ValuePtr KernelChecker::to_element(ValuePtr v, ScalarType elem, SourceRange where) {
  if (v->error || v->type.elem == elem) return v;
  if (v->kind == ValueKind::Const || (v->type.elem == ScalarType::int_ && is_integer(elem))) {
    return coerce(v, elem, where);
  }
  diags_.emit(DiagnosticKind::StoreTypeMismatch, where,
              {type_name(v->type), "a tensor of " + std::string(ast::scalar_type_name(elem)), ast::scalar_type_name(elem)});
  return error_value(where);
}

std::optional<FlagOperands> KernelChecker::flag_operands(const std::string& fn, const ast::Expr& flag_expr,
                                                         const ast::Expr& value_expr) {
  auto flag = view(flag_expr, fn);
  if (!flag) return std::nullopt;
  if (flag->size) {
    diags_.emit(DiagnosticKind::ExpectedScalarElement, flag_expr.range, {fn});
    return std::nullopt;
  }
  const Param& fp = out_.params[static_cast<std::size_t>(flag->param)];
  if (!is_integer(fp.elem) || (byte_size(fp.elem) != 4 && byte_size(fp.elem) != 8)) {
    diags_.emit(DiagnosticKind::AtomicTypeUnsupported, flag_expr.range,
                {fn, std::string(ast::scalar_type_name(fp.elem)) + " flags (use u32, i32, u64 or i64)"});
    return std::nullopt;
  }
  ValuePtr value = expr(value_expr);
  if (value->error) return std::nullopt;
  if (!value->type.is_scalar()) {
    diags_.emit(DiagnosticKind::ExpectedScalarElement, value_expr.range, {fn});
    return std::nullopt;
  }
  value = coerce(value, fp.elem, value_expr.range);
  if (value->error) return std::nullopt;
  return FlagOperands{*flag, value};
}

// `axis: 0` or `axis: 1`; -1 after a diagnostic.
int KernelChecker::axis_arg(const ast::Expr& a) {
  const int before = diags_.error_count();
  ValuePtr v = expr(a);
  if (diags_.error_count() != before) return -1;
  if (v->kind != ValueKind::Const || !is_integer(v->type.elem) || (v->int_value != 0 && v->int_value != 1)) {
    diags_.emit(DiagnosticKind::BadNamedValue, a.range, {std::string(diags_.source()->slice(a.range)), "axis", "0 (down the columns) or 1 (along the rows)"});
    return -1;
  }
  return static_cast<int>(v->int_value);
}


bool KernelChecker::want_args(const CallSite& c, std::size_t n) {
  if (c.e.args.size() == n) return true;
  diags_.emit(DiagnosticKind::WrongArgumentCount, c.e.range, {c.e.name, std::to_string(n), std::to_string(c.e.args.size())});
  return false;
}

ValuePtr KernelChecker::no_value(const CallSite& c) {
  if (!c.as_statement) diags_.emit(DiagnosticKind::NoValue, c.e.range, {c.e.name});
  return error_value(c.e.range);
}

KernelChecker::Called KernelChecker::unknown_function(const CallSite& c) {
  diags_.emit(DiagnosticKind::UnknownFunction, c.e.name_range, {c.e.name});
  for (const auto& a : c.e.args) expr(*a);  // still report errors inside
  return {error_value(c.e.range), true};
}

ValuePtr KernelChecker::call(const ast::Expr& e, bool as_statement, std::vector<StmtPtr>* stmts) {
  if (auto f = functions_.find(e.name); f != functions_.end()) return inline_call(*f->second, e, as_statement);
  const Builtin* b = find_builtin(e.name);
  const CallSite c{e, as_statement, stmts, b ? b->variant : 0};
  const auto [result, final] = b && b->handler ? (this->*b->handler)(c) : unknown_function(c);
  if (final) return result;
  if (as_statement) {
    // A value computed as a statement: an atomic (kept for its effect) or a pure value
    // (kept, but it has no effect).
    auto s = std::make_unique<Stmt>();
    s->kind = StmtKind::Eval;
    s->range = e.range;
    s->value = result;
    stmts->push_back(std::move(s));
    return nullptr;
  }
  return result;
}

}  // namespace irisc::sema
