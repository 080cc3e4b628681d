// The TIR reader's scanner (see tir_scan.hpp).
#include "compiler/tir/tir_scan.hpp"

#include <cstdlib>

namespace irisc::tir::detail {
namespace {

constexpr std::int64_t kMaxExtent = std::int64_t{1} << 20;  // tile sizes, steps, layout columns

// How many enumerators each enum the listing spells by name() has. The switches are
// exhaustive, so an enumerator added to tir.hpp is a build error here (-Werror=switch)
// until it is counted: the reader then reads every name the printer writes.
// clang-format off
constexpr int count(Builtin e) {
  switch (e) { case Builtin::rank: case Builtin::world: case Builtin::sms: case Builtin::program:
               case Builtin::programs: case Builtin::resident: return 6; }
  return 0;
}
constexpr int count(Order e) {
  switch (e) { case Order::relaxed: case Order::acquire: case Order::release: case Order::acq_rel: return 4; }
  return 0;
}
constexpr int count(Scope e) {
  switch (e) { case Scope::block: case Scope::device: case Scope::system: return 3; }
  return 0;
}
constexpr int count(Cmp e) {
  switch (e) { case Cmp::eq: case Cmp::ne: case Cmp::gt: case Cmp::ge: case Cmp::lt: case Cmp::le: return 6; }
  return 0;
}
constexpr int count(AtomicOp e) {
  switch (e) { case AtomicOp::add: case AtomicOp::sub: case AtomicOp::and_: case AtomicOp::or_: case AtomicOp::xor_:
               case AtomicOp::min: case AtomicOp::max: case AtomicOp::xchg: case AtomicOp::cas: return 9; }
  return 0;
}
constexpr int count(ReduceOp e) {
  switch (e) { case ReduceOp::sum: case ReduceOp::max: case ReduceOp::min: return 3; }
  return 0;
}
constexpr int count(BinOp e) {
  switch (e) { case BinOp::add: case BinOp::sub: case BinOp::mul: case BinOp::div: case BinOp::rem: case BinOp::eq:
               case BinOp::ne: case BinOp::lt: case BinOp::le: case BinOp::gt: case BinOp::ge: case BinOp::land:
               case BinOp::lor: case BinOp::band: case BinOp::bor: case BinOp::bxor: case BinOp::min:
               case BinOp::max: case BinOp::shl: case BinOp::shr: return 20; }
  return 0;
}
constexpr int count(UnOp e) {
  switch (e) { case UnOp::neg: case UnOp::lnot: case UnOp::abs: case UnOp::sqrt: case UnOp::exp: case UnOp::log: return 6; }
  return 0;
}
constexpr int count(MatmulLowering e) {
  switch (e) { case MatmulLowering::unchosen: case MatmulLowering::simt: case MatmulLowering::mma_sync:
               case MatmulLowering::wgmma_ws: case MatmulLowering::mfma: return 5; }
  return 0;
}
constexpr int count(ScalarType e) {
  switch (e) { case ScalarType::f32: case ScalarType::f16: case ScalarType::bf16: case ScalarType::i32:
               case ScalarType::i64: case ScalarType::u32: case ScalarType::u64: case ScalarType::boolean:
               case ScalarType::int_: return 9; }
  return 0;
}
// clang-format on

}  // namespace

template <class E>
bool enum_named(std::string_view word, E* out) {
  for (int i = 0; i < count(E{}); ++i) {
    if (word == name(static_cast<E>(i))) {
      *out = static_cast<E>(i);
      return true;
    }
  }
  return false;
}

bool scalar_named(std::string_view word, ScalarType* out) {
  for (int i = 0; i < count(ScalarType{}); ++i) {
    if (word == ast::scalar_type_name(static_cast<ScalarType>(i))) {
      *out = static_cast<ScalarType>(i);
      return true;
    }
  }
  return false;
}

template <class E>
E Scanner::enum_word(const std::string& what) {
  const std::size_t at = here();
  const std::string w = ident_here(what);
  E e;
  if (!enum_named(w, &e)) fail_at(at, "unknown " + what + " '" + w + "'");
  return e;
}

#define IRIS_TIR_NAMED_ENUM(E)                              \
  template bool enum_named<E>(std::string_view word, E* out); \
  template E Scanner::enum_word<E>(const std::string& what);
IRIS_TIR_NAMED_ENUM(Builtin)
IRIS_TIR_NAMED_ENUM(Order)
IRIS_TIR_NAMED_ENUM(Scope)
IRIS_TIR_NAMED_ENUM(Cmp)
IRIS_TIR_NAMED_ENUM(AtomicOp)
IRIS_TIR_NAMED_ENUM(ReduceOp)
IRIS_TIR_NAMED_ENUM(BinOp)
IRIS_TIR_NAMED_ENUM(UnOp)
IRIS_TIR_NAMED_ENUM(MatmulLowering)
#undef IRIS_TIR_NAMED_ENUM

// ---- errors ------------------------------------------------------------------------------
void Scanner::fail(const std::string& what) {
  skip();
  fail_at(pos_, what);
}

void Scanner::fail_at(std::size_t at, const std::string& what) {
  err_->offset = static_cast<std::uint32_t>(at);
  err_->line = 1;
  err_->column = 1;
  for (std::size_t i = 0; i < at && i < s_.size(); ++i) {
    if (s_[i] == '\n') {
      ++err_->line;
      err_->column = 1;
    } else {
      ++err_->column;
    }
  }
  err_->message = what;
  throw Fail{};
}

std::string Scanner::found() {
  skip();
  if (pos_ >= s_.size()) return "the end of the text";
  const char c = s_[pos_];
  if (ident_char(c)) {
    std::size_t e = pos_;
    while (e < s_.size() && ident_char(s_[e]) && e - pos_ < 40) ++e;
    return "'" + std::string(s_.substr(pos_, e - pos_)) + "'";
  }
  if (c > ' ' && c < 127) return std::string("'") + c + "'";
  static const char* hex = "0123456789abcdef";
  const auto u = static_cast<unsigned char>(c);
  return std::string("byte 0x") + hex[u >> 4] + hex[u & 15];
}

// ---- characters and words ----------------------------------------------------------------
void Scanner::skip() {
  while (pos_ < s_.size()) {
    const char c = s_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '/') {
      while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
    } else {
      break;
    }
  }
}

