// irisc's NVRTC toolchain: iris kernels compile for every supported target from
// the embedded device headers, user mistakes come back as logs (never throws), and
// compiles from several threads at once succeed. SKIPPED where NVRTC is missing.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "compiler/toolchain/device_headers.hpp"
#include "compiler/toolchain/nvrtc.hpp"

namespace {

using irisc::toolchain::compile_cuda;
using irisc::toolchain::CudaCompileOptions;
using irisc::toolchain::CudaCompileResult;

// A fused kernel using the three families of device operations: bulk RMA,
// remote atomics and signals.
const char* const kIrisKernel = R"CUDA(
#include <iris/device.hpp>
using namespace iris::device;

extern "C" __global__ void fused(const __grid_constant__ Context ctx, char* sym,
                                 const char* local, usize bytes, unsigned* flag,
                                 float* acc, int peer) {
  block_put(ctx, sym, local, bytes, peer);
  __syncthreads();
  if (threadIdx.x == 0) {
    atomic_add(ctx, acc, 1.0f, peer);
    signal(ctx, flag, 1u, peer);
  }
}
)CUDA";

CudaCompileOptions for_arch(const std::string& arch) {
  CudaCompileOptions o;
  o.arch = arch;
  return o;
}

bool is_elf(const std::vector<std::byte>& image) {
  return image.size() > 4 && image[0] == std::byte{0x7f} && image[1] == std::byte{'E'} &&
         image[2] == std::byte{'L'} && image[3] == std::byte{'F'};
}

// ".target sm_90" must not match ".target sm_90a".
bool ptx_targets(const std::string& ptx, const std::string& target) {
  const std::string needle = ".target " + target;
  const std::size_t at = ptx.find(needle);
  if (at == std::string::npos) return false;
  const std::size_t next = at + needle.size();
  return next == ptx.size() || !std::isalnum(static_cast<unsigned char>(ptx[next]));
}

class Nvrtc : public testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!irisc::toolchain::nvrtc_available(&why)) GTEST_SKIP() << why;
  }
};

class NvrtcArch : public Nvrtc, public testing::WithParamInterface<const char*> {};

TEST_P(NvrtcArch, CompilesIrisKernelToCubinAndPtx) {
  const CudaCompileResult r = compile_cuda(kIrisKernel, "fused.cu", for_arch(GetParam()));
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_TRUE(is_elf(r.cubin)) << "cubin of " << r.cubin.size() << " bytes is not ELF";
  EXPECT_TRUE(ptx_targets(r.ptx, GetParam())) << r.ptx.substr(0, 400);
  EXPECT_NE(r.ptx.find(".entry fused"), std::string::npos);
  EXPECT_EQ(r.ptx.find('\0'), std::string::npos) << "PTX keeps NVRTC's trailing NUL";
}

