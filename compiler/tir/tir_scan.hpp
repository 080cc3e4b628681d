// The character level of the TIR reader (tir_read.cpp), internal to compiler/tir:
// whitespace and `//` comments, punctuation, words, identifiers, sigil names, integers,
// typed number literals, enum names, types and layouts, and the error that stops a
// read, placed by line:col. The reader builds on it and never indexes the text itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "compiler/tir/tir.hpp"
#include "compiler/tir/tir_read.hpp"

namespace irisc::tir::detail {

struct Fail {};  // a read error, already recorded in the ReadError; read() catches it

inline bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
inline bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }
inline bool digit(char c) { return c >= '0' && c <= '9'; }

// The enumerator of E whose name() is `word`. Instantiated in tir_scan.cpp for every
// enum the listing spells by name.
template <class E>
bool enum_named(std::string_view word, E* out);
bool scalar_named(std::string_view word, ScalarType* out);

// INT:TYPE or FLOAT:TYPE.
struct Literal {
  ScalarType type = ScalarType::int_;
  std::int64_t int_value = 0;  // integer types
  double float_value = 0;      // float types
};

// Every reading function but the `_here` ones and peek_binding first skips whitespace
// and comments. The failing ones record the error and throw Fail.
class Scanner {
 public:
  Scanner(std::string_view text, ReadError* err) : s_(text), err_(err) {}

  // ---- errors ----------------------------------------------------------------------------
  [[noreturn]] void fail(const std::string& what);
  [[noreturn]] void fail_at(std::size_t at, const std::string& what);
  // What is at the current position, for "expected X, found Y".
  std::string found();

  // ---- characters and words --------------------------------------------------------------
  std::size_t here();  // the offset of what comes next
  bool at_end();
  char peek();  // '\0' at the end
  bool eat(std::string_view p);
  void expect(std::string_view p);
  bool peek_word(std::string_view w);  // `w`, not followed by an identifier character
  bool eat_word(std::string_view w);
  // `w` then one blank and a name (`gathered A[`): a word that qualifies the name after
  // it, where a name `w` itself (`gathered[`) stays unread.
  bool eat_qualifier(std::string_view w);
  void expect_word(std::string_view w);
  // Whether NAME= (blanks but no newline before the '=') comes next.
  bool peek_binding();

  // ---- names and numbers -----------------------------------------------------------------
  std::string ident_here(const std::string& what);  // no whitespace skipped
  std::string ident(const std::string& what);
  std::string sigil_name(char sigil, const std::string& what);  // `%name`, `#name`, `$name`
  // A decimal integer, optionally negative, that fits in 64 bits.
  std::int64_t integer(const std::string& what);
  std::int64_t integer_in(const std::string& what, std::int64_t lo, std::int64_t hi);
  std::int64_t extent(const std::string& what);  // tile sizes, steps, layout columns
  // Whether a typed number (a sign, a digit, '.', inf: or nan:) comes next.
  bool at_literal();
  // INT:TYPE or FLOAT:TYPE, the number as printf("%g") or ("%.17g") writes it.
  Literal literal();

  // ---- enum words, types and layouts -----------------------------------------------------
  template <class E>
  E enum_word(const std::string& what);  // instantiated beside enum_named
  ScalarType scalar_type();
  Type type();
  Layout layout();  // COLS/VEC (1-D tiles) or ROWSxCOLS[/VEC|/acc] (2-D tiles)

 private:
  void skip();

  std::string_view s_;
  std::size_t pos_ = 0;
  ReadError* err_;
};

}  // namespace irisc::tir::detail
