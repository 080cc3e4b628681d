// Shared by the TIR unit tests (test_tir_read.cpp, test_tir_verify.cpp): TIR built
// from Iris source by the front end, as the passes receive it.
#pragma once

#include <gtest/gtest.h>

#include "compiler/diagnostics/diagnostics.hpp"
#include "compiler/lex/lexer.hpp"
#include "compiler/parse/parser.hpp"
#include "compiler/sema/sema.hpp"
#include "compiler/tir/tir.hpp"

namespace tir_test {

// The checked TIR of `text`, which must have no errors.
inline irisc::tir::Module checked(const char* text) {
  using namespace irisc;
  static SourceBuffer* keep = nullptr;  // sema's ranges point into the source
  keep = new SourceBuffer("test.iris", text);
  Diagnostics diags(keep);
  TokenBuffer toks = lex(*keep, diags);
  ast::Module ast = parse(toks, diags);
  tir::Module m = check(ast, SemaOptions{}, diags);
  EXPECT_FALSE(diags.has_errors()) << diags.render(false);
  return m;
}

}  // namespace tir_test
