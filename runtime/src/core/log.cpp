// Rank-tagged logging to stderr (see iris/log.hpp).
#include "iris/log.hpp"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

extern char** environ;  // POSIX: the process environment

namespace iris {
namespace {

thread_local int tls_rank = -1;
thread_local int tls_world = 0;

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::error: return "error";
    case LogLevel::warn: return "warn";
    case LogLevel::info: return "info";
    case LogLevel::debug: return "debug";
  }
  return "?";
}

}  // namespace

bool parse_log_level(std::string_view text, LogLevel* out) {
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (LogLevel l : {LogLevel::error, LogLevel::warn, LogLevel::info, LogLevel::debug}) {
    if (lower == level_name(l)) {
      *out = l;
      return true;
    }
  }
  return false;
}

LogLevel log_level() {
  static const LogLevel level = [] {
    LogLevel l = LogLevel::warn;
    const char* env = secure_getenv("IRIS_LOG");
    if (env && *env && !parse_log_level(env, &l)) {
      std::fprintf(stderr, "[iris] warn: IRIS_LOG=%s is not one of error, warn, info, debug\n", env);
    }
    return l;
  }();
  return level;
}

void set_log_rank(int rank, int world) {
  tls_rank = rank;
  tls_world = world;
}

std::string log_prefix() {
  if (tls_world <= 0) return "[iris]";
  return "[iris " + std::to_string(tls_rank) + "/" + std::to_string(tls_world) + "]";
}

void log(LogLevel level, std::string_view message) {
  if (level > log_level()) return;
  static std::mutex mu;
  std::string line = log_prefix() + " " + level_name(level) + ": " + std::string(message) + "\n";
  std::lock_guard<std::mutex> lock(mu);
  std::fputs(line.c_str(), stderr);
}

void log_environment() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (log_level() < LogLevel::info) return;
    std::vector<std::string> vars;
    for (char** e = environ; e && *e; ++e) {
      const std::string_view var(*e);
      if (var.starts_with("IRIS_") || var.starts_with("IRISC_")) vars.emplace_back(var);
    }
    std::sort(vars.begin(), vars.end());
    if (vars.empty()) {
      log(LogLevel::info, "environment: no IRIS_* or IRISC_* variable set");
      return;
    }
    std::string line = "environment:";
    for (const std::string& v : vars) line += " " + v;
    log(LogLevel::info, line);
  });
}

}  // namespace iris
