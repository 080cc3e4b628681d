// Shared by the TIR unit tests (test_tir_read.cpp, test_tir_verify.cpp): TIR built
// from Iris source by the front end, as the passes receive it.
#pragma once

#include <gtest/gtest.h>

#include <deque>
#include <memory>

#include "compiler/diagnostics/diagnostics.hpp"
#include "compiler/lex/lexer.hpp"
#include "compiler/parse/parser.hpp"
#include "compiler/sema/sema.hpp"
#include "compiler/tir/tir.hpp"

namespace tir_test {

// The checked TIR of `text`, which must have no errors.
inline irisc::tir::Module checked(const char* text) {
  using namespace irisc;
  // Sema's ranges point into the source, so every source stays alive.
  static std::deque<std::unique_ptr<SourceBuffer>> sources;
  const SourceBuffer& src = *sources.emplace_back(std::make_unique<SourceBuffer>("test.iris", text));
  Diagnostics diags(&src);
  TokenBuffer toks = lex(src, diags);
  ast::Module ast = parse(toks, diags);
  tir::Module m = check(ast, SemaOptions{}, diags);
  EXPECT_FALSE(diags.has_errors()) << diags.render(false);
  return m;
}

}  // namespace tir_test
