// The .iris lexer (see lexer.hpp).
#include "compiler/lex/lexer.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace irisc {
namespace {

struct KindInfo {
  const char* name;
  const char* text;
  bool keyword, punct;
};
const KindInfo kKinds[] = {
#define IRISC_TOKEN(Name, Text) {#Name, Text, false, false},
#define IRISC_KEYWORD(Name, Text) {#Name, Text, true, false},
#define IRISC_PUNCT(Name, Text) {#Name, Text, false, true},
#include "compiler/lex/token_kinds.def"
};

bool is_ident_start(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(unsigned char c) { return is_ident_start(c) || is_digit(c); }
bool is_hex(unsigned char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Length of the valid UTF-8 sequence at s[i], or 0 if it is not valid.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  }
  const auto c1 = static_cast<unsigned char>(s[i + 1]);
  if (c == 0xE0 && c1 < 0xA0) return 0;  // overlong
  if (c == 0xED && c1 >= 0xA0) return 0;  // surrogates
  if (c == 0xF0 && c1 < 0x90) return 0;  // overlong
  if (c == 0xF4 && c1 >= 0x90) return 0;  // > U+10FFFF
  return n;
}

class Lexer {
 public:
  // Lexes one file of `src`: offsets stay those of the whole buffer.
  Lexer(const SourceBuffer& src, int file, Diagnostics& diags)
      : src_(src), text_(src.text().substr(0, src.file_range(file).end)), diags_(diags), pos_(src.file_range(file).begin) {}

  TokenBuffer run() {
    TokenBuffer out;
    out.source = &src_;
    while (true) {
      skip_space_and_comments();
      if (pos_ >= text_.size()) break;
      out.tokens.push_back(next());
    }
    out.tokens.push_back(Token{TokenKind::EndOfFile, range(pos_, pos_)});
    return out;
  }

 private:
  static SourceRange range(std::size_t b, std::size_t e) {
    return {static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(e)};
  }

