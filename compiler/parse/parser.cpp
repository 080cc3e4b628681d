// The .iris parser (see parser.hpp). Grammar (docs/language.md has the full EBNF):
//   file      = { import | kernel | fn } ;
//   import    = "import" STRING ";" ;
//   kernel    = "kernel" IDENT [ "<" const { "," const } ">" ] "(" [ param { "," param } ] ")" block ;
//   fn        = "fn" IDENT [ "<" const { "," const } ">" ] "(" [ param { "," param } ] ")" block ;
//   const     = IDENT ":" ( "type" [ "=" type ] | type [ "=" expr ] ) ;
//   param     = IDENT ":" ( [ "symmetric" ] "tensor" "<" type ">" "[" expr { "," expr } "]"
//                         | "tile" "<" type ">" [ "[" expr { "," expr } "]" ] | "range" | type ) ;
//   type      = a type keyword | IDENT (a type parameter) ;
//   stmt      = "let" IDENT "=" expr ";" | IDENT assign_op expr ";" | expr ";" | "return" [ expr ] ";"
//             | "for" vars "in" expr [ "persistent" ] block | "if" expr block [ "else" ( block | if ) ]
//             | "role" IDENT "(" IDENT ":" expr ")" block ;
//   expr      = precedence climbing over || && (== !=) (< <= > >=) (| ^ &) (<< >>) (+ -) (* / %),
//               unary - !, postfix call/index/"as" type.
#include "compiler/parse/parser.hpp"

#include <utility>

namespace irisc {
namespace {

using namespace ast;

class Parser {
 public:
  Parser(const TokenBuffer& toks, Diagnostics& diags) : toks_(toks), diags_(diags) {}

  Module run() {
    Module m;
    while (!at(TokenKind::EndOfFile) && !diags_.too_many_errors()) {
      if (at(TokenKind::Kernel)) {
        if (auto k = kernel()) m.kernels.push_back(std::move(*k));
      } else if (at(TokenKind::Fn)) {
        if (auto f = kernel()) m.functions.push_back(std::move(*f));
      } else if (at(TokenKind::Import)) {
        import_item(m);
      } else {
        error_expected_kernel();
        recover_to_next_kernel();
      }
    }
    return m;
  }

 private:
  // ---- token helpers ----------------------------------------------------------------
  const Token& peek(std::size_t ahead = 0) const {
    const std::size_t i = pos_ + ahead;
    return i < toks_.tokens.size() ? toks_.tokens[i] : toks_.tokens.back();
  }
  bool at(TokenKind k) const { return peek().kind == k; }
  // The start of a top-level item, where recovery stops.
  bool at_item() const { return at(TokenKind::Kernel) || at(TokenKind::Fn) || at(TokenKind::Import); }
  const Token& advance() {
    const Token& t = peek();
    if (pos_ + 1 < toks_.tokens.size()) ++pos_;
    return t;
  }
  bool accept(TokenKind k) {
    if (!at(k)) return false;
    advance();
    return true;
  }
  std::string found() const {
    const Token& t = peek();
    if (t.kind == TokenKind::Identifier || t.kind == TokenKind::IntLiteral || t.kind == TokenKind::FloatLiteral) {
      return token_kind_spelling(t.kind) + " '" + std::string(toks_.text(t)) + "'";
    }
    return token_kind_spelling(t.kind);
  }
  // Reports "expected X, found Y" once per position (error tokens were reported by the lexer).
  bool expect(TokenKind k, const char* what = nullptr) {
    if (bail_) return false;
    if (accept(k)) return true;
    report(DiagnosticKind::ExpectedToken, what ? std::string(what) : token_kind_spelling(k));
    return false;
  }
  void report(DiagnosticKind kind, const std::string& what) {
    if (bail_ || peek().kind == TokenKind::Error || last_error_pos_ == pos_) return;
    last_error_pos_ = pos_;
    if (kind == DiagnosticKind::ExpectedToken && what == "';'" && pos_ > 0) {
      // A missing ';' belongs at the end of what came before it, not on the next line.
      const std::uint32_t end = toks_.tokens[pos_ - 1].range.end;
      diags_.emit(kind, SourceRange{end, end}, {what, found()});
    } else if (kind == DiagnosticKind::ExpectedToken) {
      diags_.emit(kind, peek().range, {what, found()});
    } else {
      diags_.emit(kind, peek().range, {found()});
    }
  }
  void error_expected_kernel() {
    if (peek().kind != TokenKind::Error) diags_.emit(DiagnosticKind::ExpectedKernel, peek().range, {found()});
  }
  SourceRange from(SourceRange begin) const {
    const Token& prev = toks_.tokens[pos_ > 0 ? pos_ - 1 : 0];
    return {begin.begin, prev.range.end > begin.begin ? prev.range.end : begin.end};
  }

