// irisc_fuzz_nvrtc: generates random well-typed .iris programs (gen_program.hpp) and
// compiles each through irisc and NVRTC to a cubin. The rule it enforces: every program
// that passes irisc's semantic checks gives CUDA that NVRTC accepts.
//
//   irisc_fuzz_nvrtc [--seconds N] [--count N] [--seed S] [--out DIR] [--target sm_90a]
//                    [--jobs J] [--sm80-every N] [--minimize] [--minimize-seconds N]
//                    [--quiet] [--no-nvrtc] [--verbose]
// Defaults: 60 s (unlimited with --count alone), a random first seed (printed), out
// fuzz-nvrtc-findings, one job per CPU, sm_80 every 4th program (0: never).
// --target gfx942 (or gfx90a) fuzzes the AMD path the same way, with the target's
// compiler as the oracle in NVRTC's place: clang-19, or comgr for gfx90a (no sm_80
// compiles then).
//   irisc_fuzz_nvrtc --print SEED          the program of one seed (with its -D line)
//   irisc_fuzz_nvrtc --reduce SEED         that program, minimized while its finding persists
//   irisc_fuzz_nvrtc --check FILE.iris     compile one file (its `// ARGS: -DX=1` too), classify
//
// Program i of a run has seed S + i. Each is compiled for --target (sm_90a) and, every
// --sm80-every programs (seed % N == 0), for sm_80 too. Outcomes:
//   * rejected by sema: counted, with the first error's diagnostic id (the summary lists
//     the most frequent ones, to tune the generator);
//   * accepted and NVRTC ok: counted;
//   * a finding: accepted by sema but rejected by NVRTC (ToolchainFailed with a log), a
//     ToolchainFailed before NVRTC (the TIR verifier after a pass), or an exception out of
//     irisc::compile. Saved as DIR/nvrtc_<seed>.iris, with a comment header holding the
//     class, the reproduction command and the NVRTC log; the run goes on.
// --no-nvrtc stops after the CUDA emitter (sema pass rate only, for tuning the generator).
// A crash (signal) writes the program(s) being compiled to DIR/crash_<seed>.iris first.
// Findings are grouped by class: the first NVRTC error with generated names (v3_j_start,
// L64, p_x) and numbers normalized. --minimize minimizes the first program of each class
// at the end (--minimize-seconds each, default 60) into DIR/min_<class>.iris: it drops
// kernels, parameters, statements, else branches and loop wrappers one at a time, then
// drops named arguments and `persistent`, turns load(x[i]) into x[i] and inlines lets,
// keeping each change only while the same class persists (a cheap sema-only compile
// first, NVRTC only for programs that still check). --verbose prints one line per program.
//
// Progress every ~10 s; at the end the line
//   programs: N, passed sema: P, nvrtc ok: K, findings: F   ("clang ok" for AMD targets)
// Exit status: 0 without findings, 1 with findings, 2 for usage or environment errors.
#include <signal.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "compiler/diagnostics/diagnostics.hpp"
#include "compiler/driver/compile.hpp"
#include "compiler/source/source_buffer.hpp"
#include "compiler/target/target.hpp"
#include "compiler/toolchain/amdgpu.hpp"
#include "compiler/toolchain/comgr.hpp"
#include "compiler/toolchain/nvrtc.hpp"
#include "tests/fuzz/gen_program.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  double seconds = -1;  // < 0: 60 unless --count is given
  std::uint64_t count = 0;
  std::uint64_t seed = 0;
  bool seed_given = false;
  std::string out = "fuzz-nvrtc-findings";
  std::string target = "sm_90a";
  int jobs = 0;
  int sm80_every = 4;
  bool minimize = false;
  bool quiet = false;
  bool no_nvrtc = false;
  bool verbose = false;  // one line per program: seed, outcome, seconds  // stop after the CUDA emitter (tuning the generator's sema pass rate)
  double minimize_seconds = 60;
};

// ---- outcomes ------------------------------------------------------------------------------
enum class Kind { SemaReject, Ok, Finding };

