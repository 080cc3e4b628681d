// gfx942 code, instruction by instruction: amdgpu/memory_model.iris compiled to a code
// object and disassembled with llvm-objdump, checked against the memory model of LLVM's
// AMDGPUUsage for GFX942 at system scope (what another GPU of the node or the host
// observes) and for the matrix cores:
//   release store   buffer_wbl2 sc0 sc1; s_waitcnt vmcnt(0); global_store ... sc0 sc1
//   acquire load    global_load ... sc0 sc1; s_waitcnt vmcnt(0); buffer_inv sc0 sc1
//   remote atomic   global_atomic_... sc1
//   tile matmul     v_mfma_f32_16x16x16_bf16, with no register spills
//   heap accesses   global_* instructions, no flat_* ones (translate() hands out
//                   pointers LLVM knows are global memory)
// Each sequence must be consecutive as far as memory is concerned: no load, store, atomic
// or cache operation between its parts. The s_waitcnt also waits on lgkmcnt where LDS or
// scalar loads are outstanding; LLVM leaves out a counter that is already zero.
// SKIPPED where the AMD tools (clang-19, lld-19, rocm-device-libs, llvm-objdump-19) are
// missing; install_deps.sh installs them.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/driver/compile.hpp"
#include "compiler/source/source_buffer.hpp"
#include "compiler/toolchain/amdgpu.hpp"
#include "compiler/toolchain/process_env.hpp"
#include "golden_support.hpp"

namespace {

using namespace golden;

using Listing = std::map<std::string, std::vector<std::string>>;  // symbol -> instructions

// $IRISC_LLVM_OBJDUMP, else llvm-objdump-19 on PATH, else LLVM 19's own folder.
std::string objdump_tool() {
  using namespace irisc::toolchain;
  if (std::string e = env("IRISC_LLVM_OBJDUMP"); !e.empty()) return e;
  if (std::string found = on_path("llvm-objdump-19"); !found.empty()) return found;
  return executable("/usr/lib/llvm-19/bin/llvm-objdump") ? "/usr/lib/llvm-19/bin/llvm-objdump" : "";
}

// Each function's instructions, operands included, comments and addresses dropped.
Listing disassemble(const std::string& tool, const std::vector<std::byte>& code_object, std::string* err) {
  Listing out;
  std::string name = (fs::temp_directory_path() / "iris-disasm-XXXXXX").string();
  const int fd = ::mkstemp(name.data());
  const fs::path file = name;
  std::FILE* f = fd < 0 ? nullptr : ::fdopen(fd, "wb");
  if (!f || std::fwrite(code_object.data(), 1, code_object.size(), f) != code_object.size()) {
    if (f) std::fclose(f);
    *err = "cannot write " + file.string();
    return out;
  }
  std::fclose(f);
  const std::string cmd = "'" + tool + "' -d --no-show-raw-insn --no-leading-addr '" + file.string() + "' 2>&1";
  std::string text;
  if (std::FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) text.append(buf, n);
    if (::pclose(p) != 0) *err = tool + " failed:\n" + text;
  } else {
    *err = "cannot run " + tool;
  }
  fs::remove(file);
  static const std::regex header(R"(^<([^>]+)>:$)");
  std::vector<std::string>* current = nullptr;
  for (std::string line : split_lines(text)) {
    std::smatch m;
    if (std::regex_match(line, m, header)) {
      current = &out[m[1].str()];
      continue;
    }
    if (const std::size_t c = line.find("//"); c != std::string::npos) line.resize(c);
    const std::size_t b = line.find_first_not_of(" \t"), e = line.find_last_not_of(" \t");
    if (current && b != std::string::npos) current->push_back(line.substr(b, e - b + 1));
  }
  return out;
}

// Whether an instruction touches memory or the caches (what may not come between the
// parts of a sequence).
bool memory_instruction(const std::string& insn) {
  for (const char* p : {"global_", "flat_", "buffer_", "scratch_", "ds_", "s_load", "s_store"}) {
    if (insn.rfind(p, 0) == 0) return true;
  }
  return false;
}

// Whether `parts` match instructions in order, with no memory instruction between one part
// and the next (s_waitcnt counts as neither).
bool has_sequence(const std::vector<std::string>& insns, const std::vector<std::regex>& parts) {
  for (std::size_t start = 0; start < insns.size(); ++start) {
    if (!std::regex_search(insns[start], parts[0])) continue;
    std::size_t part = 1;
    for (std::size_t i = start + 1; i < insns.size() && part < parts.size(); ++i) {
      if (std::regex_search(insns[i], parts[part])) {
        ++part;
      } else if (memory_instruction(insns[i])) {
        break;
      }
    }
    if (part == parts.size()) return true;
  }
  return false;
}