  // Nesting guard for recursive constructs.
  struct Depth {
    Parser& p;
    bool ok;
    explicit Depth(Parser& parser) : p(parser), ok(++parser.depth_ <= kMaxNesting && !parser.bail_) {
      if (!ok) parser.too_deep();
    }
    ~Depth() { --p.depth_; }
  };

  // Skips to just after the next ';' at this nesting level, or to a '}' (not consumed).
  void recover_statement() {
    int depth = 0;
    while (!at(TokenKind::EndOfFile)) {
      const TokenKind k = peek().kind;
      if (depth == 0 && k == TokenKind::Semi) {
        advance();
        return;
      }
      if (depth == 0 && k == TokenKind::RBrace) return;
      if (k == TokenKind::LBrace || k == TokenKind::LParen || k == TokenKind::LBracket) ++depth;
      if (k == TokenKind::RBrace || k == TokenKind::RParen || k == TokenKind::RBracket) --depth;
      if (depth < 0) return;
      advance();
    }
  }

  // ---- declarations -------------------------------------------------------------------
  std::optional<TypeRef> type() {
    if (is_type_keyword(peek().kind)) {
      const Token& t = advance();
      return TypeRef{scalar_type_of(t.kind), t.range, {}};
    }
    if (at(TokenKind::Identifier)) {  // a type parameter; sema resolves the name
      const Token& t = advance();
      return TypeRef{ScalarType::f32, t.range, std::string(toks_.text(t))};
    }
    report(DiagnosticKind::ExpectedType, "");
    return std::nullopt;
  }

  // A kernel or a function (the same shape); the keyword says which.
  std::optional<Kernel> kernel() {
    Kernel k;
    const bool is_fn = at(TokenKind::Fn);
    const SourceRange start = advance().range;  // 'kernel' or 'fn'
    if (!at(TokenKind::Identifier)) {
      expect(TokenKind::Identifier, is_fn ? "a function name" : "a kernel name");
      recover_to_next_kernel();
      return std::nullopt;
    }
    k.name = std::string(toks_.text(peek()));
    k.name_range = advance().range;
    if (accept(TokenKind::Less)) {
      do {
        if (at(TokenKind::Greater)) break;  // a trailing comma
        ConstParam c;
        if (!at(TokenKind::Identifier)) {
          expect(TokenKind::Identifier, "a compile-time parameter name");
          break;
        }
        c.name = std::string(toks_.text(peek()));
        c.range = advance().range;
        if (!expect(TokenKind::Colon)) break;
        if (at(TokenKind::Type)) {  // T: type [= f32]
          c.is_type = true;
          c.type = TypeRef{ScalarType::f32, advance().range, {}};
          if (accept(TokenKind::Eq)) {
            c.default_type = type();
            if (!c.default_type) break;
          }
          c.range = from(c.range);
          k.consts.push_back(std::move(c));
          continue;
        }
        auto t = type();
        if (!t) break;
        c.type = *t;
        if (accept(TokenKind::Eq)) c.default_value = expr_no_greater();
        c.range = from(c.range);
        k.consts.push_back(std::move(c));
      } while (accept(TokenKind::Comma));
      if (!expect(TokenKind::Greater)) recover_until(TokenKind::LParen);
    }
    if (!expect(TokenKind::LParen)) {
      recover_to_next_kernel();
      return std::nullopt;
    }
    if (!at(TokenKind::RParen)) {
      do {
        if (at(TokenKind::RParen)) break;  // a trailing comma
        if (auto p = param()) k.params.push_back(std::move(*p));
        else recover_until(TokenKind::RParen, TokenKind::Comma);
      } while (accept(TokenKind::Comma));
    }
    if (!expect(TokenKind::RParen)) recover_until(TokenKind::LBrace);
    if (!at(TokenKind::LBrace)) {
      expect(TokenKind::LBrace, is_fn ? "'{' to start the function body" : "'{' to start the kernel body");
      recover_to_next_kernel();
      return std::nullopt;
    }
    k.body = block();
    k.range = from(start);
    if (bail_) {
      bail_ = false;
      recover_to_next_kernel();
      return std::nullopt;
    }
    return k;
  }