std::size_t Scanner::here() {
  skip();
  return pos_;
}

bool Scanner::at_end() {
  skip();
  return pos_ >= s_.size();
}

char Scanner::peek() {
  skip();
  return pos_ < s_.size() ? s_[pos_] : '\0';
}

bool Scanner::eat(std::string_view p) {
  skip();
  if (s_.substr(pos_, p.size()) != p) return false;
  pos_ += p.size();
  return true;
}

void Scanner::expect(std::string_view p) {
  if (!eat(p)) fail("expected '" + std::string(p) + "', found " + found());
}

bool Scanner::peek_word(std::string_view w) {
  skip();
  return s_.substr(pos_, w.size()) == w && !(pos_ + w.size() < s_.size() && ident_char(s_[pos_ + w.size()]));
}

bool Scanner::eat_word(std::string_view w) {
  if (!peek_word(w)) return false;
  pos_ += w.size();
  return true;
}

bool Scanner::eat_qualifier(std::string_view w) {
  if (!peek_word(w)) return false;
  const std::size_t after = pos_ + w.size();
  if (after + 1 >= s_.size() || s_[after] != ' ' || !ident_start(s_[after + 1])) return false;
  pos_ = after + 1;
  return true;
}

void Scanner::expect_word(std::string_view w) {
  if (!eat_word(w)) fail("expected '" + std::string(w) + "', found " + found());
}

bool Scanner::peek_binding() {
  skip();
  std::size_t e = pos_;
  while (e < s_.size() && ident_char(s_[e])) ++e;
  while (e < s_.size() && (s_[e] == ' ' || s_[e] == '\t')) ++e;
  return e != pos_ && e < s_.size() && s_[e] == '=';
}

// ---- names and numbers -------------------------------------------------------------------
std::string Scanner::ident_here(const std::string& what) {
  if (pos_ >= s_.size() || !ident_start(s_[pos_])) fail("expected " + what + ", found " + found());
  const std::size_t b = pos_;
  while (pos_ < s_.size() && ident_char(s_[pos_])) ++pos_;
  return std::string(s_.substr(b, pos_ - b));
}

std::string Scanner::ident(const std::string& what) {
  skip();
  return ident_here(what);
}

std::string Scanner::sigil_name(char sigil, const std::string& what) {
  skip();
  if (pos_ >= s_.size() || s_[pos_] != sigil) fail("expected " + what + ", found " + found());
  ++pos_;
  return ident_here(what);
}