struct Outcome {
  Kind kind = Kind::Ok;
  std::string diag;    // SemaReject: the first error's id
  std::string cls;     // Finding: its class
  std::string log;     // Finding: NVRTC's log or what failed
  std::string target;
};

std::string first_error_line(const std::string& log) {
  std::istringstream in(log);
  std::string line, first;
  // NVRTC: "x.cu(62): error: identifier ... is undefined"; ptxas: "ptxas error   : ..."
  static const std::regex error_re(R"(\berror\s*:\s*(.*))");
  while (std::getline(in, line)) {
    if (first.empty() && line.find_first_not_of(" \t\r") != std::string::npos) first = line;
    std::smatch m;
    if (std::regex_search(line, m, error_re)) return m[1].str();
  }
  return first;
}

// Generated names and numbers out, so one bug is one class.
std::string normalize(std::string m) {
  static const std::pair<std::regex, const char*> rules[] = {
      {std::regex(R"(\bv\d+_\w+?_(start|extent)\b)"), "VAR_$1"},
      {std::regex(R"(\bv\d+_\w+)"), "VAR"},
      {std::regex(R"(\bL2_\d+x\d+\b)"), "L2_RxC"},
      {std::regex(R"(\bL\d+\b)"), "LN"},
      {std::regex(R"(\bp_\w+)"), "PARAM"},
      {std::regex(R"(\bs_\w+)"), "SIZE"},
      {std::regex(R"(\biris_k_\w+)"), "KERNEL"},
      {std::regex(R"(\b(t|r|a|p|n|to|bound|rows|cols|across|total|tile)\d+\b)"), "TMP"},
      {std::regex(R"(\b0x[0-9a-fA-F]+\b)"), "HEX"},
      {std::regex(R"(\d+)"), "N"},
  };
  for (const auto& [re, with] : rules) m = std::regex_replace(m, re, with);
  if (m.size() > 160) m.resize(160);
  return m;
}

std::string slug(const std::string& cls) {
  std::string s;
  for (char c : cls) {
    if (std::isalnum(static_cast<unsigned char>(c))) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!s.empty() && s.back() != '_') s += '_';
  }
  while (!s.empty() && s.back() == '_') s.pop_back();
  if (s.size() > 64) s.resize(64);
  while (!s.empty() && s.back() == '_') s.pop_back();
  return s.empty() ? "unknown" : s;
}

[[noreturn]] void environment_error(const std::string& what) {
  std::fprintf(stderr, "irisc_fuzz_nvrtc: %s\n", what.c_str());
  std::exit(2);
}

bool amd_target(const std::string& name) {
  const irisc::Target* t = irisc::find_target(name);
  return t && t->vendor == irisc::Vendor::amd;
}

// The compiler that judges a target's generated source: "nvrtc", "clang" or "comgr".
const char* oracle_of(const std::string& name) {
  const irisc::Target* t = irisc::find_target(name);
  if (!t || t->vendor != irisc::Vendor::amd) return "nvrtc";
  return irisc::toolchain_of(*t) == irisc::ToolchainKind::comgr ? "comgr" : "clang";
}