  void recover_until(TokenKind a, TokenKind b = TokenKind::EndOfFile) {
    while (!at(TokenKind::EndOfFile) && !at(a) && !at(b) && !at_item()) advance();
  }
  void recover_to_next_kernel() {
    while (!at(TokenKind::EndOfFile) && !at_item()) advance();
  }

  // import "path";
  void import_item(Module& m) {
    const SourceRange start = advance().range;  // 'import'
    if (!at(TokenKind::StringLiteral)) {
      expect(TokenKind::StringLiteral, "a quoted file name, as in import \"ccl/common.iris\"");
      recover_to_next_kernel();
      return;
    }
    const std::string_view quoted = toks_.text(advance());
    Import imp;
    imp.path = std::string(quoted.substr(1, quoted.size() - 2));
    if (!expect(TokenKind::Semi)) recover_to_next_kernel();
    imp.range = from(start);
    m.imports.push_back(std::move(imp));
  }

  std::optional<Param> param() {
    Param p;
    if (!at(TokenKind::Identifier)) {
      expect(TokenKind::Identifier, "a parameter name");
      return std::nullopt;
    }
    p.name = std::string(toks_.text(peek()));
    p.range = advance().range;
    if (!expect(TokenKind::Colon)) return std::nullopt;
    p.symmetric = accept(TokenKind::Symmetric);
    if (!p.symmetric && at(TokenKind::Identifier) && toks_.text(peek()) == "tile" && peek(1).kind == TokenKind::Less) {
      advance();  // 'tile' (a function parameter)
      p.is_tile = true;
      advance();  // '<'
      auto t = type();
      if (!t) return std::nullopt;
      p.type = *t;
      if (!expect(TokenKind::Greater)) return std::nullopt;
      if (accept(TokenKind::LBracket)) {
        do {
          p.dims.push_back(expr());
        } while (accept(TokenKind::Comma));
        if (!expect(TokenKind::RBracket)) return std::nullopt;
      }
      p.range = from(p.range);
      return p;
    }
    if (!p.symmetric && at(TokenKind::Identifier) && toks_.text(peek()) == "range") {
      advance();  // 'range' (a function parameter)
      p.is_range = true;
      p.type = TypeRef{ScalarType::int_, p.range, {}};
      p.range = from(p.range);
      return p;
    }
    if (p.symmetric || at(TokenKind::Tensor)) {
      if (!expect(TokenKind::Tensor)) return std::nullopt;
      p.is_tensor = true;
      if (!expect(TokenKind::Less)) return std::nullopt;
      auto t = type();
      if (!t) return std::nullopt;
      p.type = *t;
      if (!expect(TokenKind::Greater)) return std::nullopt;
      if (!expect(TokenKind::LBracket)) return std::nullopt;
      do {
        p.dims.push_back(expr());
      } while (accept(TokenKind::Comma));
      if (!expect(TokenKind::RBracket)) return std::nullopt;
    } else {
      auto t = type();
      if (!t) return std::nullopt;
      p.type = *t;
    }
    p.range = from(p.range);
    return p;
  }

