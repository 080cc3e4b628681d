// The JIT cache: hits and misses, corruption read as a miss, key construction,
// SHA-256 against the FIPS 180-4 vectors, threads and processes racing on the
// same keys without ever reading a partial entry, and the defences: directories and
// entries that are not this user's own are refused (the JIT then compiles without a
// cache), FIFOs and links planted at entry names, modes, the size cap, and the sweep
// of temporary files left by crashed writers.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "compiler/driver/compile.hpp"
#include "compiler/target/target.hpp"
#include "compiler/toolchain/amdgpu.hpp"
#include "compiler/toolchain/comgr.hpp"
#include "compiler/toolchain/nvrtc.hpp"
#include "iris/error.hpp"
#include "iris/jit.hpp"
#include "iris/log.hpp"
#include "jit/jit_cache.hpp"
#include "jit/sha256.hpp"

namespace {

namespace fs = std::filesystem;
using iris::JitCache;

std::vector<std::byte> bytes_of(std::string_view text) {
  const auto* p = reinterpret_cast<const std::byte*>(text.data());
  return {p, p + text.size()};
}

// A payload that names its writer in its first bytes and is otherwise a pattern
// derived from (key, writer), so a reader can tell a whole payload from a mix.
std::vector<std::byte> payload(int key, int writer, std::size_t size = 256 * 1024) {
  std::vector<std::byte> out(size);
  unsigned state = 2166136261u ^ static_cast<unsigned>(key * 131 + writer);
  for (std::size_t i = 0; i < size; ++i) {
    state = state * 1664525u + 1013904223u;
    out[i] = static_cast<std::byte>(state >> 24);
  }
  out[0] = static_cast<std::byte>(key);
  out[1] = static_cast<std::byte>(writer);
  return out;
}

bool is_whole_payload(int key, const std::vector<std::byte>& got) {
  if (got.size() < 2 || got[0] != static_cast<std::byte>(key)) return false;
  return got == payload(key, std::to_integer<int>(got[1]));
}

std::string key_name(int k) { return iris::cache_key({"race", std::to_string(k)}); }

class JitCacheTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::path(testing::TempDir()) / "iris_jit_cache_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

TEST_F(JitCacheTest, MissThenHit) {
  JitCache cache(dir_ / "nested" / "cache");
  EXPECT_TRUE(fs::is_directory(cache.dir()));
  const std::string key = iris::cache_key({"kernel", "sm_90a"});
  EXPECT_FALSE(cache.get(key).has_value());
  const std::vector<std::byte> data = bytes_of("a code object");
  ASSERT_TRUE(cache.put(key, data));
  const auto got = cache.get(key);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, data);
  EXPECT_FALSE(cache.get(iris::cache_key({"kernel", "sm_80"})).has_value());
}

TEST_F(JitCacheTest, EmptyPayloadIsAHitNotAMiss) {
  JitCache cache(dir_);
  ASSERT_TRUE(cache.put("empty", {}));
  const auto got = cache.get("empty");
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(got->empty());
}

TEST_F(JitCacheTest, AnyKeyStringStaysInsideTheDirectory) {
  JitCache cache(dir_);
  const std::string key = "../../etc/passwd with spaces/and slashes";
  ASSERT_TRUE(cache.put(key, bytes_of("x")));
  EXPECT_EQ(cache.entry_path(key).parent_path(), cache.dir());
  EXPECT_EQ(cache.get(key), bytes_of("x"));
}

