// Lexer: SourceBuffer -> TokenBuffer. Malformed input (unterminated comments and
// strings, stray bytes, invalid UTF-8, bad number literals) becomes diagnostics and
// Error tokens; lexing always reaches EndOfFile.
#pragma once

#include "compiler/diagnostics/diagnostics.hpp"
#include "compiler/lex/token.hpp"

namespace irisc {

TokenBuffer lex(const SourceBuffer& source, Diagnostics& diags);

}  // namespace irisc
