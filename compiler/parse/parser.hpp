// Parser: TokenBuffer -> ast::Module, by recursive descent. Syntax errors become
// diagnostics; the parser resynchronizes at ';' and '}' and keeps going, so one run
// reports several errors. Nesting deeper than kMaxNesting is an error, not a stack
// overflow.
#pragma once

#include "compiler/ast/ast.hpp"
#include "compiler/diagnostics/diagnostics.hpp"
#include "compiler/lex/token.hpp"

namespace irisc {

inline constexpr int kMaxNesting = 200;

ast::Module parse(const TokenBuffer& tokens, Diagnostics& diags);

}  // namespace irisc