TEST_F(JitCacheTest, CorruptOrTruncatedEntryIsAMissAndPutRepairsIt) {
  JitCache cache(dir_);
  const std::string key = iris::cache_key({"corrupt"});
  const std::vector<std::byte> data = payload(1, 0, 4096);
  const fs::path file = cache.entry_path(key);

  auto damage = [&](auto&& how) {
    ASSERT_TRUE(cache.put(key, data));
    ASSERT_EQ(cache.get(key), data);
    how();
    EXPECT_FALSE(cache.get(key).has_value());
    ASSERT_TRUE(cache.put(key, data));  // repair
    EXPECT_EQ(cache.get(key), data);
  };
  // One payload byte flipped.
  damage([&] {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(file) - 100));
    f.put('\x55' ^ static_cast<char>(std::to_integer<int>(data[data.size() - 100])));
  });
  damage([&] { fs::resize_file(file, fs::file_size(file) - 1); });  // last byte lost
  damage([&] { fs::resize_file(file, 10); });                       // inside the header
  damage([&] { fs::resize_file(file, 0); });                        // empty
  damage([&] { fs::resize_file(file, fs::file_size(file) + 7); });  // trailing junk
  damage([&] { std::ofstream(file, std::ios::binary | std::ios::trunc) << "not an entry"; });
  // A whole, valid entry, but written for another key.
  damage([&] {
    const std::string other = iris::cache_key({"other"});
    ASSERT_TRUE(cache.put(other, data));
    fs::copy_file(cache.entry_path(other), file, fs::copy_options::overwrite_existing);
  });
}

TEST_F(JitCacheTest, AFileWhereTheDirectoryShouldBeTurnsTheCacheOff) {
  std::ofstream(dir_ / "a_file") << "x";
  for (const fs::path& dir : {dir_ / "a_file", dir_ / "a_file" / "below"}) {
    std::optional<JitCache> cache;
    ASSERT_NO_THROW(cache.emplace(dir)) << dir;
    EXPECT_FALSE(cache->usable()) << dir;
    EXPECT_FALSE(cache->put("k", bytes_of("x"))) << dir;
    EXPECT_FALSE(cache->get("k").has_value()) << dir;
  }
}

TEST_F(JitCacheTest, VanishedDirectoryMakesPutReturnFalse) {
  JitCache cache(dir_ / "gone");
  fs::remove_all(cache.dir());
  EXPECT_FALSE(cache.put("k", bytes_of("x")));
  EXPECT_FALSE(cache.get("k").has_value());
}

TEST_F(JitCacheTest, UnwritableDirectoryMakesPutReturnFalse) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes to read-only directories";
  JitCache cache(dir_ / "ro");
  ASSERT_EQ(::chmod(cache.dir().c_str(), 0500), 0);
  EXPECT_FALSE(cache.put("k", bytes_of("x")));
  EXPECT_FALSE(cache.get("k").has_value());
  ::chmod(cache.dir().c_str(), 0700);
}

TEST(CacheKey, DiffersWhenAnyPartDiffers) {
  const std::string base = iris::cache_key({"src", "sm_90a", "O3"});
  EXPECT_EQ(base.size(), 64u);
  EXPECT_EQ(base, iris::cache_key({"src", "sm_90a", "O3"}));
  EXPECT_NE(base, iris::cache_key({"src!", "sm_90a", "O3"}));
  EXPECT_NE(base, iris::cache_key({"src", "sm_80", "O3"}));
  EXPECT_NE(base, iris::cache_key({"src", "sm_90a", "O2"}));
  EXPECT_NE(base, iris::cache_key({"src", "sm_90a"}));
  EXPECT_NE(iris::cache_key({"ab", "c"}), iris::cache_key({"a", "bc"}));
  EXPECT_NE(iris::cache_key({"a"}), iris::cache_key({"a", ""}));
  EXPECT_NE(iris::cache_key({}), iris::cache_key({""}));
}