  // ---- statements -----------------------------------------------------------------------
  std::vector<StmtPtr> block() {
    std::vector<StmtPtr> out;
    Depth guard(*this);
    if (!expect(TokenKind::LBrace)) return out;
    if (!guard.ok) {
      skip_balanced_to_close();
      return out;
    }
    while (!bail_ && !at(TokenKind::RBrace) && !at(TokenKind::EndOfFile) && !diags_.too_many_errors()) {
      if (at(TokenKind::Kernel) || at(TokenKind::Fn) || at(TokenKind::Import)) break;  // a missing '}' before the next item
      const std::size_t before = pos_;
      if (StmtPtr s = statement()) out.push_back(std::move(s));
      if (pos_ == before) advance();  // always make progress
    }
    expect(TokenKind::RBrace);
    return out;
  }

  // After a nesting overflow: skip to the matching '}' without recursing.
  void skip_balanced_to_close() {
    int depth = 1;
    while (!at(TokenKind::EndOfFile) && depth > 0) {
      if (at(TokenKind::LBrace)) ++depth;
      if (at(TokenKind::RBrace) && --depth == 0) break;
      advance();
    }
    accept(TokenKind::RBrace);
  }

  StmtPtr make(StmtKind k, SourceRange r) {
    auto s = std::make_unique<Stmt>();
    s->kind = k;
    s->range = r;
    return s;
  }

  StmtPtr statement() {
    if (bail_) return nullptr;
    const SourceRange start = peek().range;
    switch (peek().kind) {
      case TokenKind::Let: {
        advance();
        auto s = make(StmtKind::Let, start);
        if (!at(TokenKind::Identifier)) {
          expect(TokenKind::Identifier, "a variable name");
          recover_statement();
          return nullptr;
        }
        s->name = std::string(toks_.text(peek()));
        s->name_range = advance().range;
        if (!expect(TokenKind::Eq)) {
          recover_statement();
          return nullptr;
        }
        s->value = expr();
        if (!expect(TokenKind::Semi)) recover_statement();
        s->range = from(start);
        return s;
      }
      case TokenKind::Return: {
        advance();
        auto s = make(StmtKind::Return, start);
        if (!at(TokenKind::Semi)) s->value = expr();
        if (!expect(TokenKind::Semi)) recover_statement();
        s->range = from(start);
        return s;
      }
      case TokenKind::For: return for_stmt();
      case TokenKind::If: return if_stmt();
      case TokenKind::Role: return role_stmt();
      case TokenKind::Identifier: {
        const TokenKind next = peek(1).kind;
        if (next == TokenKind::Eq || next == TokenKind::PlusEq || next == TokenKind::MinusEq ||
            next == TokenKind::StarEq || next == TokenKind::SlashEq) {
          auto s = make(StmtKind::Assign, start);
          s->name = std::string(toks_.text(peek()));
          s->name_range = advance().range;
          s->assign_op = advance().kind;
          s->value = expr();
          if (!expect(TokenKind::Semi)) recover_statement();
          s->range = from(start);
          return s;
        }
        break;
      }
      case TokenKind::LBrace:
      case TokenKind::Semi:
      case TokenKind::Else:
      case TokenKind::RParen:
      case TokenKind::RBracket:
        report(DiagnosticKind::ExpectedStatement, "");
        recover_statement();
        return nullptr;
      default: break;
    }
    auto s = make(StmtKind::Expr, start);
    s->value = expr();
    if (!expect(TokenKind::Semi)) recover_statement();
    s->range = from(start);
    return s;
  }

