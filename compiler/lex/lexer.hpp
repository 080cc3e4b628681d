// Lexer: SourceBuffer -> TokenBuffer. Malformed input (unterminated comments and
// strings, stray bytes, invalid UTF-8, bad number literals) becomes diagnostics and
// Error tokens; lexing always reaches EndOfFile.
#pragma once

#include "compiler/diagnostics/diagnostics.hpp"
#include "compiler/lex/token.hpp"

namespace irisc {

TokenBuffer lex(const SourceBuffer& source, Diagnostics& diags);
// The same for file `file` of the buffer (an import).
TokenBuffer lex(const SourceBuffer& source, int file, Diagnostics& diags);

}  // namespace irisc
