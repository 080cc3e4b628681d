// An on-disk cache of compiled code objects (cubins, PTX), keyed by a hash of
// everything that went into them, so a JIT compiles each kernel once per machine
// rather than once per run. Safe for many threads and processes at once: entries
// appear by atomic rename and carry a checksum, so a reader sees a whole entry or
// a miss, never a partial or corrupt one.
//
// The cache loads code onto GPUs, so what it reads must be what this user wrote: the
// directory must be this user's own, not a symbolic link and not writable by group
// or others; entries must be regular files this user owns. Anything else is refused,
// and a refused or unusable cache costs only the reuse: the JIT compiles without it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
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
  // Temporary files of writers that died mid-put are removed once this old.
  static constexpr std::chrono::seconds kStaleTempAge{3600};
  static constexpr std::uint64_t kDefaultMaxBytes = std::uint64_t{1} << 30;

  // Uses `dir`, creating it and any missing parents with mode 0700. Never throws: a
  // directory that cannot be created, or that is refused (a symbolic link, not a
  // directory, owned by another user, writable by group or others), turns the cache
  // off (usable() is false, get misses, put returns false) with one warning per
  // directory per process. Entries beyond `max_bytes` in all (0: no cap) are evicted,
  // least recently used first, when put adds one.
  explicit JitCache(std::filesystem::path dir, std::uint64_t max_bytes = default_max_bytes());

  // $IRIS_CACHE_DIR, else $XDG_CACHE_HOME/iris, else ~/.cache/iris, else
  // /tmp/iris-cache-<uid>.
  static std::filesystem::path default_dir();

  // $IRIS_CACHE_MAX_BYTES (a size: 4096, 512MiB, 2GiB; 0 means no cap), else
  // kDefaultMaxBytes. A malformed value is warned about once and ignored.
  static std::uint64_t default_max_bytes();

  // Whether the directory passed the checks; when false the cache does nothing.
  bool usable() const { return usable_; }

  // The entry stored under `key`; nullopt on a miss or on an entry that is
  // unreadable, truncated, corrupt, written for another key, not a regular file
  // (a symbolic link is not followed, a FIFO is not waited on) or not this user's.
  // A hit marks the entry as recently used.
  std::optional<std::vector<std::byte>> get(const std::string& key) const;

  // Stores `bytes` under `key`, replacing any entry, then trims the cache (see
  // trim). Atomic: written to a temporary file (mode 0600) in dir(), fsync'd, then
  // renamed into place. A cache that cannot be written (full disk, read-only
  // directory) costs only the reuse: put warns once and returns false instead of
  // throwing.
  bool put(const std::string& key, std::span<const std::byte> bytes);

  // Removes temporary files older than kStaleTempAge, then, while the entries
  // exceed max_bytes(), the least recently used entry other than `keep`.
  void trim(const std::filesystem::path& keep = {});

  const std::filesystem::path& dir() const { return dir_; }
  std::uint64_t max_bytes() const { return max_bytes_; }

  // The file an entry for `key` lives in. Keys made of [A-Za-z0-9_-] (at most 128
  // characters; cache_key's are) name the file directly; others are hashed.
  std::filesystem::path entry_path(const std::string& key) const;

 private:
  std::filesystem::path dir_;
  std::uint64_t max_bytes_ = kDefaultMaxBytes;
  bool usable_ = false;
};

// Hex SHA-256 over the parts, each prefixed by its length, so that ("ab", "c") and
// ("a", "bc") give different keys.
std::string cache_key(std::initializer_list<std::string_view> parts);

}  // namespace iris