  bool loop_var(std::vector<LoopVar>& out) {
    if (!at(TokenKind::Identifier)) {
      expect(TokenKind::Identifier, "a loop variable");
      return false;
    }
    out.push_back({std::string(toks_.text(peek())), peek().range});
    advance();
    return true;
  }

  StmtPtr for_stmt() {
    const SourceRange start = advance().range;  // 'for'
    auto s = make(StmtKind::For, start);
    // for i in ... | for (m, n) in ... | for t, (m, n) in ...
    if (at(TokenKind::Identifier) && peek(1).kind == TokenKind::Comma) {
      std::vector<LoopVar> one;
      loop_var(one);
      s->index_var = one[0];
      advance();  // ','
    }
    bool ok = true;
    if (accept(TokenKind::LParen)) {
      do {
        ok = ok && loop_var(s->loop_vars);
      } while (ok && accept(TokenKind::Comma));
      ok = ok && expect(TokenKind::RParen);
    } else {
      ok = loop_var(s->loop_vars);
    }
    if (!ok || !expect(TokenKind::In)) {
      recover_statement();
      return nullptr;
    }
    s->iter = expr();
    s->persistent = accept(TokenKind::Persistent);
    s->body = block();
    s->range = from(start);
    return s;
  }

  StmtPtr if_stmt() {
    const SourceRange start = advance().range;  // 'if'
    Depth guard(*this);
    if (!guard.ok) return nullptr;
    auto s = make(StmtKind::If, start);
    s->cond = expr();
    s->body = block();
    if (accept(TokenKind::Else)) {
      if (at(TokenKind::If)) {
        if (guard.ok) {
          if (StmtPtr nested = if_stmt()) s->else_body.push_back(std::move(nested));
        }
      } else {
        s->else_body = block();
      }
    }
    s->range = from(start);
    return s;
  }

  StmtPtr role_stmt() {
    const SourceRange start = advance().range;  // 'role'
    auto s = make(StmtKind::Role, start);
    if (!at(TokenKind::Identifier)) {
      expect(TokenKind::Identifier, "a role name");
      recover_statement();
      return nullptr;
    }
    s->name = std::string(toks_.text(peek()));
    s->name_range = advance().range;
    if (!expect(TokenKind::LParen)) {
      recover_statement();
      return nullptr;
    }
    if (!(at(TokenKind::Identifier) && toks_.text(peek()) == "programs")) {
      expect(TokenKind::Identifier, "'programs:'");
      recover_statement();
      return nullptr;
    }
    advance();
    if (!expect(TokenKind::Colon)) {
      recover_statement();
      return nullptr;
    }
    s->value = expr();
    if (!expect(TokenKind::RParen)) recover_until(TokenKind::LBrace);
    s->body = block();
    s->range = from(start);
    return s;
  }

  // ---- expressions -----------------------------------------------------------------------
  ExprPtr make_expr(ExprKind k, SourceRange r) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->range = r;
    return e;
  }
  ExprPtr error_expr() { return make_expr(ExprKind::IntLit, peek().range); }

  static int precedence(TokenKind k, bool no_greater) {
    switch (k) {
      case TokenKind::OrOr: return 1;
      case TokenKind::AndAnd: return 2;
      case TokenKind::EqEq:
      case TokenKind::NotEq: return 3;
      case TokenKind::Less:
      case TokenKind::LessEq:
      case TokenKind::GreaterEq: return 4;
      case TokenKind::Greater: return no_greater ? -1 : 4;
      case TokenKind::Pipe: return 5;
      case TokenKind::Caret: return 6;
      case TokenKind::Amp: return 7;
      case TokenKind::Shl:
      case TokenKind::Shr: return 8;
      case TokenKind::Plus:
      case TokenKind::Minus: return 9;
      case TokenKind::Star:
      case TokenKind::Slash:
      case TokenKind::Percent: return 10;
      default: return -1;
    }
  }

  ExprPtr expr() { return binary(1, false); }
  // Inside `<...>` of a kernel's compile-time parameters, '>' closes the list.
  ExprPtr expr_no_greater() { return binary(1, true); }