TEST(Sha256, FipsTestVectors) {
  EXPECT_EQ(iris::sha256_hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(iris::sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(iris::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(iris::sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                             "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(iris::sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, IncrementalUpdatesMatchOneShot) {
  const std::string text(1000000, 'a');
  for (std::size_t chunk : {1u, 55u, 56u, 63u, 64u, 65u, 1000u}) {
    iris::Sha256 h;
    for (std::size_t at = 0; at < text.size(); at += chunk)
      h.update(std::string_view(text).substr(at, chunk));
    const auto digest = h.finish();
    EXPECT_EQ(iris::to_hex(digest),
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        << "chunk " << chunk;
  }
  // Lengths around the padding boundary (55/56 bytes need one/two final blocks).
  EXPECT_EQ(iris::sha256_hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(iris::sha256_hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
}

TEST(JitCacheDefaultDir, FollowsTheEnvironment) {
  auto saved = [](const char* name) {
    const char* v = std::getenv(name);
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  const auto iris_dir = saved("IRIS_CACHE_DIR"), xdg = saved("XDG_CACHE_HOME"),
             home = saved("HOME");
  ::setenv("IRIS_CACHE_DIR", "/somewhere/iris", 1);
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  ::setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(JitCache::default_dir(), fs::path("/somewhere/iris"));
  ::unsetenv("IRIS_CACHE_DIR");
  EXPECT_EQ(JitCache::default_dir(), fs::path("/xdg/iris"));
  ::setenv("XDG_CACHE_HOME", "relative", 1);  // ignored, as the XDG spec says
  EXPECT_EQ(JitCache::default_dir(), fs::path("/home/someone/.cache/iris"));
  ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(JitCache::default_dir(), fs::path("/home/someone/.cache/iris"));
  auto restore = [](const char* name, const std::optional<std::string>& v) {
    if (v)
      ::setenv(name, v->c_str(), 1);
    else
      ::unsetenv(name);
  };
  restore("IRIS_CACHE_DIR", iris_dir);
  restore("XDG_CACHE_HOME", xdg);
  restore("HOME", home);
}

constexpr int kKeys = 4;
constexpr int kIterations = 50;

// One racer: puts its own version of every key and reads whatever is there.
// Returns the number of bad reads: a partial or mixed payload, or a miss on a key
// this racer has already stored (entries are replaced atomically, never removed,
// so once stored a key must always hit; a checksum alone would let a
// half-written entry pass as a miss).
int race(JitCache& cache, int writer) {
  int bad = 0;
  bool stored[kKeys] = {};
  for (int i = 0; i < kIterations; ++i) {
    const int k = (i + writer) % kKeys;
    if (cache.put(key_name(k), payload(k, writer)))
      stored[k] = true;
    else
      ++bad;
    for (int r = 0; r < kKeys; ++r) {
      const auto got = cache.get(key_name(r));
      if (got ? !is_whole_payload(r, *got) : stored[r]) ++bad;
    }
  }
  return bad;
}

bool only_entries_left(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() != ".irisjit") return false;
  return true;
}

TEST_F(JitCacheTest, ThreadsRacingNeverSeeAPartialEntry) {
  JitCache cache(dir_);
  constexpr int kThreads = 8;
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back([&, t] { bad += race(cache, t); });
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  for (int k = 0; k < kKeys; ++k) {
    const auto got = cache.get(key_name(k));
    ASSERT_TRUE(got.has_value()) << "key " << k;
    EXPECT_TRUE(is_whole_payload(k, *got));
  }
  EXPECT_TRUE(only_entries_left(dir_)) << "temporary files were left behind";
}

TEST_F(JitCacheTest, ProcessesRacingNeverSeeAPartialEntry) {
  constexpr int kProcesses = 4;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // The child opens the cache itself, as a separate program would.
      JitCache cache(dir_);
      ::_exit(race(cache, 100 + p) == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "a child process read a partial or corrupt entry (status " << status << ")";
  }
  JitCache cache(dir_);
  for (int k = 0; k < kKeys; ++k) {
    const auto got = cache.get(key_name(k));
    ASSERT_TRUE(got.has_value()) << "key " << k;
    EXPECT_TRUE(is_whole_payload(k, *got));
  }
  EXPECT_TRUE(only_entries_left(dir_)) << "temporary files were left behind";
}

// ---- The defences: directories, planted files, modes, the cap, the sweep ----

// Sets (or, with nullptr, unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// How many lines of stderr written by `body` mention `text`.
template <class Body>
int warnings_mentioning(const std::string& text, Body&& body) {
  testing::internal::CaptureStderr();
  body();
  const std::string err = testing::internal::GetCapturedStderr();
  int count = 0;
  for (std::size_t at = err.find(text); at != std::string::npos; at = err.find(text, at + 1)) ++count;
  return count;
}

bool warnings_enabled() { return iris::log_level() >= iris::LogLevel::warn; }

mode_t mode_of(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// Sets a file's mtime (and atime) to `seconds_ago` before now, without following links.
void age(const fs::path& path, int seconds_ago) {
  struct timespec times[2];
  ::clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= seconds_ago;
  times[1] = times[0];
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW), 0) << path;
}

// Expects `cache` to be off: no entry is stored or read, and nothing is written.
void expect_off(JitCache& cache) {
  EXPECT_FALSE(cache.usable()) << cache.dir();
  EXPECT_FALSE(cache.put("k", bytes_of("x"))) << cache.dir();
  EXPECT_FALSE(cache.get("k").has_value()) << cache.dir();
}

TEST_F(JitCacheTest, GroupOrOtherWritableDirectoryIsRefusedWithOneWarning) {
  for (mode_t mode : {0770, 0702, 0777}) {
    const fs::path dir = dir_ / ("mode" + std::to_string(mode));
    // A good entry written before the directory was opened up is not read after.
    ASSERT_TRUE(JitCache(dir).put("k", bytes_of("x")));
    ASSERT_EQ(::chmod(dir.c_str(), mode), 0);
    const int warnings = warnings_mentioning(dir.string(), [&] {
      JitCache first(dir);
      expect_off(first);
      JitCache second(dir);
      expect_off(second);
    });
    if (warnings_enabled()) {
      EXPECT_EQ(warnings, 1) << "mode " << std::oct << mode;
    }
  }
}

TEST_F(JitCacheTest, SymlinkedDirectoryIsRefused) {
  const fs::path real = dir_ / "real";
  ASSERT_TRUE(JitCache(real).put("k", bytes_of("x")));
  fs::create_directory_symlink(real, dir_ / "link");
  JitCache via_link(dir_ / "link");
  expect_off(via_link);
  // A trailing separator would make lstat look through the link.
  JitCache via_link_slash(dir_ / "link" / "");
  expect_off(via_link_slash);
  EXPECT_TRUE(JitCache(real).get("k").has_value());  // the real directory is fine
}

TEST_F(JitCacheTest, DirectoryOwnedByAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a directory to another user";
  const fs::path dir = dir_ / "theirs";
  ASSERT_TRUE(JitCache(dir).put("k", bytes_of("x")));
  ASSERT_EQ(::chown(dir.c_str(), 65534, 65534), 0);
  JitCache cache(dir);
  expect_off(cache);
}

TEST_F(JitCacheTest, EntryOwnedByAnotherUserIsAMiss) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  JitCache cache(dir_);
  ASSERT_TRUE(cache.put("k", bytes_of("x")));
  ASSERT_EQ(::chown(cache.entry_path("k").c_str(), 65534, 65534), 0);
  EXPECT_FALSE(cache.get("k").has_value());
}

TEST_F(JitCacheTest, DirectoryIs0700AndEntries0600WhateverTheUmask) {
  const mode_t saved = ::umask(0);
  JitCache cache(dir_ / "new" / "cache");
  const bool stored = cache.put("k", bytes_of("x"));
  ::umask(saved);
  ASSERT_TRUE(cache.usable());
  ASSERT_TRUE(stored);
  EXPECT_EQ(mode_of(dir_ / "new"), 0700u);
  EXPECT_EQ(mode_of(cache.dir()), 0700u);
  EXPECT_EQ(mode_of(cache.entry_path("k")), 0600u);
}

TEST_F(JitCacheTest, FifoAtAnEntryPathIsAMissWithoutBlocking) {
  JitCache cache(dir_);
  const std::string key = iris::cache_key({"fifo"});
  ASSERT_EQ(::mkfifo(cache.entry_path(key).c_str(), 0600), 0);
  // get runs in a child, so a regression that blocks on the FIFO fails the test
  // after the watchdog's timeout instead of hanging it.
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ::_exit(cache.get(key).has_value() ? 1 : 0);
  int status = 0;
  pid_t done = 0;
  while ((done = ::waitpid(pid, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const auto elapsed = std::chrono::steady_clock::now() - t0;
  if (done == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    FAIL() << "get blocked on a FIFO at the entry's path";
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a FIFO read as a hit";
  EXPECT_LT(elapsed, std::chrono::seconds(1));
  // put replaces the FIFO with an entry.
  ASSERT_TRUE(cache.put(key, bytes_of("x")));
  EXPECT_EQ(cache.get(key), bytes_of("x"));
}

TEST_F(JitCacheTest, SymlinkAtAnEntryPathIsNotFollowed) {
  JitCache cache(dir_ / "cache");
  JitCache elsewhere(dir_ / "elsewhere");
  const std::string key = iris::cache_key({"link"});
  // A whole, valid entry for this very key, reachable only through the link.
  ASSERT_TRUE(elsewhere.put(key, bytes_of("planted")));
  fs::create_symlink(elsewhere.entry_path(key), cache.entry_path(key));
  EXPECT_FALSE(cache.get(key).has_value());
  // put replaces the link itself and leaves its target alone.
  ASSERT_TRUE(cache.put(key, bytes_of("mine")));
  EXPECT_FALSE(fs::is_symlink(cache.entry_path(key)));
  EXPECT_EQ(cache.get(key), bytes_of("mine"));
  EXPECT_EQ(elsewhere.get(key), bytes_of("planted"));
}

TEST_F(JitCacheTest, TinyCapEvictsTheLeastRecentlyUsed) {
  constexpr std::size_t kPayload = 1000;
  constexpr std::uint64_t kEntry = 80 + kPayload;  // header + payload
  JitCache cache(dir_, 3 * kEntry);
  const std::vector<std::string> keys = {"a", "b", "c", "d"};
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(cache.put(keys[i], payload(i, 0, kPayload)));
  // Oldest first: a, b, c. Then a hit makes a the most recently used.
  age(cache.entry_path("a"), 300);
  age(cache.entry_path("b"), 200);
  age(cache.entry_path("c"), 100);
  ASSERT_TRUE(cache.get("a").has_value());
  ASSERT_TRUE(cache.put("d", payload(3, 0, kPayload)));  // 4 entries > cap: b goes
  EXPECT_TRUE(cache.get("a").has_value());
  EXPECT_FALSE(cache.get("b").has_value());
  EXPECT_TRUE(cache.get("c").has_value());
  EXPECT_TRUE(cache.get("d").has_value());
  EXPECT_FALSE(fs::exists(cache.entry_path("b")));
}

TEST_F(JitCacheTest, EntryLargerThanTheCapIsKeptUntilTheNextPut) {
  JitCache cache(dir_, 100);
  ASSERT_TRUE(cache.put("big", payload(1, 0, 4096)));
  EXPECT_TRUE(cache.get("big").has_value());  // the newest entry is never evicted
  age(cache.entry_path("big"), 10);
  ASSERT_TRUE(cache.put("bigger", payload(2, 0, 8192)));
  EXPECT_FALSE(cache.get("big").has_value());
  EXPECT_TRUE(cache.get("bigger").has_value());
}

TEST_F(JitCacheTest, StaleTemporaryFilesAreSweptAndFreshOnesKept) {
  JitCache cache(dir_);
  const fs::path stale = dir_ / ".x.irisjit.tmp.999999.0";
  const fs::path fresh = dir_ / ".y.irisjit.tmp.999999.1";
  const fs::path other = dir_ / "notes.txt";  // not the cache's: left alone however old
  for (const fs::path& p : {stale, fresh, other}) std::ofstream(p) << "partial";
  age(stale, 2 * 3600);
  age(other, 2 * 3600);
  ASSERT_TRUE(cache.put("k", bytes_of("x")));
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(fresh));
  EXPECT_TRUE(fs::exists(other));
}

TEST(JitCacheMaxBytes, FollowsTheEnvironment) {
  {
    ScopedEnv unset("IRIS_CACHE_MAX_BYTES", nullptr);
    EXPECT_EQ(JitCache::default_max_bytes(), JitCache::kDefaultMaxBytes);
    EXPECT_EQ(JitCache::kDefaultMaxBytes, 1ull << 30);
  }
  {
    ScopedEnv set("IRIS_CACHE_MAX_BYTES", "64KiB");
    EXPECT_EQ(JitCache::default_max_bytes(), 65536u);
  }
  {
    ScopedEnv none("IRIS_CACHE_MAX_BYTES", "0");
    EXPECT_EQ(JitCache::default_max_bytes(), 0u);
  }
  {
    ScopedEnv junk("IRIS_CACHE_MAX_BYTES", "lots");
    std::uint64_t got = 0;
    const int warnings = warnings_mentioning("IRIS_CACHE_MAX_BYTES", [&] {
      got = JitCache::default_max_bytes();
      JitCache::default_max_bytes();
    });
    EXPECT_EQ(got, JitCache::kDefaultMaxBytes);
    if (warnings_enabled()) {
      EXPECT_EQ(warnings, 1);
    }
  }
}

// HOME where no cache can be made, and nothing else set: the cache is off, with one
// warning, and nothing throws. A HOME that is a regular file makes mkdir fail even
// for root; a read-only HOME only stops other users.
TEST_F(JitCacheTest, UnwritableHomeTurnsTheCacheOffWithOneWarning) {
  ScopedEnv no_iris("IRIS_CACHE_DIR", nullptr);
  ScopedEnv no_xdg("XDG_CACHE_HOME", nullptr);
  std::vector<fs::path> homes = {dir_ / "home_is_a_file"};
  std::ofstream(homes[0]) << "x";
  if (::geteuid() != 0) {
    homes.push_back(dir_ / "read_only_home");
    fs::create_directory(homes[1]);
    ::chmod(homes[1].c_str(), 0500);
  }
  for (const fs::path& home : homes) {
    ScopedEnv env_home("HOME", home.c_str());
    const fs::path dir = JitCache::default_dir();
    EXPECT_EQ(dir, home / ".cache" / "iris");
    const int warnings = warnings_mentioning(dir.string(), [&] {
      for (int i = 0; i < 3; ++i) {
        std::optional<JitCache> cache;
        ASSERT_NO_THROW(cache.emplace(JitCache::default_dir()));
        expect_off(*cache);
      }
    });
    if (warnings_enabled()) {
      EXPECT_EQ(warnings, 1) << home;
    }
  }
  if (homes.size() > 1) ::chmod(homes[1].c_str(), 0700);
}

// ---- The JIT's key ----

TEST(JitCacheKey, DifferentDefineSetsNeverShareAKey) {
  const std::string src = "kernel k() {}";
  auto key = [&](std::map<std::string, std::int64_t> defines) {
    iris::JitOptions o;
    o.defines = std::move(defines);
    return iris::jit_cache_key(src, "k.iris", o);
  };
  // Each pair would have been one string under "NAME=VALUE;" concatenation.
  EXPECT_NE(key({{"A=1;B", 2}}), key({{"A", 1}, {"B", 2}}));
  EXPECT_NE(key({{"A", 1}}), key({{"A=1;", 0}}));
  EXPECT_NE(key({{"A=1", 2}}), key({{"A", 12}}));
  EXPECT_NE(key({}), key({{"A", 0}}));
  EXPECT_NE(key({{"A", 1}}), key({{"A", -1}}));
  EXPECT_EQ(key({{"A", 1}, {"B", 2}}), key({{"B", 2}, {"A", 1}}));  // a set: order-free
}

TEST(JitCacheKey, CoversSourceNameTargetAndCompilerIdentity) {
  iris::JitOptions o;
  const std::string base = iris::jit_cache_key("src", "k.iris", o);
  EXPECT_EQ(base.size(), 64u);
  EXPECT_EQ(base, iris::jit_cache_key("src", "k.iris", o));
  EXPECT_NE(base, iris::jit_cache_key("src ", "k.iris", o));
  EXPECT_NE(base, iris::jit_cache_key("src", "j.iris", o));
  o.target = "sm_80";
  EXPECT_NE(base, iris::jit_cache_key("src", "k.iris", o));
  // The kernels asked for (irisc --kernel): a compile of one kernel is not the file's.
  const std::string all = iris::jit_cache_key("src", "k.iris", o);
  o.kernels = {"a", "b"};
  const std::string two = iris::jit_cache_key("src", "k.iris", o);
  EXPECT_NE(all, two);
  o.kernels = {"ab"};
  EXPECT_NE(two, iris::jit_cache_key("src", "k.iris", o));
  o.kernels.clear();
  EXPECT_EQ(all, iris::jit_cache_key("src", "k.iris", o));

  const irisc::CompilerIdentity id = irisc::compiler_identity();
  EXPECT_EQ(id.build_id.size(), 64u) << "the build id is a SHA-256 computed by CMake";
  EXPECT_EQ(id.headers_digest.size(), 64u);
  if (irisc::toolchain::nvrtc_available()) {
    EXPECT_NE(id.nvrtc.find(irisc::toolchain::nvrtc_version()), std::string::npos) << id.nvrtc;
    EXPECT_NE(id.cuda_headers.find("CUDA_VERSION"), std::string::npos) << id.cuda_headers;
  }
  // AMD targets key on the identity of the compiler that compiles them.
  const irisc::Target& gfx942 = *irisc::find_target("gfx942");
  const irisc::Target& gfx90a = *irisc::find_target("gfx90a");
  if (irisc::toolchain::amdgpu_toolchain_available()) {
    EXPECT_NE(irisc::amd_compiler_identity(gfx942).find("clang version"), std::string::npos);
  }
  if (irisc::toolchain::comgr_available("gfx90a")) {
    EXPECT_EQ(irisc::amd_compiler_identity(gfx90a).rfind("comgr ", 0), 0u) << irisc::amd_compiler_identity(gfx90a);
  }
  o.target = "gfx942";
  const std::string key942 = iris::jit_cache_key("src", "k.iris", o);
  o.target = "gfx90a";
  EXPECT_NE(key942, iris::jit_cache_key("src", "k.iris", o));
}

TEST_F(JitCacheTest, KeyCoversTheTextsOfImportedFiles) {
  // main.iris imports lib.iris beside it, which imports deep.iris from an -I folder.
  fs::create_directory(dir_ / "inc");
  auto write = [](const fs::path& p, const std::string& text) { std::ofstream(p) << text; };
  write(dir_ / "lib.iris", "import \"deep.iris\";\nfn twice(x: f32) { return x * 2.0; }\n");
  write(dir_ / "inc" / "deep.iris", "fn one() { return 1; }\n");
  const std::string main = "import \"lib.iris\";\nkernel k(x: tensor<f32>[N]) { store(x[0], twice(1.0)); }\n";
  const std::string name = (dir_ / "main.iris").string();
  iris::JitOptions o;
  o.include_dirs = {(dir_ / "inc").string()};
  const std::string base = iris::jit_cache_key(main, name, o);
  EXPECT_EQ(base, iris::jit_cache_key(main, name, o));

  write(dir_ / "lib.iris", "import \"deep.iris\";\nfn twice(x: f32) { return x + x; }\n");
  const std::string lib_edited = iris::jit_cache_key(main, name, o);
  EXPECT_NE(base, lib_edited) << "an edit to a directly imported file kept the key";
  write(dir_ / "inc" / "deep.iris", "fn one() { return 2 - 1; }\n");
  EXPECT_NE(lib_edited, iris::jit_cache_key(main, name, o)) << "an edit to a file imported through another kept the key";
  // The standard library resolves too (its texts are part of the build id as well).
  EXPECT_NE(iris::jit_cache_key("import \"ccl/common.iris\";\nkernel k() {}\n", "k.iris", o),
            iris::jit_cache_key("kernel k() {}\n", "k.iris", o));
}

// ---- The JIT through an unusable cache ----

constexpr const char* kScaleKernel = R"(kernel scale<B: int = 1024>(x: tensor<f32>[N], factor: f32) {
    for i in blocks(N, B) {
        store(x[i], load(x[i]) * factor);
    }
}
)";

TEST_F(JitCacheTest, JitCompilesThroughARefusedCacheAndHitsAGoodOne) {
  if (!irisc::toolchain::nvrtc_available()) GTEST_SKIP() << "NVRTC cannot be loaded";
  iris::JitOptions o;
  o.target = "sm_90a";
  o.cache_dir = dir_ / "open";
  fs::create_directory(o.cache_dir);
  ASSERT_EQ(::chmod(o.cache_dir.c_str(), 0777), 0);
  iris::JitResult r;
  ASSERT_NO_THROW(r = iris::jit_compile(kScaleKernel, "scale.iris", o));
  EXPECT_FALSE(r.cache_hit);
  EXPECT_FALSE(r.code.empty());
  EXPECT_TRUE(fs::is_empty(o.cache_dir)) << "a refused cache was written to";

  o.cache_dir = dir_ / "good";
  EXPECT_FALSE(iris::jit_compile(kScaleKernel, "scale.iris", o).cache_hit);
  const iris::JitResult hit = iris::jit_compile(kScaleKernel, "scale.iris", o);
  EXPECT_TRUE(hit.cache_hit);
  EXPECT_EQ(hit.code, r.code);
}

// Run by ctest with IRISC_NVRTC_PATH=/nonexistent/libnvrtc.so (toolchain_tests.cmake):
// a GPU compile says what the JIT needs and which variable to set; the host target
// needs no NVRTC.
TEST(JitWithoutNvrtc, GpuCompileNamesTheLibraryAndTheVariable) {
  const char* path = std::getenv("IRISC_NVRTC_PATH");
  if (!path || fs::exists(path)) GTEST_SKIP() << "run with IRISC_NVRTC_PATH set to a missing file";
  iris::JitOptions o;
  o.use_cache = false;
  o.target = "sm_90a";
  std::string error;
  try {
    iris::jit_compile(kScaleKernel, "scale.iris", o);
  } catch (const iris::Error& e) {
    error = e.what();
  }
  EXPECT_EQ(error.rfind("the JIT compiles .iris for sm_90a with NVRTC, the CUDA toolkit's run-time compiler library "
                        "(libnvrtc.so.12 or .13), and found none: install the CUDA toolkit (or its NVRTC package) or "
                        "set IRISC_NVRTC_PATH to the library file.",
                        0),
            0u)
      << error;
  EXPECT_NE(error.find(path), std::string::npos) << error;
  o.target = "host";
  EXPECT_FALSE(iris::jit_compile(kScaleKernel, "scale.iris", o).code.empty());
}

// Kernels asked for by name: only they are compiled (the file is still checked whole),
// and a name the file has no kernel of is an error that lists the ones it has.
TEST(JitKernels, CompilesOnlyTheKernelsAskedFor) {
  const std::string src = std::string(kScaleKernel) + R"(
kernel zero<B: int = 256>(y: tensor<f32>[N]) {
    for i in blocks(N, B) {
        store(y[i], 0.0);
    }
}
)";
  irisc::CompileOptions co;
  co.target = "host";
  co.stop_after = irisc::Stage::tir;
  co.kernels = {"zero"};
  const irisc::CompileResult r = irisc::compile(irisc::SourceBuffer("two.iris", src), co);
  ASSERT_TRUE(r.ok) << r.rendered_diagnostics;
  EXPECT_NE(r.tir.find("kernel zero("), std::string::npos) << r.tir;
  EXPECT_EQ(r.tir.find("kernel scale("), std::string::npos) << r.tir;
  iris::JitOptions o;
  o.target = "host";
  o.use_cache = false;
  o.kernels = {"nope"};
  std::string error;
  try {
    iris::jit_compile(src, "two.iris", o);
  } catch (const iris::Error& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("no kernel named 'nope' (its kernels: scale, zero)"), std::string::npos) << error;
}

// A compile that takes longer than note_after_seconds says so (here every compile does:
// the threshold is a nanosecond), and with 0 nothing is said.
TEST(JitNotes, ALongCompileSaysHowLongItTook) {
  iris::JitOptions o;
  o.target = "host";
  o.use_cache = false;
  o.note_after_seconds = 1e-9;
  ::testing::internal::CaptureStderr();
  iris::jit_compile(kScaleKernel, "noted.iris", o);
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("jit: compiled noted.iris for host in"), std::string::npos) << said;
  o.note_after_seconds = 0;
  ::testing::internal::CaptureStderr();
  iris::jit_compile(kScaleKernel, "quiet.iris", o);
  const std::string quiet = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(quiet.find("quiet.iris"), std::string::npos) << quiet;
}

}  // namespace
