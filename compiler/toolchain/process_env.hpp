// Small helpers the toolchains share for finding what they run or load: the
// environment (secure_getenv: under setuid/setgid the caller's environment must not pick
// the programs and libraries this process uses, and reads as unset there), executables
// on PATH, and tool output as the bytes of a code object.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace irisc::toolchain {

inline std::string env(const char* name) {
  const char* value = secure_getenv(name);
  return value ? std::string(value) : std::string();
}

inline bool executable(const std::filesystem::path& p) {
  return !p.empty() && ::access(p.c_str(), X_OK) == 0 && !std::filesystem::is_directory(p);
}

// The first `name` on PATH that can be executed, or "".
inline std::string on_path(const std::string& name) {
  std::stringstream dirs(env("PATH"));
  for (std::string d; std::getline(dirs, d, ':');) {
    if (!d.empty() && executable(std::filesystem::path(d) / name)) return (std::filesystem::path(d) / name).string();
  }
  return "";
}

inline std::vector<std::byte> to_bytes(std::string_view s) {
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  return std::vector<std::byte>(p, p + s.size());
}

}  // namespace irisc::toolchain