INSTANTIATE_TEST_SUITE_P(Targets, NvrtcArch, testing::Values("sm_90a", "sm_90", "sm_80"),
                         [](const testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

// Whole tiles are stored with 16-byte vector stores. With one 16-byte chunk per thread
// (B = THREADS * 4) NVVM used to turn the fast path's vector store into four scalar
// stores, sharing them with the masked path; to a peer that halves the NVLink rate.
TEST_F(Nvrtc, WholeTileStoresAreVectorStores) {
  const char* const src = R"CUDA(
#include <iris/device.hpp>
using L = iris::device::tile::Layout<1024, 256, 4>;
extern "C" __global__ void all_store(const __grid_constant__ iris::device::Context ctx, float* dst,
                                     const float* src, long long n) {
  for (long long start = blockIdx.x * 1024ll; start < n; start += gridDim.x * 1024ll) {
    const long long extent = n - start < 1024 ? n - start : 1024;
    float t[L::kPerThread];
    iris::device::tile::load<L>(t, src + start, extent);
    for (int r = 0; r < ctx.world; ++r)
      iris::device::tile::store<L>(iris::device::translate(ctx, dst, r) + ctx.rank * n + start, t, extent);
  }
}
)CUDA";
  const CudaCompileResult r = compile_cuda(src, "all_store.cu", for_arch("sm_90a"));
  ASSERT_TRUE(r.ok) << r.log;
  std::size_t vector_stores = 0;
  for (std::size_t at = 0; (at = r.ptx.find("st.global.v4.b32", at)) != std::string::npos; ++at) ++vector_stores;
  EXPECT_GE(vector_stores, 1u) << r.ptx;
}

TEST_F(Nvrtc, SyntaxErrorIsReportedWithItsLine) {
  const std::string source =
      "#include <iris/device.hpp>\n"
      "extern \"C\" __global__ void broken(int* p) {\n"
      "  p[0] = undeclared_identifier_xyz;\n"
      "}\n";
  CudaCompileResult r;
  ASSERT_NO_THROW(r = compile_cuda(source, "broken.cu", for_arch("sm_90a")));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("broken.cu(3)"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("undeclared_identifier_xyz"), std::string::npos) << r.log;
  EXPECT_TRUE(r.cubin.empty());
}

TEST_F(Nvrtc, DefinesAreVisible) {
  const std::string source =
      "#if !defined(IRIS_TEST_FLAG) || IRIS_TEST_VALUE != 42\n"
      "#error defines did not arrive\n"
      "#endif\n"
      "extern \"C\" __global__ void k(int* p) { p[0] = IRIS_TEST_VALUE; }\n";
  CudaCompileOptions o = for_arch("sm_90");
  const CudaCompileResult without = compile_cuda(source, "defines.cu", o);
  EXPECT_FALSE(without.ok);
  EXPECT_NE(without.log.find("defines did not arrive"), std::string::npos) << without.log;

  o.defines = {"IRIS_TEST_FLAG", "IRIS_TEST_VALUE=42"};
  const CudaCompileResult with = compile_cuda(source, "defines.cu", o);
  EXPECT_TRUE(with.ok) << with.log;
}

TEST_F(Nvrtc, LineInfoAddsLocDirectives) {
  CudaCompileOptions o = for_arch("sm_90a");
  const CudaCompileResult plain = compile_cuda(kIrisKernel, "fused.cu", o);
  o.line_info = true;
  const CudaCompileResult lines = compile_cuda(kIrisKernel, "fused.cu", o);
  ASSERT_TRUE(plain.ok) << plain.log;
  ASSERT_TRUE(lines.ok) << lines.log;
  EXPECT_EQ(plain.ptx.find(".loc"), std::string::npos);
  EXPECT_NE(lines.ptx.find(".loc"), std::string::npos);
  EXPECT_TRUE(is_elf(lines.cubin));
}

TEST_F(Nvrtc, EveryOptLevelCompiles) {
  for (int level = 0; level <= 3; ++level) {
    CudaCompileOptions o = for_arch("sm_90a");
    o.opt_level = level;
    const CudaCompileResult r = compile_cuda(kIrisKernel, "fused.cu", o);
    EXPECT_TRUE(r.ok && is_elf(r.cubin)) << "opt_level " << level << ": " << r.log;
  }
}

TEST_F(Nvrtc, ConcurrentCompilesFromFourThreads) {
  constexpr int kThreads = 4;
  std::vector<CudaCompileResult> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &results] {
      CudaCompileOptions o = for_arch(t % 2 ? "sm_90a" : "sm_80");
      o.defines = {"IRIS_THREAD=" + std::to_string(t)};  // distinct programs
      results[t] = compile_cuda(kIrisKernel, "thread" + std::to_string(t) + ".cu", o);
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(results[t].ok) << "thread " << t << ": " << results[t].log;
    EXPECT_TRUE(is_elf(results[t].cubin)) << "thread " << t;
  }
}

TEST_F(Nvrtc, Bf16AndFp16HeadersFromTheToolkit) {
  const std::string source =
      "#include <cuda_bf16.h>\n"
      "#include <cuda_fp16.h>\n"
      "extern \"C\" __global__ void k(__nv_bfloat16* b, __half* h) {\n"
      "  b[0] = __hadd(b[0], b[1]);\n"
      "  h[0] = __hmul(h[0], h[1]);\n"
      "  b[2] = __float2bfloat16(__half2float(h[0]));\n"
      "}\n";
  const CudaCompileResult r = compile_cuda(source, "bf16.cu", for_arch("sm_90a"));
  EXPECT_TRUE(r.ok) << r.log;
  EXPECT_TRUE(is_elf(r.cubin));
}

TEST_F(Nvrtc, VirtualArchGivesPtxOnly) {
  const CudaCompileResult r = compile_cuda(kIrisKernel, "fused.cu", for_arch("compute_90a"));
  ASSERT_TRUE(r.ok) << r.log;
  EXPECT_TRUE(r.cubin.empty());
  EXPECT_TRUE(ptx_targets(r.ptx, "sm_90a"));
  EXPECT_NE(r.log.find("no cubin"), std::string::npos) << r.log;

  CudaCompileOptions ptx_only = for_arch("sm_90a");
  ptx_only.want_cubin = false;
  const CudaCompileResult p = compile_cuda(kIrisKernel, "fused.cu", ptx_only);
  ASSERT_TRUE(p.ok) << p.log;
  EXPECT_TRUE(p.cubin.empty());
  EXPECT_EQ(p.ptx, r.ptx);

  CudaCompileOptions cubin_only = for_arch("sm_90a");
  cubin_only.want_ptx = false;
  const CudaCompileResult c = compile_cuda(kIrisKernel, "fused.cu", cubin_only);
  ASSERT_TRUE(c.ok) << c.log;
  EXPECT_TRUE(c.ptx.empty());
  EXPECT_TRUE(is_elf(c.cubin));
}