Outcome compile_one(const std::string& src, const std::map<std::string, std::int64_t>& defines,
                    const std::string& target, const std::string& name, irisc::Stage stop = irisc::Stage::code_object) {
  Outcome o;
  o.target = target;
  irisc::CompileOptions opts;
  opts.stop_after = stop;
  opts.target = target;
  opts.defines = defines;
  irisc::CompileResult r;
  try {
    const irisc::SourceBuffer buf(name, src);
    r = irisc::compile(buf, opts);
  } catch (const std::exception& e) {
    o.kind = Kind::Finding;
    o.cls = std::string("exception: ") + normalize(e.what());
    o.log = e.what();
    return o;
  } catch (...) {
    o.kind = Kind::Finding;
    o.cls = "exception: unknown";
    o.log = "a non-std exception escaped irisc::compile";
    return o;
  }
  if (r.ok) return o;
  const irisc::Diagnostic* toolchain = nullptr;
  const irisc::Diagnostic* first_error = nullptr;
  for (const irisc::Diagnostic& d : r.diagnostics) {
    if (d.kind == irisc::DiagnosticKind::ToolchainFailed && !toolchain) toolchain = &d;
    if (d.severity == irisc::Severity::error && !first_error) first_error = &d;
  }
  if (!toolchain) {
    o.kind = Kind::SemaReject;
    o.diag = first_error ? irisc::diagnostic_info(first_error->kind).id : "unknown";
    return o;
  }
  o.kind = Kind::Finding;
  if (r.kernel_source.empty()) {  // before the CUDA toolchain: the TIR verifier after a pass
    o.cls = "verifier: " + normalize(first_error_line(toolchain->message + "\nerror: " + toolchain->message));
    o.log = toolchain->message;
    return o;
  }
  if (r.toolchain_log.empty()) {
    // The compiler itself is unusable (compile_cuda threw ToolchainError), not a finding.
    environment_error(std::string(oracle_of(target)) + " failed without a log: " + toolchain->message);
  }
  o.cls = std::string(oracle_of(target)) + ": " + normalize(first_error_line(r.toolchain_log));
  o.log = r.toolchain_log;
  return o;
}

// ---- crash reporting -------------------------------------------------------------------------
// What each worker is compiling, written out by the signal handler if irisc crashes.
struct Slot {
  std::atomic<bool> busy{false};
  std::string path;
  std::string text;
};
Slot g_slots[64];

void on_crash(int sig) {
  const char msg[] = "irisc_fuzz_nvrtc: irisc crashed; the program(s) being compiled:\n";
  ssize_t ignored = write(2, msg, sizeof msg - 1);
  for (Slot& s : g_slots) {
    if (!s.busy.load()) continue;
    const int fd = open(s.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ignored = write(fd, s.text.data(), s.text.size());
      close(fd);
    }
    ignored = write(2, "  ", 2);
    ignored = write(2, s.path.data(), s.path.size());
    ignored = write(2, "\n", 1);
  }
  (void)ignored;
  signal(sig, SIG_DFL);
  raise(sig);
}

void install_crash_handler() {
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) signal(sig, on_crash);
}

// ---- reporting -------------------------------------------------------------------------------
std::string comment_block(const std::string& text, std::size_t max_lines, std::size_t max_width = 200) {
  std::istringstream in(text);
  std::string line, out;
  std::size_t n = 0;
  while (std::getline(in, line) && n < max_lines) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (line.size() > max_width) line = line.substr(0, max_width) + "...";
    out += "//   " + line + "\n";
    ++n;
  }
  return out;
}

// The log from its first error line on (NVRTC prints warnings about unused variables first).
std::string from_first_error(const std::string& log) {
  static const std::regex error_re(R"(\berror\s*:)");
  std::istringstream in(log);
  std::string line, out;
  bool on = false;
  while (std::getline(in, line)) {
    on = on || std::regex_search(line, error_re);
    if (on) out += line + "\n";
  }
  return on ? out : log;
}

std::string header(const irisc_fuzz::GenProgram& g, const Outcome& o, const char* what) {
  std::string h = "// irisc_fuzz_nvrtc " + std::string(what) + " (seed " + std::to_string(g.seed) + ", target " + o.target + ")\n";
  h += "// class: " + o.cls + "\n";
  const std::string d = g.define_args();
  if (!d.empty()) h += "// ARGS: " + d + "\n";
  h += "// reproduce: irisc THIS_FILE --emit=" + std::string(amd_target(o.target) ? "co" : "cubin") + " --target=" + o.target + (d.empty() ? "" : " " + d) +
       "   (or irisc_fuzz_nvrtc --check THIS_FILE; seed " + std::to_string(g.seed) + " unminimized: irisc_fuzz_nvrtc --print " +
       std::to_string(g.seed) + ")\n";
  h += std::string("// ") + oracle_of(o.target) + " log (from the first error):\n" + comment_block(from_first_error(o.log), 12);
  return h;
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  return static_cast<bool>(f);
}

