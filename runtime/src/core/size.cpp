// Parsing and printing byte sizes (see iris/size.hpp).
#include "iris/size.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

#include "iris/error.hpp"

namespace iris {

std::size_t parse_size(std::string_view text, std::string_view what) {
  auto fail = [&](const std::string& why) -> std::size_t {
    throw Error(std::string(what) + ": '" + std::string(text) + "' is not a valid size (" + why +
                "); write a byte count like 4096, 64MiB or 1GiB");
  };
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i < text.size() && text[i] == '-') return fail("negative");
  size_t start = i;
  unsigned long long value = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    unsigned digit = static_cast<unsigned>(text[i] - '0');
    if (value > (std::numeric_limits<unsigned long long>::max() - digit) / 10) return fail("too large");
    value = value * 10 + digit;
    ++i;
  }
  if (i == start) return fail("no digits");
  if (i < text.size() && text[i] == '.') return fail("fractional");
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  std::string unit;
  for (; i < text.size(); ++i) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.back()))) unit.pop_back();
  unsigned shift = 0;
  if (unit.empty() || unit == "b") shift = 0;
  else if (unit == "k" || unit == "kb" || unit == "kib") shift = 10;
  else if (unit == "m" || unit == "mb" || unit == "mib") shift = 20;
  else if (unit == "g" || unit == "gb" || unit == "gib") shift = 30;
  else if (unit == "t" || unit == "tb" || unit == "tib") shift = 40;
  else return fail("unknown unit '" + unit + "'");
  if (shift && value > (std::numeric_limits<unsigned long long>::max() >> shift)) return fail("too large");
  return static_cast<std::size_t>(value << shift);
}

std::string format_bytes(std::size_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[48];
  if (u == 0) std::snprintf(buf, sizeof buf, "%zu B", bytes);
  else if (std::fabs(v - std::round(v)) < 0.005) std::snprintf(buf, sizeof buf, "%.0f %s", v, units[u]);
  else std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

}  // namespace iris
