// Tokens and the TokenBuffer the lexer produces.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/source/source_buffer.hpp"

namespace irisc {

enum class TokenKind : std::uint8_t {
#define IRISC_TOKEN(Name, Text) Name,
#include "compiler/lex/token_kinds.def"
  Count
};

// "identifier", "'kernel'", "'('": how a kind reads in "expected X, found Y".
std::string token_kind_spelling(TokenKind kind);
// The token's own name in the .def ("LParen"), for token dumps.
const char* token_kind_name(TokenKind kind);
bool is_type_keyword(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::Error;
  SourceRange range;
  std::uint64_t int_value = 0;  // IntLiteral
  double float_value = 0;       // FloatLiteral
};

struct TokenBuffer {
  const SourceBuffer* source = nullptr;
  std::vector<Token> tokens;  // always ends with EndOfFile
  std::string_view text(const Token& t) const { return source->slice(t.range); }
  // One token per line: "1:1 Kernel 'kernel'" (for --emit=tokens and golden tests).
  std::string dump() const;
};

}  // namespace irisc