// ---- minimization ----------------------------------------------------------------------------
bool reproduces(const irisc_fuzz::GenProgram& g, const Outcome& want) {
  const std::string src = g.render();
  // The cheap check first: does it still pass sema?
  const Outcome pre = compile_one(src, g.defines, want.target, "min.iris", irisc::Stage::source);
  if (pre.kind == Kind::SemaReject) return false;
  if (pre.kind == Kind::Finding) return pre.cls == want.cls;
  const Outcome o = compile_one(src, g.defines, want.target, "min.iris");
  return o.kind == Kind::Finding && o.cls == want.cls;
}

// Every statement of a program in pre-order, with its kernel.
void collect(std::vector<irisc_fuzz::GenNode>& list, std::size_t kernel,
             std::vector<std::pair<std::size_t, irisc_fuzz::GenNode*>>& out) {
  for (irisc_fuzz::GenNode& n : list) {
    out.push_back({kernel, &n});
    collect(n.body, kernel, out);
    collect(n.else_body, kernel, out);
  }
}
std::vector<std::pair<std::size_t, irisc_fuzz::GenNode*>> all_nodes(irisc_fuzz::GenProgram& g) {
  std::vector<std::pair<std::size_t, irisc_fuzz::GenNode*>> out;
  for (std::size_t k = 0; k < g.kernels.size(); ++k) collect(g.kernels[k].body, k, out);
  return out;
}

// Where the argument starting at `from` ends: the next ',' or ')' outside brackets.
std::size_t arg_end(const std::string& s, std::size_t from) {
  int depth = 0;
  for (std::size_t i = from; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '(' || c == '[') ++depth;
    else if ((c == ')' || c == ']') && depth > 0) --depth;
    else if (depth == 0 && (c == ',' || c == ')' || c == ']' || c == ';')) return i;
  }
  return s.size();
}

// Smaller spellings of one statement: without one named argument, without `persistent`,
// `load(x[i])` as `x[i]`.
std::vector<std::string> head_edits(const std::string& h) {
  std::vector<std::string> out;
  static const std::regex named_re(R"(, (to|from|other|order|scope|op|acc): )");
  for (auto it = std::sregex_iterator(h.begin(), h.end(), named_re); it != std::sregex_iterator(); ++it) {
    const std::size_t at = static_cast<std::size_t>(it->position());
    const std::size_t end = arg_end(h, at + static_cast<std::size_t>(it->length()));
    out.push_back(h.substr(0, at) + h.substr(end));
  }
  if (const auto at = h.find(" persistent"); at != std::string::npos) out.push_back(h.substr(0, at) + h.substr(at + 11));
  for (std::size_t at = h.find("load("); at != std::string::npos; at = h.find("load(", at + 1)) {
    if (at > 0 && (std::isalnum(static_cast<unsigned char>(h[at - 1])) || h[at - 1] == '_')) continue;
    const std::size_t end = arg_end(h, at + 5);
    if (end < h.size() && h[end] == ')') out.push_back(h.substr(0, at) + h.substr(at + 5, end - at - 5) + h.substr(end + 1));
  }
  return out;
}

std::string replace_word(const std::string& s, const std::string& word, const std::string& with) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    if (s.compare(i, word.size(), word) == 0 && (i == 0 || !(std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_')) &&
        (i + word.size() >= s.size() || !(std::isalnum(static_cast<unsigned char>(s[i + word.size()])) || s[i + word.size()] == '_'))) {
      out += with;
      i += word.size();
    } else {
      out += s[i++];
    }
  }
  return out;
}