  ExprPtr binary(int min_prec, bool no_greater) {
    Depth guard(*this);
    if (!guard.ok) return error_expr();
    ExprPtr lhs = unary(no_greater);
    // A chain a + b + c ... builds a left-deep tree that later phases walk recursively,
    // so each operator counts as a level of nesting.
    int chain = 0;
    while (true) {
      const TokenKind op = peek().kind;
      const int prec = precedence(op, no_greater);
      if (prec < min_prec) break;
      if (!chain_ok(++chain)) break;
      advance();
      ExprPtr rhs = binary(prec + 1, no_greater);
      auto e = make_expr(ExprKind::Binary, SourceRange::join(lhs->range, rhs->range));
      e->op = op;
      e->args.push_back(std::move(lhs));
      e->args.push_back(std::move(rhs));
      lhs = std::move(e);
    }
    return lhs;
  }

  ExprPtr unary(bool no_greater) {
    if (bail_) return error_expr();
    if (at(TokenKind::Minus) || at(TokenKind::Bang)) {
      Depth guard(*this);
      if (!guard.ok) return error_expr();
      const Token& t = advance();
      ExprPtr operand = unary(no_greater);
      auto e = make_expr(ExprKind::Unary, SourceRange::join(t.range, operand->range));
      e->op = t.kind;
      e->args.push_back(std::move(operand));
      return e;
    }
    return postfix(primary());
  }

  // True while `chain` more levels still fit under kMaxNesting; reports once otherwise
  // and skips the rest of the expression.
  bool chain_ok(int chain) {
    if (depth_ + chain <= kMaxNesting && !bail_) return true;
    too_deep();
    return false;
  }

  // Too deep: report once, then give up on this kernel (its tree would be truncated
  // anyway); parsing resumes at the next 'kernel' with nothing more reported.
  void too_deep() {
    if (!bail_) diags_.emit(DiagnosticKind::NestingTooDeep, peek().range, {"expressions and blocks", std::to_string(kMaxNesting), ""});
    bail_ = true;
  }
  ExprPtr postfix(ExprPtr e) {
    int chain = 0;
    while (true) {
      if ((at(TokenKind::LBracket) || at(TokenKind::As)) && !chain_ok(++chain)) return e;
      if (at(TokenKind::LBracket)) {
        advance();
        auto idx = make_expr(ExprKind::Index, e->range);
        idx->args.push_back(std::move(e));
        if (!at(TokenKind::RBracket)) {
          do {
            if (at(TokenKind::Colon)) {  // a whole-dimension slice: A[m, :]
              idx->args.push_back(make_expr(ExprKind::Slice, advance().range));
            } else {
              idx->args.push_back(expr());
            }
          } while (accept(TokenKind::Comma));
        }
        expect(TokenKind::RBracket);
        idx->range = from(idx->range);
        e = std::move(idx);
      } else if (at(TokenKind::As)) {
        advance();
        auto c = make_expr(ExprKind::Cast, e->range);
        c->args.push_back(std::move(e));
        c->type_arg = type();
        if (!c->type_arg) {
          // The would-be type name.
          if (at(TokenKind::Identifier) || at(TokenKind::IntLiteral) || at(TokenKind::FloatLiteral)) advance();
          c->type_arg = TypeRef{};
        }
        c->range = from(c->range);
        e = std::move(c);
      } else {
        return e;
      }
    }
  }

