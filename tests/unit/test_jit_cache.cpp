// The JIT cache: hits and misses, corruption read as a miss, key construction,
// SHA-256 against the FIPS 180-4 vectors, and threads and processes racing on the
// same keys without ever reading a partial entry.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "iris/error.hpp"
#include "jit_cache.hpp"
#include "sha256.hpp"

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

TEST_F(JitCacheTest, ConstructorRejectsAFile) {
  std::ofstream(dir_ / "a_file") << "x";
  EXPECT_THROW(JitCache(dir_ / "a_file"), iris::Error);
  EXPECT_THROW(JitCache(dir_ / "a_file" / "below"), iris::Error);
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

}  // namespace