// One pass of statement edits: each named argument, `persistent`, `load(...)`, and each
// `let x = e;` inlined into the statements after it (which is how `let`s used only in
// odd places show that they matter: if inlining them loses the finding, they stay).
bool edit_pass(irisc_fuzz::GenProgram& g, const Outcome& want, Clock::time_point deadline, int* tries) {
  bool changed = false;
  for (std::size_t k = 0; k < all_nodes(g).size(); ++k) {
    for (bool again = true; again;) {
      again = false;
      if (Clock::now() > deadline) return changed;
      auto nodes = all_nodes(g);
      if (k >= nodes.size()) return changed;
      std::vector<irisc_fuzz::GenProgram> cands;
      for (const std::string& h : head_edits(nodes[k].second->head)) {
        irisc_fuzz::GenProgram c = g;
        all_nodes(c)[k].second->head = h;
        cands.push_back(std::move(c));
      }
      static const std::regex let_re(R"(^let (\w+) = (.*);$)");
      std::smatch m;
      const std::string head = nodes[k].second->head;
      if (!nodes[k].second->is_block && std::regex_match(head, m, let_re)) {
        irisc_fuzz::GenProgram c = g;
        auto cn = all_nodes(c);
        bool used = false;
        for (std::size_t j = k + 1; j < cn.size(); ++j) {
          if (cn[j].first != cn[k].first) continue;
          const std::string h = replace_word(cn[j].second->head, m[1].str(), "(" + m[2].str() + ")");
          used |= h != cn[j].second->head;
          cn[j].second->head = h;
        }
        cn[k].second->head.clear();  // an empty statement: renders as a blank line
        if (used) cands.push_back(std::move(c));
      }
      for (irisc_fuzz::GenProgram& c : cands) {
        ++*tries;
        if (reproduces(c, want)) {
          g = std::move(c);
          changed = again = true;
          break;
        }
      }
    }
  }
  return changed;
}

irisc_fuzz::GenProgram minimize(irisc_fuzz::GenProgram g, const Outcome& want, double seconds, int* tries) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  *tries = 0;
  for (int round = 0; round < 4; ++round) {
    // Drop items (kernels, parameters, statements, else branches, loop wrappers).
    bool changed = true, any = false;
    while (changed) {
      changed = false;
      for (std::size_t k = 0; k < irisc_fuzz::count_items(g); ++k) {
        if (Clock::now() > deadline) return g;
        irisc_fuzz::GenProgram c = irisc_fuzz::remove_item(g, k);
        ++*tries;
        if (reproduces(c, want)) {
          g = std::move(c);
          changed = any = true;
          --k;  // the next item now has index k
        }
      }
    }
    // Then simplify what is left, and drop items again.
    const bool edited = edit_pass(g, want, deadline, tries);
    if (!edited && !any) break;
  }
  return g;
}

// ---- the run ---------------------------------------------------------------------------------
struct ClassInfo {
  int count = 0;
  std::uint64_t first_seed = 0;
  Outcome first;
};

struct State {
  std::mutex mu;
  std::uint64_t programs = 0, passed = 0, ok = 0, findings = 0, sm80_runs = 0, sm80_sema_rejects = 0;
  std::map<std::string, int> sema_ids;
  double slowest = 0, total_secs = 0;
  std::uint64_t over_2s = 0;
  std::uint64_t slowest_seed = 0;
  std::map<std::string, ClassInfo> classes;
  std::atomic<std::uint64_t> next{0};
  std::atomic<bool> stop{false};
};

void usage() {
  std::fprintf(stderr,
               "usage: irisc_fuzz_nvrtc [--seconds N] [--count N] [--seed S] [--out DIR] [--target sm_90a|sm_90|sm_80|gfx942|gfx90a]\n"
               "                        [--jobs J] [--sm80-every N] [--minimize] [--minimize-seconds N] [--quiet]\n"
               "                        [--no-nvrtc] [--verbose]\n"
               "       irisc_fuzz_nvrtc --print SEED | --reduce SEED | --check FILE.iris\n");
}

std::string define_line(const std::string& src, std::map<std::string, std::int64_t>* defines) {
  std::istringstream in(src);
  std::string line;
  while (std::getline(in, line)) {
    const auto at = line.find("// ARGS:");
    if (at == std::string::npos) continue;
    std::istringstream words(line.substr(at + 8));
    std::string w;
    while (words >> w) {
      std::string name;
      std::int64_t v = 0;
      if (w.rfind("-D", 0) == 0 && irisc::parse_define(w.substr(2), &name, &v)) (*defines)[name] = v;
    }
    return line;
  }
  return "";
}

