// Rank-tagged logging: lines look like "[iris 2/4] warn: message". The level comes
// from the environment variable IRIS_LOG (error, warn, info, debug; default warn).
#pragma once

#include <sstream>
#include <string>
#include <string_view>

namespace iris {

enum class LogLevel { error = 0, warn = 1, info = 2, debug = 3 };

// The level in force (read once from IRIS_LOG).
LogLevel log_level();
// Parses "error|warn|info|debug" (case-insensitive); returns false if unknown.
bool parse_log_level(std::string_view text, LogLevel* out);
// Tags the calling thread's log lines with a rank; world == 0 removes the tag.
void set_log_rank(int rank, int world);
// Writes one line to stderr if `level` is enabled. Thread-safe; lines never interleave.
void log(LogLevel level, std::string_view message);
// The prefix the calling thread's lines carry, e.g. "[iris 2/4]".
std::string log_prefix();
// At level info, logs the IRIS_* and IRISC_* environment variables in effect, once per
// process (iris::run calls it), so a log shows which settings a run had.
void log_environment();

namespace detail {
template <class... Args>
std::string concat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
}  // namespace detail

template <class... Args>
void log_info(const Args&... args) {
  if (log_level() >= LogLevel::info) log(LogLevel::info, detail::concat(args...));
}
template <class... Args>
void log_debug(const Args&... args) {
  if (log_level() >= LogLevel::debug) log(LogLevel::debug, detail::concat(args...));
}
template <class... Args>
void log_warn(const Args&... args) {
  if (log_level() >= LogLevel::warn) log(LogLevel::warn, detail::concat(args...));
}

}  // namespace iris
