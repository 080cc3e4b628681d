// The JIT cache's on-disk format and its atomic write protocol (see jit_cache.hpp).
//
// An entry file is an 80-byte header followed by the payload:
//   magic "IRISJIT1" | SHA-256 of the key | payload length (u64, little-endian) |
//   SHA-256 of the payload
// The key digest catches two keys sharing a file name; the length and payload
// digest catch truncation and corruption. Any mismatch reads as a miss.
//
// Files are created 0600 in a directory checked at construction (see prepare_dir).
// Temporary files are named ".<entry>.tmp.<pid>.<n>"; put sweeps those of crashed
// writers and evicts by mtime, which a hit refreshes.
#include "jit/jit_cache.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <system_error>

#include "iris/error.hpp"
#include "iris/log.hpp"
#include "iris/size.hpp"
#include "jit/sha256.hpp"

namespace iris {
namespace {

constexpr char kMagic[8] = {'I', 'R', 'I', 'S', 'J', 'I', 'T', '1'};
constexpr std::size_t kDigestBytes = 32;
constexpr std::size_t kHeaderBytes = sizeof(kMagic) + kDigestBytes + 8 + kDigestBytes;
constexpr std::size_t kMaxPlainKey = 128;
constexpr char kTempInfix[] = ".tmp.";

std::string env(const char* name) {
  const char* value = secure_getenv(name);
  return value ? std::string(value) : std::string();
}

Sha256::Digest digest_of(std::string_view text) {
  Sha256 h;
  h.update(text);
  return h.finish();
}

bool plain_key(const std::string& key) {
  if (key.empty() || key.size() > kMaxPlainKey) return false;
  for (char c : key) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// One warning per directory (or other subject) per process: a JIT compiles many
// kernels, and an unusable cache would otherwise repeat the same line for each.
void warn_once(const std::string& subject, const std::string& message) {
  static std::mutex mu;
  static std::set<std::string> warned;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!warned.insert(subject).second) return;
  }
  log_warn(message);
}

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "0%03o", static_cast<unsigned>(mode & 07777));
  return text;
}

// Creates `dir` and its missing parents, each with mode 0700 (the XDG spec asks
// the same of ~/.cache). Returns why it could not, or "".
std::string make_dirs(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> missing;
  for (std::filesystem::path p = dir; !p.empty(); p = p.parent_path()) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) == 0) break;
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0700) != 0 && errno != EEXIST)
      return "cannot be created (mkdir " + it->string() + ": " + std::strerror(errno) + ")";
  }
  return {};
}

// Creates `dir` if missing, then checks that it is a cache this user may trust.
// Returns why not, or "".
std::string prepare_dir(const std::filesystem::path& dir) {
  if (dir.empty()) return "is an empty path";
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT) return std::string("cannot be examined (") + std::strerror(errno) + ")";
    if (std::string why = make_dirs(dir); !why.empty()) return why;
    if (::lstat(dir.c_str(), &st) != 0)
      return std::string("cannot be examined (") + std::strerror(errno) + ")";
  }
  // lstat, not stat: a link could point anywhere, including at another user's files.
  if (S_ISLNK(st.st_mode)) return "is a symbolic link";
  if (!S_ISDIR(st.st_mode)) return "is not a directory";
  if (st.st_uid != ::geteuid())
    return "is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
           std::to_string(::geteuid()) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return "is writable by group or others (mode " + octal_mode(st.st_mode) + ")";
  return {};
}

// A trailing separator would make lstat follow a symbolic link ("link/" is the
// directory it points to), so the checks would pass on the target.
std::filesystem::path without_trailing_separator(std::filesystem::path dir) {
  while (!dir.has_filename() && dir.has_relative_path()) dir = dir.parent_path();
  return dir;
}