void print_summary(const State& st, const char* oracle) {
  if (!st.sema_ids.empty()) {
    std::vector<std::pair<int, std::string>> ids;
    for (const auto& [id, n] : st.sema_ids) ids.push_back({n, id});
    std::sort(ids.rbegin(), ids.rend());
    std::string s;
    for (std::size_t i = 0; i < ids.size() && i < 8; ++i) s += (i ? ", " : "") + ids[i].second + " " + std::to_string(ids[i].first);
    std::printf("sema rejections by first diagnostic: %s\n", s.c_str());
  }
  if (st.sm80_runs) {
    std::printf("sm_80 compiles: %llu (%llu rejected by sema there)\n", static_cast<unsigned long long>(st.sm80_runs),
                static_cast<unsigned long long>(st.sm80_sema_rejects));
  }
  for (const auto& [cls, info] : st.classes) {
    std::printf("finding class (%d program%s, first seed %llu, %s): %s\n", info.count, info.count == 1 ? "" : "s",
                static_cast<unsigned long long>(info.first_seed), info.first.target.c_str(), cls.c_str());
  }
  if (st.programs) {
    std::printf("compile time per program: %.2f s on average, %llu over 2 s, slowest seed %llu (%.2f s)\n",
                st.total_secs / static_cast<double>(st.programs), static_cast<unsigned long long>(st.over_2s),
                static_cast<unsigned long long>(st.slowest_seed), st.slowest);
  }
  const double pct = st.programs ? 100.0 * static_cast<double>(st.passed) / static_cast<double>(st.programs) : 0.0;
  std::printf("sema pass rate: %.1f%%\n", pct);
  std::printf("programs: %llu, passed sema: %llu, %s ok: %llu, findings: %llu\n",
              static_cast<unsigned long long>(st.programs), static_cast<unsigned long long>(st.passed), oracle,
              static_cast<unsigned long long>(st.ok), static_cast<unsigned long long>(st.findings));
  std::fflush(stdout);
}