std::string show(const std::vector<std::string>& insns) {
  std::string s;
  for (const std::string& i : insns) {
    if (memory_instruction(i) || i.rfind("s_waitcnt", 0) == 0 || i.rfind("v_mfma", 0) == 0) s += "  " + i + "\n";
  }
  return s.empty() ? "  (no memory instructions)\n" : s;
}

class AmdgpuDisassembly : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string why;
    if (!irisc::toolchain::amdgpu_toolchain_available(&why)) {
      skip_ = "AMD toolchain unavailable: " + why;
      return;
    }
    const std::string tool = objdump_tool();
    if (tool.empty()) {
      skip_ = "no llvm-objdump-19: install llvm-19 (Debian) or set IRISC_LLVM_OBJDUMP";
      return;
    }
    const fs::path input = kGoldenDir / "amdgpu" / "memory_model.iris";
    irisc::CompileOptions o;
    o.target = "gfx942";
    o.stop_after = irisc::Stage::code_object;
    irisc::CompileResult r;
    if (!compile_no_throw(irisc::SourceBuffer(input.filename().string(), read_file(input)), o, &r)) {
      error_ = "compiling memory_model.iris for gfx942 threw (see the failure above)";
      return;
    }
    if (!r.ok) {
      error_ = "memory_model.iris does not compile for gfx942:\n" + r.rendered_diagnostics + r.toolchain_log;
      return;
    }
    listing_ = disassemble(tool, r.code_object, &error_);
  }

  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(error_.empty()) << error_;
  }

  static const std::vector<std::string>& kernel(const std::string& name) {
    static const std::vector<std::string> none;
    const auto it = listing_.find("iris_k_" + name);
    EXPECT_NE(it, listing_.end()) << "no function iris_k_" << name << " in the disassembly";
    return it == listing_.end() ? none : it->second;
  }

  static inline std::string skip_, error_;
  static inline Listing listing_;
};

TEST_F(AmdgpuDisassembly, ReleaseStoreWritesBackL2ThenWaitsThenStoresAtSystemScope) {
  const auto& k = kernel("release_store");
  EXPECT_TRUE(has_sequence(k, {std::regex(R"(^buffer_wbl2 sc0 sc1$)"), std::regex(R"(^s_waitcnt .*vmcnt\(0\))"),
                               std::regex(R"(^global_store_dwordx2 .* sc0 sc1$)")}))
      << show(k);
}

TEST_F(AmdgpuDisassembly, AcquireLoadWaitsThenInvalidatesAtSystemScope) {
  const auto& k = kernel("acquire_load");
  EXPECT_TRUE(has_sequence(k, {std::regex(R"(^global_load_dwordx2 .* sc0 sc1$)"), std::regex(R"(^s_waitcnt .*vmcnt\(0\))"),
                               std::regex(R"(^buffer_inv sc0 sc1$)")}))
      << show(k);
}

TEST_F(AmdgpuDisassembly, RemoteAtomicCarriesSystemScope) {
  const auto& k = kernel("remote_atomic");
  int atomics = 0;
  for (const std::string& i : k) {
    if (i.rfind("global_atomic", 0) == 0 || i.rfind("flat_atomic", 0) == 0) {
      ++atomics;
      EXPECT_TRUE(std::regex_search(i, std::regex(R"(^global_atomic_add_f32 .* sc1$)"))) << i;
    }
  }
  EXPECT_GT(atomics, 0) << show(k);
}

TEST_F(AmdgpuDisassembly, HeapAccessesAreGlobalNotFlat) {
  for (const char* name : {"release_store", "acquire_load", "remote_atomic", "matmul_bf16", "sum_over_ranks"}) {
    for (const std::string& i : kernel(name)) EXPECT_NE(i.rfind("flat_", 0), 0u) << name << ": " << i;
  }
}

TEST_F(AmdgpuDisassembly, TileMatmulRunsOnTheMatrixCoresWithoutSpills) {
  const auto& k = kernel("matmul_bf16");
  int mfma = 0;
  for (const std::string& i : k) {
    mfma += i.rfind("v_mfma_f32_16x16x16_bf16 ", 0) == 0;
    EXPECT_NE(i.rfind("scratch_", 0), 0u) << "a register spill: " << i;
  }
  EXPECT_GT(mfma, 0) << show(k);
}

}  // namespace
