// An on-disk cache of compiled code objects (cubins, PTX), keyed by a hash of
// everything that went into them, so a JIT compiles each kernel once per machine
// rather than once per run. Safe for many threads and processes at once: entries
// appear by atomic rename and carry a checksum, so a reader sees a whole entry or
// a miss, never a partial or corrupt one.
#pragma once

#include <cstddef>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace iris {

class JitCache {
 public:
  // Uses (and creates, with its parents, if missing) `dir`. Throws iris::Error when
  // it cannot be created or is not a directory.
  explicit JitCache(std::filesystem::path dir);

  // $IRIS_CACHE_DIR, else $XDG_CACHE_HOME/iris, else ~/.cache/iris, else
  // /tmp/iris-cache-<uid>.
  static std::filesystem::path default_dir();

  // The entry stored under `key`; nullopt on a miss or on an entry that is
  // unreadable, truncated, corrupt or written for another key.
  std::optional<std::vector<std::byte>> get(const std::string& key) const;

  // Stores `bytes` under `key`, replacing any entry. Atomic: written to a temporary
  // file in dir(), fsync'd, then renamed into place. A cache that cannot be written
  // (full disk, read-only directory) costs only the reuse: put logs a warning and
  // returns false instead of throwing.
  bool put(const std::string& key, std::span<const std::byte> bytes);

  const std::filesystem::path& dir() const { return dir_; }

  // The file an entry for `key` lives in. Keys made of [A-Za-z0-9_-] (at most 128
  // characters; cache_key's are) name the file directly; others are hashed.
  std::filesystem::path entry_path(const std::string& key) const;

 private:
  std::filesystem::path dir_;
};

// Hex SHA-256 over the parts, each prefixed by its length, so that ("ab", "c") and
// ("a", "bc") give different keys.
std::string cache_key(std::initializer_list<std::string_view> parts);

}  // namespace iris