bool write_all(int fd, const std::byte* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

std::vector<std::byte> encode(const std::string& key, std::span<const std::byte> payload) {
  std::vector<std::byte> out(kHeaderBytes + payload.size());
  std::byte* p = out.data();
  std::memcpy(p, kMagic, sizeof(kMagic));
  p += sizeof(kMagic);
  const Sha256::Digest key_digest = digest_of(key);
  std::memcpy(p, key_digest.data(), kDigestBytes);
  p += kDigestBytes;
  const std::uint64_t size = payload.size();
  for (int i = 0; i < 8; ++i) *p++ = static_cast<std::byte>(size >> (8 * i));
  const Sha256::Digest payload_digest = sha256(payload);
  std::memcpy(p, payload_digest.data(), kDigestBytes);
  p += kDigestBytes;
  if (!payload.empty()) std::memcpy(p, payload.data(), payload.size());
  return out;
}

// The payload of a well-formed entry for `key`, or nullopt.
std::optional<std::vector<std::byte>> decode(const std::string& key, std::vector<std::byte> file) {
  if (file.size() < kHeaderBytes) return std::nullopt;
  const std::byte* p = file.data();
  if (std::memcmp(p, kMagic, sizeof(kMagic)) != 0) return std::nullopt;
  p += sizeof(kMagic);
  const Sha256::Digest key_digest = digest_of(key);
  if (std::memcmp(p, key_digest.data(), kDigestBytes) != 0) return std::nullopt;
  p += kDigestBytes;
  std::uint64_t size = 0;
  for (int i = 0; i < 8; ++i) size |= std::uint64_t(std::to_integer<unsigned>(*p++)) << (8 * i);
  if (size != file.size() - kHeaderBytes) return std::nullopt;
  const std::byte* expected = p;
  std::span<const std::byte> payload(file.data() + kHeaderBytes, file.size() - kHeaderBytes);
  const Sha256::Digest actual = sha256(payload);
  if (std::memcmp(expected, actual.data(), kDigestBytes) != 0) return std::nullopt;
  file.erase(file.begin(), file.begin() + kHeaderBytes);
  return file;
}

// Reads an entry, or nullopt on any error. O_NOFOLLOW: a symbolic link planted at
// the entry's name is not followed. O_NONBLOCK: opening a FIFO planted there returns
// at once instead of waiting for a writer. Then only a regular file this user owns is
// read; a hit's times are set to now, which is what eviction orders by.
std::optional<std::vector<std::byte>> read_entry(const std::filesystem::path& path,
                                                 const std::string& key) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<std::vector<std::byte>> out;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid()) {
    std::vector<std::byte> bytes(static_cast<std::size_t>(st.st_size));
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    if (done == bytes.size()) out = decode(key, std::move(bytes));
    if (out) ::futimens(fd, nullptr);  // best effort: a failure only ages the entry
  }
  ::close(fd);
  return out;
}

// Unique among the threads and processes sharing the directory: pid + a counter.
std::filesystem::path temp_path(const std::filesystem::path& dir, const std::string& entry_name) {
  static std::atomic<unsigned long long> counter{0};
  return dir / ("." + entry_name + kTempInfix + std::to_string(::getpid()) + "." +
                std::to_string(counter.fetch_add(1)));
}

bool is_temp_name(std::string_view name) {
  return name.starts_with('.') && name.find(kTempInfix) != std::string_view::npos;
}

// Makes the rename durable; best effort, since the entry is already visible.
void sync_dir(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

JitCache::JitCache(std::filesystem::path dir, std::uint64_t max_bytes)
    : dir_(without_trailing_separator(std::move(dir))), max_bytes_(max_bytes) {
  const std::string why = prepare_dir(dir_);
  usable_ = why.empty();
  if (!usable_)
    warn_once(dir_.string(), "JIT cache: " + dir_.string() + " " + why +
                                 "; compiling without a cache (set IRIS_CACHE_DIR to a directory "
                                 "of your own, mode 0700)");
}

std::filesystem::path JitCache::default_dir() {
  if (std::string dir = env("IRIS_CACHE_DIR"); !dir.empty()) return dir;
  // The XDG spec says to ignore relative values.
  if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty() && xdg.front() == '/')
    return std::filesystem::path(xdg) / "iris";
  std::string home = env("HOME");
  if (home.empty()) {
    struct passwd pw {};
    struct passwd* found = nullptr;
    char buffer[4096];
    if (::getpwuid_r(::getuid(), &pw, buffer, sizeof(buffer), &found) == 0 && found &&
        found->pw_dir)
      home = found->pw_dir;
  }
  if (!home.empty() && home != "/") return std::filesystem::path(home) / ".cache" / "iris";
  return "/tmp/iris-cache-" + std::to_string(::getuid());
}