std::int64_t Scanner::integer(const std::string& what) {
  skip();
  const std::size_t at = pos_;
  const bool neg = pos_ < s_.size() && s_[pos_] == '-';
  if (neg) ++pos_;
  if (pos_ >= s_.size() || !digit(s_[pos_])) {
    pos_ = at;
    fail("expected " + what + ", found " + found());
  }
  std::uint64_t mag = 0;
  const std::uint64_t limit = neg ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
  while (pos_ < s_.size() && digit(s_[pos_])) {
    const auto d = static_cast<std::uint64_t>(s_[pos_] - '0');
    if (mag > (limit - d) / 10) fail_at(at, what + " does not fit in 64 bits");
    mag = mag * 10 + d;
    ++pos_;
  }
  return neg ? static_cast<std::int64_t>(0 - mag) : static_cast<std::int64_t>(mag);
}

std::int64_t Scanner::integer_in(const std::string& what, std::int64_t lo, std::int64_t hi) {
  const std::size_t at = here();
  const std::int64_t v = integer(what);
  if (v < lo || v > hi) {
    fail_at(at, what + " " + std::to_string(v) + " is out of range [" + std::to_string(lo) + ", " +
                    std::to_string(hi) + "]");
  }
  return v;
}

std::int64_t Scanner::extent(const std::string& what) { return integer_in(what, 1, kMaxExtent); }

bool Scanner::at_literal() {
  const char c = peek();
  if (c == '-' || c == '+' || c == '.' || digit(c)) return true;
  return (peek_word("inf") || peek_word("nan")) && pos_ + 3 < s_.size() && s_[pos_ + 3] == ':';
}

Literal Scanner::literal() {
  const std::size_t at = here();
  std::size_t e = pos_;
  while (e < s_.size() && (ident_char(s_[e]) || s_[e] == '.' || s_[e] == '+' || s_[e] == '-')) ++e;
  const std::string num(s_.substr(pos_, e - pos_));
  pos_ = e;
  if (pos_ >= s_.size() || s_[pos_] != ':') fail("expected ':TYPE' after the number '" + num + "', found " + found());
  ++pos_;
  const std::size_t type_at = pos_;
  const std::string tn = ident_here("an element type");
  Literal lit;
  if (!scalar_named(tn, &lit.type)) fail_at(type_at, "unknown element type '" + tn + "'");
  if (is_float(lit.type)) {
    char* end = nullptr;
    lit.float_value = std::strtod(num.c_str(), &end);
    if (num.empty() || end != num.c_str() + num.size()) fail_at(at, "malformed number '" + num + "'");
  } else {
    std::size_t i = num[0] == '-' ? 1 : 0;
    bool ok = i < num.size();
    for (std::size_t j = i; j < num.size(); ++j) ok = ok && digit(num[j]);
    if (!ok) fail_at(at, "malformed integer '" + num + "' for " + tn);
    const std::size_t saved = pos_;
    pos_ = at;
    lit.int_value = integer("an integer");
    pos_ = saved;
  }
  return lit;
}

// ---- types and layouts -------------------------------------------------------------------------------
ScalarType Scanner::scalar_type() {
  const std::size_t at = here();
  const std::string w = ident_here("an element type");
  ScalarType t;
  if (!scalar_named(w, &t)) fail_at(at, "unknown element type '" + w + "'");
  return t;
}

Type Scanner::type() {
  const std::size_t at = here();
  const std::string w = ident_here("a type");
  if (w == "tile") {
    expect("<");
    const ScalarType e = scalar_type();
    expect(">");
    expect("[");
    const std::int64_t a = extent("a tile size");
    if (eat(",")) {
      const std::int64_t b = extent("a tile size");
      expect("]");
      return Type::tile2d(e, a, b);
    }
    expect("]");
    return Type::tile(e, a);
  }
  if (w == "range") {
    expect("[");
    const std::int64_t n = extent("a range size");
    expect("]");
    return Type::range(n);
  }
  if (w == "rank") return Type{TypeKind::Rank, ScalarType::int_, 0, 0};
  if (w == "void") return Type{};
  ScalarType t;
  if (!scalar_named(w, &t)) fail_at(at, "unknown type '" + w + "'");
  return Type::scalar(t);
}

Layout Scanner::layout() {
  Layout l;
  const std::int64_t a = extent("a layout extent");
  if (eat("x")) {
    l.rows = a;
    l.cols = extent("a layout extent");
    if (eat("/")) {
      if (eat_word("acc")) l.accumulator = true;
      else l.vec = static_cast<int>(integer_in("a vector width", 1, 1024));
    }
  } else {
    expect("/");
    l.cols = a;
    l.vec = static_cast<int>(integer_in("a vector width", 1, 1024));
  }
  return l;
}

}  // namespace irisc::tir::detail
