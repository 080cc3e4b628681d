// Recursive-descent evaluator for metadata expressions (see launch_expr.hpp).
#include "launch_expr.hpp"

#include <cctype>

#include "iris/error.hpp"

namespace iris {
namespace {

class Eval {
 public:
  Eval(const std::string& s, const std::map<std::string, std::int64_t>& vars) : s_(s), vars_(vars) {}

  std::int64_t run() {
    const std::int64_t v = sum();
    skip();
    if (i_ != s_.size()) fail("unexpected '" + s_.substr(i_, 1) + "'");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw Error("bad launch expression '" + s_ + "': " + why + " (recompile the kernel with this irisc)");
  }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  std::int64_t sum() {
    std::int64_t v = product();
    while (true) {
      if (eat('+')) v += product();
      else if (eat('-')) v -= product();
      else return v;
    }
  }
  std::int64_t product() {
    std::int64_t v = atom();
    while (true) {
      if (eat('*')) {
        v *= atom();
      } else if (eat('/')) {
        const std::int64_t d = atom();
        if (d == 0) fail("division by zero");
        v /= d;
      } else if (eat('%')) {
        const std::int64_t d = atom();
        if (d == 0) fail("division by zero");
        v %= d;
      } else {
        return v;
      }
    }
  }
  std::int64_t atom() {
    skip();
    if (eat('(')) {
      const std::int64_t v = sum();
      if (!eat(')')) fail("missing ')'");
      return v;
    }
    if (eat('-')) return -atom();
    if (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
      std::int64_t v = 0;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) v = v * 10 + (s_[i_++] - '0');
      return v;
    }
    std::string name;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) name += s_[i_++];
    if (name.empty()) fail("expected a value");
    if (name == "iris_min" || name == "iris_max") {
      if (!eat('(')) fail("expected '('");
      const std::int64_t a = sum();
      if (!eat(',')) fail("expected ','");
      const std::int64_t b = sum();
      if (!eat(')')) fail("expected ')'");
      return name == "iris_min" ? (a < b ? a : b) : (a > b ? a : b);
    }
    auto it = vars_.find(name);
    if (it == vars_.end()) fail("unknown name '" + name + "'");
    return it->second;
  }

  const std::string& s_;
  const std::map<std::string, std::int64_t>& vars_;
  std::size_t i_ = 0;
};

}  // namespace

std::int64_t eval_launch_expr(const std::string& expr, const std::map<std::string, std::int64_t>& vars) {
  return Eval(expr, vars).run();
}

}  // namespace iris