std::uint64_t JitCache::default_max_bytes() {
  const std::string text = env("IRIS_CACHE_MAX_BYTES");
  if (text.empty()) return kDefaultMaxBytes;
  try {
    return parse_size(text, "IRIS_CACHE_MAX_BYTES");
  } catch (const Error& e) {
    warn_once("IRIS_CACHE_MAX_BYTES=" + text, std::string("JIT cache: ") + e.what() +
                                                  "; using the default cap of 1 GiB");
    return kDefaultMaxBytes;
  }
}

std::filesystem::path JitCache::entry_path(const std::string& key) const {
  return dir_ / ((plain_key(key) ? key : sha256_hex(key)) + ".irisjit");
}

std::optional<std::vector<std::byte>> JitCache::get(const std::string& key) const {
  if (!usable_) return std::nullopt;
  return read_entry(entry_path(key), key);
}

bool JitCache::put(const std::string& key, std::span<const std::byte> bytes) {
  if (!usable_) return false;
  const std::filesystem::path final_path = entry_path(key);
  const std::filesystem::path temp = temp_path(dir_, final_path.filename().string());
  const std::vector<std::byte> file = encode(key, bytes);
  // 0600: code objects reveal the kernels' source; O_NOFOLLOW with O_EXCL refuses a
  // link planted at the temporary name.
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    warn_once(dir_.string(), "JIT cache: cannot create " + temp.string() + ": " +
                                 std::strerror(errno) + " (code objects are not cached)");
    return false;
  }
  // fsync before rename: otherwise a crash could leave the new name on an empty file.
  bool ok = write_all(fd, file.data(), file.size()) && ::fsync(fd) == 0;
  const int saved_errno = errno;
  ok = (::close(fd) == 0) && ok;
  if (ok && ::rename(temp.c_str(), final_path.c_str()) == 0) {
    sync_dir(dir_);
    trim(final_path);
    return true;
  }
  warn_once(dir_.string(), "JIT cache: cannot write " + final_path.string() + ": " +
                               std::strerror(ok ? errno : saved_errno) +
                               " (code objects are not cached)");
  ::unlink(temp.c_str());
  return false;
}

void JitCache::trim(const std::filesystem::path& keep) {
  if (!usable_) return;
  struct Entry {
    std::filesystem::path path;
    std::uint64_t size;
    struct timespec used;
  };
  std::vector<Entry> entries;
  std::uint64_t total = 0;
  const auto now = std::chrono::system_clock::now();
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::filesystem::path& path = it->path();
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid())
      continue;
    const std::string name = path.filename().string();
    if (is_temp_name(name)) {
      // A live writer holds its temporary file for milliseconds; one this old was
      // left by a writer that crashed or was killed.
      const auto modified = std::chrono::system_clock::from_time_t(st.st_mtim.tv_sec);
      if (now - modified > kStaleTempAge) ::unlink(path.c_str());
      continue;
    }
    if (path.extension() != ".irisjit") continue;
    entries.push_back({path, static_cast<std::uint64_t>(st.st_size), st.st_mtim});
    total += static_cast<std::uint64_t>(st.st_size);
  }
  if (max_bytes_ == 0 || total <= max_bytes_) return;
  // get sets a hit's mtime to now, so the oldest mtime is the least recently used.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.used.tv_sec != b.used.tv_sec) return a.used.tv_sec < b.used.tv_sec;
    if (a.used.tv_nsec != b.used.tv_nsec) return a.used.tv_nsec < b.used.tv_nsec;
    return a.path < b.path;
  });
  for (const Entry& e : entries) {
    if (total <= max_bytes_) break;
    if (e.path == keep) continue;
    // ENOENT: another process evicted it first. Readers holding it open keep reading.
    if (::unlink(e.path.c_str()) == 0 || errno == ENOENT) total -= e.size;
  }
}

std::string cache_key(std::initializer_list<std::string_view> parts) {
  Sha256 h;
  for (std::string_view part : parts) {
    // Fixed-width length prefix: a part boundary can never be read as content.
    std::byte length[8];
    const std::uint64_t n = part.size();
    for (int i = 0; i < 8; ++i) length[i] = static_cast<std::byte>(n >> (8 * i));
    h.update(std::span<const std::byte>(length, 8));
    h.update(part);
  }
  const Sha256::Digest d = h.finish();
  return to_hex(d);
}

}  // namespace iris