void worker(int id, const Options& opt, State& st) {
  Slot& slot = g_slots[id % 64];
  while (!st.stop.load()) {
    const std::uint64_t i = st.next.fetch_add(1);
    if (opt.count && i >= opt.count) break;
    const std::uint64_t seed = opt.seed + i;
    const irisc_fuzz::GenProgram g = irisc_fuzz::generate_program(seed);
    const std::string src = g.render();
    const std::string name = "fuzz_" + std::to_string(seed) + ".iris";
    slot.path = opt.out + "/crash_" + std::to_string(seed) + ".iris";
    slot.text = "// irisc_fuzz_nvrtc crash (seed " + std::to_string(seed) + ")\n" +
                (g.define_args().empty() ? "" : "// ARGS: " + g.define_args() + "\n") + src;
    slot.busy.store(true);
    const auto t0 = Clock::now();
    std::vector<Outcome> outs;
    outs.push_back(compile_one(src, g.defines, opt.target, name, opt.no_nvrtc ? irisc::Stage::source : irisc::Stage::code_object));
    const bool passed = outs[0].kind != Kind::SemaReject;
    bool sm80 = false;
    if (passed && !opt.no_nvrtc && opt.sm80_every > 0 && opt.target != "sm_80" && seed % static_cast<std::uint64_t>(opt.sm80_every) == 0) {
      outs.push_back(compile_one(src, g.defines, "sm_80", name));
      sm80 = true;
    }
    slot.busy.store(false);
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();

    std::lock_guard<std::mutex> lock(st.mu);
    ++st.programs;
    if (secs > st.slowest) st.slowest = secs, st.slowest_seed = seed;
    st.total_secs += secs;
    st.over_2s += secs > 2;
    if (opt.verbose) {
      const Outcome& o = outs.back().kind == Kind::Finding ? outs.back() : outs[0];
      std::printf("seed %llu: %s%s (%.2f s%s)\n", static_cast<unsigned long long>(seed),
                  o.kind == Kind::SemaReject ? "sema " : o.kind == Kind::Ok ? "ok" : "FINDING ",
                  o.kind == Kind::SemaReject ? o.diag.c_str() : o.cls.c_str(), secs, sm80 ? ", +sm_80" : "");
    }
    if (!passed) {
      ++st.sema_ids[outs[0].diag];
      continue;
    }
    ++st.passed;
    if (sm80) {
      ++st.sm80_runs;
      st.sm80_sema_rejects += outs[1].kind == Kind::SemaReject;
    }
    const Outcome* f = nullptr;
    for (const Outcome& o : outs) {
      if (o.kind != Kind::Finding) continue;
      if (f && f->cls == o.cls) continue;  // the same bug on sm_80 too: one program
      if (!f) f = &o;
      ClassInfo& c = st.classes[o.cls];
      if (c.count++ == 0) {
        c.first_seed = seed;
        c.first = o;
        if (!opt.quiet) std::printf("new finding class (seed %llu, %s): %s\n", static_cast<unsigned long long>(seed), o.target.c_str(), o.cls.c_str());
      }
    }
    if (!f) {
      ++st.ok;
      continue;
    }
    ++st.findings;
    write_file(opt.out + "/nvrtc_" + std::to_string(seed) + ".iris", header(g, *f, "finding") + src);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  std::string print_seed, reduce_seed, check_file;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) {
        usage();
        std::exit(2);
      }
      return argv[++i];
    };
    try {
      if (a == "--seconds") opt.seconds = std::stod(val());
      else if (a == "--count") opt.count = std::stoull(val());
      else if (a == "--seed") opt.seed = std::stoull(val()), opt.seed_given = true;
      else if (a == "--out") opt.out = val();
      else if (a == "--target") opt.target = val();
      else if (a == "--jobs") opt.jobs = std::stoi(val());
      else if (a == "--sm80-every") opt.sm80_every = std::stoi(val());
      else if (a == "--minimize") opt.minimize = true;
      else if (a == "--minimize-seconds") opt.minimize_seconds = std::stod(val());
      else if (a == "--quiet") opt.quiet = true;
      else if (a == "--no-nvrtc") opt.no_nvrtc = true;
      else if (a == "--verbose") opt.verbose = true;
      else if (a == "--print") print_seed = val();
      else if (a == "--reduce") reduce_seed = val();
      else if (a == "--check") check_file = val();
      else if (a == "-h" || a == "--help") {
        usage();
        return 0;
      } else {
        usage();
        return 2;
      }
    } catch (const std::exception&) {
      usage();
      return 2;
    }
  }
  const irisc::Target* target = irisc::find_target(opt.target);
  if (!target || target->vendor == irisc::Vendor::host) {
    usage();
    return 2;
  }
  const bool amd = target->vendor == irisc::Vendor::amd;
  const char* const oracle = oracle_of(opt.target);
  if (amd) opt.sm80_every = 0;  // the sm_80 side compiles are NVIDIA's

  if (!print_seed.empty()) {
    const irisc_fuzz::GenProgram g = irisc_fuzz::generate_program(std::stoull(print_seed));
    std::printf("// irisc_fuzz_nvrtc program, seed %s\n", print_seed.c_str());
    if (!g.define_args().empty()) std::printf("// ARGS: %s\n", g.define_args().c_str());
    std::printf("%s", g.render().c_str());
    return 0;
  }

  std::string why;
  if (std::string(oracle) == "comgr" ? !irisc::toolchain::comgr_available(opt.target, &why)
      : amd ? !irisc::toolchain::amdgpu_toolchain_available(&why)
            : !irisc::toolchain::nvrtc_available(&why)) {
    environment_error(std::string(amd ? "the AMD toolchain" : "NVRTC") + " is not available: " + why);
  }

  if (!check_file.empty()) {
    std::ifstream f(check_file, std::ios::binary);
    if (!f) environment_error("cannot read " + check_file);
    std::stringstream ss;
    ss << f.rdbuf();
    std::map<std::string, std::int64_t> defines;
    define_line(ss.str(), &defines);
    int rc = 0;
    const std::vector<std::string> targets = amd ? std::vector<std::string>{opt.target}
                                                 : std::vector<std::string>{opt.target, "sm_80"};
    for (const std::string& t : targets) {
      const Outcome o = compile_one(ss.str(), defines, t, check_file);
      if (o.kind == Kind::SemaReject) std::printf("%s: rejected by sema [%s]\n", t.c_str(), o.diag.c_str());
      else if (o.kind == Kind::Ok) std::printf("%s: ok\n", t.c_str());
      else {
        std::printf("%s: FINDING: %s\n%s", t.c_str(), o.cls.c_str(), comment_block(from_first_error(o.log), 12).c_str());
        rc = 1;
      }
      if (t == "sm_80") break;
    }
    return rc;
  }

  if (!reduce_seed.empty()) {
    const irisc_fuzz::GenProgram g = irisc_fuzz::generate_program(std::stoull(reduce_seed));
    Outcome o = compile_one(g.render(), g.defines, opt.target, "reduce.iris");
    // NVIDIA runs also compile for sm_80: a finding there counts too.
    if (o.kind != Kind::Finding && !amd) o = compile_one(g.render(), g.defines, "sm_80", "reduce.iris");
    if (o.kind != Kind::Finding) {
      std::fprintf(stderr, "seed %s has no finding\n", reduce_seed.c_str());
      return 0;
    }
    int tries = 0;
    const irisc_fuzz::GenProgram m = minimize(g, o, opt.minimize_seconds, &tries);
    std::printf("%s%s", header(m, o, "finding, minimized").c_str(), m.render().c_str());
    return 1;
  }

  if (!opt.seed_given) opt.seed = std::random_device{}() % 1000000000ull;
  if (opt.seconds < 0) opt.seconds = opt.count ? 1e18 : 60;
  if (opt.jobs <= 0) opt.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::error_code ec;
  std::filesystem::create_directories(opt.out, ec);
  if (ec) environment_error("cannot create " + opt.out + ": " + ec.message());
  install_crash_handler();

  std::printf("irisc_fuzz_nvrtc: seeds from %llu, target %s (sm_80 every %d), %d job(s), findings in %s\n",
              static_cast<unsigned long long>(opt.seed), opt.target.c_str(), opt.sm80_every, opt.jobs, opt.out.c_str());
  std::fflush(stdout);
  State st;
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int j = 0; j < opt.jobs; ++j) threads.emplace_back(worker, j, std::cref(opt), std::ref(st));
  auto last = t0;
  while (true) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto now = Clock::now();
    const double t = std::chrono::duration<double>(now - t0).count();
    if (t >= opt.seconds) st.stop.store(true);
    bool finished = true;
    {
      std::lock_guard<std::mutex> lock(st.mu);
      finished = st.stop.load() || (opt.count && st.programs >= opt.count);
      if (!opt.quiet && std::chrono::duration<double>(now - last).count() >= 10) {
        last = now;
        std::printf("[%4.0fs] programs %llu, passed sema %llu, %s ok %llu, findings %llu (%zu classes)\n", t,
                    static_cast<unsigned long long>(st.programs), static_cast<unsigned long long>(st.passed), oracle,
                    static_cast<unsigned long long>(st.ok), static_cast<unsigned long long>(st.findings), st.classes.size());
        std::fflush(stdout);
      }
    }
    if (finished) break;
  }
  st.stop.store(true);
  for (std::thread& th : threads) th.join();

  if (opt.minimize) {
    for (auto& [cls, info] : st.classes) {
      const irisc_fuzz::GenProgram g = irisc_fuzz::generate_program(info.first_seed);
      int tries = 0;
      const auto t1 = Clock::now();
      const irisc_fuzz::GenProgram m = minimize(g, info.first, opt.minimize_seconds, &tries);
      const std::string path = opt.out + "/min_" + slug(cls) + ".iris";
      write_file(path, header(m, info.first, "finding, minimized") + m.render());
      std::printf("minimized seed %llu (%d tries, %.0f s): %s\n", static_cast<unsigned long long>(info.first_seed), tries,
                  std::chrono::duration<double>(Clock::now() - t1).count(), path.c_str());
    }
  }
  print_summary(st, oracle);
  return st.findings ? 1 : 0;
}