TEST_F(Nvrtc, BadOptionsComeBackAsLogs) {
  CudaCompileOptions o = for_arch("banana");
  CudaCompileResult r = compile_cuda(kIrisKernel, "fused.cu", o);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("invalid arch \"banana\""), std::string::npos) << r.log;

  o = for_arch("sm_12345");  // well formed, but no such GPU
  r = compile_cuda(kIrisKernel, "fused.cu", o);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("sm_12345"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("supports sm_"), std::string::npos) << r.log;

  o = for_arch("sm_90a");
  o.opt_level = 7;
  r = compile_cuda(kIrisKernel, "fused.cu", o);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("opt_level 7"), std::string::npos) << r.log;

  o = for_arch("sm_90a");
  o.defines = {""};
  r = compile_cuda(kIrisKernel, "fused.cu", o);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("invalid define"), std::string::npos) << r.log;
}

// The embedded copies are used even when an -I directory holds other iris headers,
// so what is compiled always matches device_headers_digest().
TEST_F(Nvrtc, EmbeddedHeadersTakePrecedenceOverIncludeDirs) {
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) /
                                    ("irisc_fake_headers_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "iris");
  std::ofstream(dir / "iris" / "device.hpp") << "#error the on-disk header was used\n";
  CudaCompileOptions o = for_arch("sm_90a");
  o.include_dirs = {dir.string()};
  const CudaCompileResult r = compile_cuda(kIrisKernel, "fused.cu", o);
  std::filesystem::remove_all(dir);
  EXPECT_TRUE(r.ok) << r.log;
}

TEST_F(Nvrtc, VersionLooksLikeMajorMinor) {
  const std::string v = irisc::toolchain::nvrtc_version();
  EXPECT_TRUE(std::regex_match(v, std::regex("[0-9]+\\.[0-9]+"))) << v;
}

// Needs no NVRTC: the embedding itself.
TEST(EmbeddedDeviceHeaders, NamedAsIncludedAndSelfContained) {
  std::set<std::string> names;
  for (const auto& h : irisc::toolchain::device_headers()) names.insert(h.name);
  EXPECT_TRUE(names.count("iris/device.hpp"));
  EXPECT_TRUE(names.count("iris/device/memory/rma.hpp"));
  EXPECT_TRUE(names.count("iris/device/memory/atomics.hpp"));
  EXPECT_TRUE(names.count("iris/device/memory/signal.hpp"));
  // Every quoted include names an embedded header in full: NVRTC matches in-memory
  // headers by exact name only.
  const std::regex quoted("#[ \t]*include[ \t]*\"([^\"]+)\"");
  for (const auto& h : irisc::toolchain::device_headers()) {
    const std::string text = h.text;
    for (std::sregex_iterator it(text.begin(), text.end(), quoted), end; it != end; ++it)
      EXPECT_TRUE(names.count((*it)[1].str())) << h.name << " includes " << (*it)[1].str();
  }
  const std::string digest = irisc::toolchain::device_headers_digest();
  EXPECT_TRUE(std::regex_match(digest, std::regex("[0-9a-f]{64}"))) << digest;
}

// Run by ctest with IRISC_NVRTC_PATH=/nonexistent/libnvrtc.so (toolchain_tests.cmake).
TEST(NvrtcUnavailable, ExplainsAndThrowsToolchainError) {
  const char* path = std::getenv("IRISC_NVRTC_PATH");
  if (!path || std::filesystem::exists(path))
    GTEST_SKIP() << "run with IRISC_NVRTC_PATH set to a missing file";
  std::string why;
  EXPECT_FALSE(irisc::toolchain::nvrtc_available(&why));
  EXPECT_NE(why.find(path), std::string::npos) << why;
  EXPECT_THROW(compile_cuda(kIrisKernel, "fused.cu", CudaCompileOptions{}),
               irisc::toolchain::ToolchainError);
  EXPECT_THROW(irisc::toolchain::nvrtc_version(), irisc::toolchain::ToolchainError);
}

}  // namespace