  ExprPtr primary() {
    const Token& t = peek();
    switch (t.kind) {
      case TokenKind::IntLiteral: {
        advance();
        auto e = make_expr(ExprKind::IntLit, t.range);
        e->int_value = t.int_value;
        return e;
      }
      case TokenKind::FloatLiteral: {
        advance();
        auto e = make_expr(ExprKind::FloatLit, t.range);
        e->float_value = t.float_value;
        return e;
      }
      case TokenKind::True:
      case TokenKind::False: {
        advance();
        auto e = make_expr(ExprKind::BoolLit, t.range);
        e->bool_value = t.kind == TokenKind::True;
        return e;
      }
      case TokenKind::LParen: {
        advance();
        ExprPtr inner = expr();
        expect(TokenKind::RParen);
        inner->range = from(t.range);
        return inner;
      }
      case TokenKind::LBracket: {
        advance();
        auto e = make_expr(ExprKind::List, t.range);
        if (!at(TokenKind::RBracket)) {
          do {
            e->args.push_back(expr());
          } while (accept(TokenKind::Comma));
        }
        expect(TokenKind::RBracket);
        e->range = from(t.range);
        return e;
      }
      case TokenKind::Identifier: return name_or_call();
      default:
        report(DiagnosticKind::ExpectedExpression, "");
        if (!at(TokenKind::Semi) && !at(TokenKind::RBrace) && !at(TokenKind::EndOfFile) &&
            !at(TokenKind::RParen)) {
          advance();
        }
        return error_expr();
    }
  }

  ExprPtr name_or_call() {
    const Token& t = advance();
    std::string name(toks_.text(t));
    std::optional<TypeRef> type_arg;
    // name<T>(...): a generic call when '<' is followed by a type keyword and '>', or
    // by a name, '>' and '(' (a type parameter: `zeros<T>(B)`).
    if (at(TokenKind::Less) && peek(2).kind == TokenKind::Greater &&
        (is_type_keyword(peek(1).kind) || (peek(1).kind == TokenKind::Identifier && peek(3).kind == TokenKind::LParen))) {
      advance();
      type_arg = type();
      advance();
      if (!at(TokenKind::LParen)) expect(TokenKind::LParen);
    }
    if (!at(TokenKind::LParen)) {
      auto e = make_expr(ExprKind::Name, t.range);
      e->name = std::move(name);
      return e;
    }
    advance();  // '('
    auto e = make_expr(ExprKind::Call, t.range);
    e->name = std::move(name);
    e->name_range = t.range;
    e->type_arg = type_arg;
    if (!at(TokenKind::RParen)) {
      do {
        if (at(TokenKind::RParen)) break;  // a trailing comma
        if (at(TokenKind::Identifier) && peek(1).kind == TokenKind::Colon) {
          NamedArg n;
          n.name = std::string(toks_.text(peek()));
          n.name_range = advance().range;
          advance();  // ':'
          if (is_type_keyword(peek().kind)) {  // acc: f32
            n.value = make_expr(ExprKind::Name, peek().range);
            n.value->name = std::string(toks_.text(advance()));
          } else {
            n.value = expr();
          }
          e->named.push_back(std::move(n));
        } else {
          e->args.push_back(expr());
          if (at(TokenKind::For)) e->args.back() = comprehension(std::move(e->args.back()));
        }
      } while (accept(TokenKind::Comma));
    }
    expect(TokenKind::RParen);
    e->range = from(t.range);
    return e;
  }

  // `value for name in iterable`, after its value: one argument of a call.
  ExprPtr comprehension(ExprPtr value) {
    auto c = make_expr(ExprKind::Comprehension, value->range);
    advance();  // 'for'
    if (!at(TokenKind::Identifier)) {
      expect(TokenKind::Identifier);
      return value;
    }
    c->name = std::string(toks_.text(peek()));
    c->name_range = advance().range;
    expect(TokenKind::In);
    c->args.push_back(std::move(value));
    c->args.push_back(expr());
    c->range = from(c->args[0]->range);
    return c;
  }

  const TokenBuffer& toks_;
  Diagnostics& diags_;
  std::size_t pos_ = 0;
  std::size_t last_error_pos_ = ~std::size_t{0};
  int depth_ = 0;
  bool bail_ = false;
};

}  // namespace

ast::Module parse(const TokenBuffer& tokens, Diagnostics& diags) { return Parser(tokens, diags).run(); }

}  // namespace irisc
