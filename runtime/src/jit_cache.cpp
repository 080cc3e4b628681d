// The JIT cache's on-disk format and its atomic write protocol (see jit_cache.hpp).
//
// An entry file is an 80-byte header followed by the payload:
//   magic "IRISJIT1" | SHA-256 of the key | payload length (u64, little-endian) |
//   SHA-256 of the payload
// The key digest catches two keys sharing a file name; the length and payload
// digest catch truncation and corruption. Any mismatch reads as a miss.
#include "jit_cache.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "iris/error.hpp"
#include "iris/log.hpp"
#include "sha256.hpp"

namespace iris {
namespace {

constexpr char kMagic[8] = {'I', 'R', 'I', 'S', 'J', 'I', 'T', '1'};
constexpr std::size_t kDigestBytes = 32;
constexpr std::size_t kHeaderBytes = sizeof(kMagic) + kDigestBytes + 8 + kDigestBytes;
constexpr std::size_t kMaxPlainKey = 128;

std::string env(const char* name) {
  const char* value = std::getenv(name);
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

// Reads the whole file, or nullopt on any error.
std::optional<std::vector<std::byte>> read_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<std::vector<std::byte>> out;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    std::vector<std::byte> bytes(static_cast<std::size_t>(st.st_size));
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    if (done == bytes.size()) out = std::move(bytes);
  }
  ::close(fd);
  return out;
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

// Unique among the threads and processes sharing the directory: pid + a counter.
std::filesystem::path temp_path(const std::filesystem::path& dir, const std::string& entry_name) {
  static std::atomic<unsigned long long> counter{0};
  return dir / ("." + entry_name + ".tmp." + std::to_string(::getpid()) + "." +
                std::to_string(counter.fetch_add(1)));
}

// Makes the rename durable; best effort, since the entry is already visible.
void sync_dir(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

JitCache::JitCache(std::filesystem::path dir) : dir_(std::move(dir)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (!std::filesystem::is_directory(dir_)) {
    throw Error("JIT cache directory " + dir_.string() + " cannot be created" +
                (ec ? " (" + ec.message() + ")" : std::string(" (a file of that name exists)")) +
                "; set IRIS_CACHE_DIR to a writable directory");
  }
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

std::filesystem::path JitCache::entry_path(const std::string& key) const {
  return dir_ / ((plain_key(key) ? key : sha256_hex(key)) + ".irisjit");
}

std::optional<std::vector<std::byte>> JitCache::get(const std::string& key) const {
  std::optional<std::vector<std::byte>> file = read_file(entry_path(key));
  if (!file) return std::nullopt;
  return decode(key, std::move(*file));
}

bool JitCache::put(const std::string& key, std::span<const std::byte> bytes) {
  const std::filesystem::path final_path = entry_path(key);
  const std::filesystem::path temp = temp_path(dir_, final_path.filename().string());
  const std::vector<std::byte> file = encode(key, bytes);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    log_warn("JIT cache: cannot create ", temp.string(), ": ", std::strerror(errno),
             " (the code object is not cached)");
    return false;
  }
  // fsync before rename: otherwise a crash could leave the new name on an empty file.
  bool ok = write_all(fd, file.data(), file.size()) && ::fsync(fd) == 0;
  const int saved_errno = errno;
  ok = (::close(fd) == 0) && ok;
  if (ok && ::rename(temp.c_str(), final_path.c_str()) == 0) {
    sync_dir(dir_);
    return true;
  }
  log_warn("JIT cache: cannot write ", final_path.string(), ": ",
           std::strerror(ok ? errno : saved_errno), " (the code object is not cached)");
  ::unlink(temp.c_str());
  return false;
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