  void skip_space_and_comments() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        ++pos_;
      } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') {
        const std::size_t start = pos_;
        const std::size_t close = text_.find("*/", pos_ + 2);
        if (close == std::string_view::npos) {
          diags_.emit(DiagnosticKind::UnterminatedBlockComment, range(start, start + 2));
          pos_ = text_.size();
        } else {
          pos_ = close + 2;
        }
      } else {
        return;
      }
    }
  }

  Token next() {
    const std::size_t start = pos_;
    const auto c = static_cast<unsigned char>(text_[pos_]);
    if (is_ident_start(c)) {
      while (pos_ < text_.size() && is_ident_char(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      const std::string_view word = text_.substr(start, pos_ - start);
      for (std::size_t k = 0; k < static_cast<std::size_t>(TokenKind::Count); ++k) {
        if (kKinds[k].keyword && word == kKinds[k].text) return Token{static_cast<TokenKind>(k), range(start, pos_)};
      }
      return Token{TokenKind::Identifier, range(start, pos_)};
    }
    if (is_digit(c) || (c == '.' && pos_ + 1 < text_.size() && is_digit(static_cast<unsigned char>(text_[pos_ + 1])))) {
      return number();
    }
    if (c == '"') return string();
    // Punctuation: the first listed match wins, and two-character forms come first.
    for (std::size_t k = 0; k < static_cast<std::size_t>(TokenKind::Count); ++k) {
      if (!kKinds[k].punct) continue;
      const std::string_view p = kKinds[k].text;
      if (text_.substr(pos_, p.size()) == p) {
        pos_ += p.size();
        return Token{static_cast<TokenKind>(k), range(start, pos_)};
      }
    }
    if (c >= 0x80) {
      const std::size_t n = utf8_length(text_, pos_);
      if (n == 0) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "%02X", c);
        diags_.emit(DiagnosticKind::InvalidUtf8, range(start, start + 1), {hex});
        ++pos_;
      } else {
        diags_.emit(DiagnosticKind::UnexpectedCharacter, range(start, start + n),
                    {std::string(text_.substr(start, n))});
        pos_ += n;
      }
      return Token{TokenKind::Error, range(start, pos_)};
    }
    ++pos_;
    std::string shown;
    if (c < 0x20 || c == 0x7F) {
      char hex[12];
      std::snprintf(hex, sizeof hex, "\\x%02X", c);
      shown = hex;
    } else {
      shown = std::string(1, static_cast<char>(c));
    }
    diags_.emit(DiagnosticKind::UnexpectedCharacter, range(start, pos_), {shown});
    return Token{TokenKind::Error, range(start, pos_)};
  }

  Token number() {
    const std::size_t start = pos_;
    bool is_float = false;
    std::string why;
    auto digits = [&](bool hex) {
      std::size_t n = 0;
      while (pos_ < text_.size()) {
        const auto ch = static_cast<unsigned char>(text_[pos_]);
        if (ch == '_' || (hex ? is_hex(ch) : is_digit(ch))) {
          n += ch != '_';
          ++pos_;
        } else {
          break;
        }
      }
      return n;
    };
    bool hex = false;
    if (text_[pos_] == '0' && pos_ + 1 < text_.size() && (text_[pos_ + 1] == 'x' || text_[pos_ + 1] == 'X')) {
      hex = true;
      pos_ += 2;
      if (digits(true) == 0) why = ": no digits after '0x'";
    } else {
      digits(false);
      if (pos_ < text_.size() && text_[pos_] == '.' &&
          !(pos_ + 1 < text_.size() && text_[pos_ + 1] == '.')) {
        is_float = true;
        ++pos_;
        digits(false);
      }
      if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
        is_float = true;
        ++pos_;
        if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
        if (digits(false) == 0) why = ": exponent has no digits";
      }
    }
    // A literal must not run into letters, digits or another dot ("12abc", "1.2.3").
    while (pos_ < text_.size() && (is_ident_char(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.')) {
      if (text_[pos_] == '.' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '.') break;  // `0..4`
      if (why.empty()) why = text_[pos_] == '.' ? ": more than one '.'" : ": unexpected characters after the number";
      ++pos_;
    }
    const SourceRange r = range(start, pos_);
    const std::string spelled(text_.substr(start, pos_ - start));
    std::string clean;
    for (char ch : spelled) {
      if (ch != '_') clean += ch;
    }
    if (clean.back() == '_' || spelled.back() == '_') {
      if (why.empty()) why = ": ends with '_'";
    }
    if (!why.empty()) {
      diags_.emit(DiagnosticKind::BadNumberLiteral, r, {spelled, why});
      return Token{TokenKind::Error, r};
    }
    Token t{is_float ? TokenKind::FloatLiteral : TokenKind::IntLiteral, r};
    if (is_float) {
      t.float_value = std::strtod(clean.c_str(), nullptr);
      if (!std::isfinite(t.float_value)) {
        diags_.emit(DiagnosticKind::BadNumberLiteral, r, {spelled, ": out of range"});
        t.kind = TokenKind::Error;
      }
      return t;
    }
    unsigned long long v = 0;
    const std::string body = hex ? clean.substr(2) : clean;
    for (char ch : body) {
      const unsigned d = is_digit(static_cast<unsigned char>(ch)) ? static_cast<unsigned>(ch - '0')
                                                                   : static_cast<unsigned>((ch | 0x20) - 'a' + 10);
      const unsigned base = hex ? 16 : 10;
      if (v > (~0ull - d) / base) {
        diags_.emit(DiagnosticKind::IntegerLiteralTooLarge, r, {spelled});
        t.kind = TokenKind::Error;
        return t;
      }
      v = v * base + d;
    }
    t.int_value = v;
    return t;
  }

  Token string() {
    const std::size_t start = pos_++;
    while (pos_ < text_.size() && text_[pos_] != '"' && text_[pos_] != '\n') {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size() && text_[pos_ + 1] != '\n') ++pos_;
      ++pos_;
    }
    if (pos_ >= text_.size() || text_[pos_] != '"') {
      diags_.emit(DiagnosticKind::UnterminatedString, range(start, start + 1));
      return Token{TokenKind::Error, range(start, pos_)};
    }
    ++pos_;
    return Token{TokenKind::StringLiteral, range(start, pos_)};
  }

  const SourceBuffer& src_;
  std::string_view text_;
  Diagnostics& diags_;
  std::size_t pos_ = 0;
};

}  // namespace

std::string token_kind_spelling(TokenKind kind) {
  const KindInfo& k = kKinds[static_cast<std::size_t>(kind)];
  if (k.keyword || k.punct) return std::string("'") + k.text + "'";
  return k.text;
}

const char* token_kind_name(TokenKind kind) { return kKinds[static_cast<std::size_t>(kind)].name; }

bool is_type_keyword(TokenKind kind) {
  switch (kind) {
    case TokenKind::TyF32:
    case TokenKind::TyF16:
    case TokenKind::TyBf16:
    case TokenKind::TyI32:
    case TokenKind::TyI64:
    case TokenKind::TyU32:
    case TokenKind::TyU64:
    case TokenKind::TyBool:
    case TokenKind::TyInt: return true;
    default: return false;
  }
}

std::string TokenBuffer::dump() const {
  std::string out;
  for (const Token& t : tokens) {
    const LineCol lc = source->line_col(t.range.begin);
    out += std::to_string(lc.line) + ":" + std::to_string(lc.column) + " " + token_kind_name(t.kind);
    if (t.kind != TokenKind::EndOfFile) out += " '" + std::string(text(t)) + "'";
    out += "\n";
  }
  return out;
}

TokenBuffer lex(const SourceBuffer& source, Diagnostics& diags) { return Lexer(source, 0, diags).run(); }
TokenBuffer lex(const SourceBuffer& source, int file, Diagnostics& diags) { return Lexer(source, file, diags).run(); }

}  // namespace irisc
