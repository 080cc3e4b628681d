// The TIR reader (compiler/tir/tir_read.hpp) against what the compiler produces:
//   TirRoundTrip/RoundTrip   every golden input (tir/, passes/, cuda/), sample and fuzz
//                            seed that compiles, after sema and after each pass:
//                            print(read(print(M))) == print(M) and verify(read(print(M)))
//                            is clean; the rest of the pipeline run on the reread module
//                            ends in the same listing, and from sema's output in the
//                            same CUDA.
//   TirRead.MutatedListingsNeverCrash  random edits of every TIR golden: read() returns
//                            an error ("line:col: what") or a module; a module prints, and
//                            one that verifies round-trips and goes through compile_tir to
//                            CUDA without a crash or an exception.
#include <cctype>

#include "golden_support.hpp"

#include "compiler/codegen/emit_cuda.hpp"
#include "compiler/lex/lexer.hpp"
#include "compiler/parse/parser.hpp"
#include "compiler/passes/pipeline.hpp"
#include "compiler/sema/sema.hpp"
#include "compiler/target/target.hpp"
#include "compiler/tir/tir_read.hpp"
#include "compiler/tir/verify.hpp"
#include "compiler/tir/visit.hpp"

using namespace golden;

namespace {

struct RoundTripCase {
  fs::path input;
  std::string name;
};
void PrintTo(const RoundTripCase& c, std::ostream* os) { *os << c.input.generic_string(); }

// Sema's output for `text` (with its ARGS), or false when it has errors (error seeds).
bool front_end(const fs::path& path, const std::string& text, irisc::tir::Module* out, const irisc::Target** target,
               std::string* err) {
  irisc::CompileOptions o;
  if (!apply_args(read_directives(text).args, o, nullptr, err)) return false;
  *target = irisc::find_target(o.target);
  if (!*target) {
    *err = "unknown target " + o.target;
    return false;
  }
  const irisc::SourceBuffer src(path.filename().string(), text);
  irisc::Diagnostics diags(&src);
  irisc::TokenBuffer toks = irisc::lex(src, diags);
  irisc::ast::Module ast = irisc::parse(toks, diags);
  if (diags.has_errors()) {
    *err = diags.render(false);
    return false;
  }
  irisc::SemaOptions so;
  so.defines = o.defines;
  so.min_sms = (*target)->min_sms;
  so.max_sms = (*target)->max_sms;
  *out = irisc::check(ast, so, diags);
  out->target = *target;
  if (diags.has_errors()) *err = diags.render(false);
  return !diags.has_errors();
}

std::vector<RoundTripCase> round_trip_cases() {
  std::vector<RoundTripCase> out;
  for (const char* phase : {"tir", "passes", "cuda"}) {
    for (const fs::path& p : iris_files(kGoldenDir / phase, false)) {
      out.push_back({p, std::string(phase) + "_" + sanitize(p.stem().string())});
    }
  }
  for (const char* dir : {"samples", "tests/fuzz/corpus", "tests/fuzz/regressions"}) {
    for (const fs::path& p : iris_files(kSourceDir / dir, true)) {
      // Only inputs that compile: the error seeds have no TIR.
      irisc::tir::Module m;
      const irisc::Target* t = nullptr;
      std::string err;
      if (!front_end(p, read_file(p), &m, &t, &err)) continue;
      out.push_back({p, sanitize(p.lexically_relative(kSourceDir).replace_extension().generic_string())});
    }
  }
  return out;
}

// `text` (a listing of the compiler's, for `target`; null: the default) reads back into
// a module that verifies and prints as `text`.
void expect_reads_back(const std::string& text, const std::string& stage, const irisc::Target* target = nullptr) {
  irisc::tir::Module back;
  std::string err;
  ASSERT_TRUE(irisc::tir::read(text, &back, &err)) << stage << ": " << err << "\n" << text;
  back.target = target;
  EXPECT_EQ(irisc::tir::verify(back), "") << stage << "\n" << text;
  const std::string again = irisc::tir::print(back);
  EXPECT_EQ(again, text) << stage << ": print(read(print(M))) != print(M)\n"
                         << unified_diff(text, again, stage);
}

std::string cuda_of(const irisc::tir::Module& m) {
  try {
    return irisc::emit_cuda(m, irisc::SourceBuffer("roundtrip.iris", "")).source;
  } catch (const std::exception& e) {
    return std::string("emit_cuda threw: ") + e.what();
  }
}

// Whether some Var entry of `m` has no defining statement.
bool has_orphan_vars(const irisc::tir::Module& m) {
  for (const irisc::tir::Kernel& k : m.kernels) {
    std::vector<bool> defined(k.vars.size(), false);
    irisc::tir::walk(
        k.body,
        [&](const irisc::tir::Stmt& s) {
          for (int v : {s.var, s.var2, s.var_t}) {
            if (v >= 0 && s.kind != irisc::tir::StmtKind::Assign) defined[static_cast<std::size_t>(v)] = true;
          }
        },
        [](const irisc::tir::Value&) {});
    for (bool d : defined) {
      if (!d) return true;
    }
  }
  return false;
}

class RoundTrip : public testing::TestWithParam<RoundTripCase> {};

TEST_P(RoundTrip, PrintReadPrint) {
  const RoundTripCase& c = GetParam();
  irisc::tir::Module m;
  const irisc::Target* target = nullptr;
  std::string err;
  ASSERT_TRUE(front_end(c.input, read_file(c.input), &m, &target, &err)) << err;
  const std::vector<std::string>& passes = irisc::pass_names();
  std::vector<std::string> listing = {irisc::tir::print(m)};
  std::vector<bool> orphans = {has_orphan_vars(m)};
  expect_reads_back(listing[0], "after sema", target);
  for (const std::string& pass : passes) {
    irisc::PipelineOptions po;
    po.only_pass = pass;
    const irisc::PipelineLog log = irisc::run_pipeline(m, po);
    ASSERT_EQ(log.verify_error, "");
    listing.push_back(irisc::tir::print(m));
    orphans.push_back(has_orphan_vars(m));
    expect_reads_back(listing.back(), "after " + pass, target);
  }
  // The reread module is the same program: the passes still to run on it end where
  // the original ended. Not from a module with Var entries that no statement defines
  // (lets remove-dead-lets dropped): the listing does not carry them, and choose-launch
  // lays out their tile shapes too.
  for (std::size_t i = 0; i < listing.size(); ++i) {
    if (orphans[i]) continue;
    const std::string stage = i ? "after " + passes[i - 1] : std::string("after sema");
    irisc::tir::Module back;
    ASSERT_TRUE(irisc::tir::read(listing[i], &back, &err)) << err;
    back.target = target;
    for (std::size_t j = i; j < passes.size(); ++j) {
      irisc::PipelineOptions po;
      po.only_pass = passes[j];
      ASSERT_EQ(irisc::run_pipeline(back, po).verify_error, "") << stage;
    }
    const std::string final_listing = irisc::tir::print(back);
    EXPECT_EQ(final_listing, listing.back()) << "the pipeline from the listing " << stage << " ends elsewhere\n"
                                             << unified_diff(listing.back(), final_listing, c.name);
    // Variables are numbered as sema numbers them only before remove-dead-lets drops
    // lets (the original keeps their Var entries), so compare the CUDA from sema's.
    if (i == 0) {
      const std::string want = cuda_of(m), got = cuda_of(back);
      EXPECT_EQ(got, want) << unified_diff(want, got, c.name + ".cu");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(TirRoundTrip, RoundTrip, testing::ValuesIn(round_trip_cases()),
                         [](const testing::TestParamInfo<RoundTripCase>& info) { return info.param.name; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(RoundTrip);

// ---- fuzzing the reader with edited listings --------------------------------------------

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < text.size();) {
    if (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_') {
      std::size_t e = i;
      while (e < text.size() && (std::isalnum(static_cast<unsigned char>(text[e])) || text[e] == '_')) ++e;
      out.push_back(text.substr(i, e - i));
      i = e;
    } else {
      ++i;
    }
  }
  return out;
}

// One random edit: a word replaced by another word of the listing (the edit most likely
// to keep the text readable), characters deleted or inserted, a line deleted, repeated
// or moved, or the text cut short.
std::string mutate(const std::string& text, const std::vector<std::string>& words, std::mt19937& rng) {
  auto pick = [&](std::size_t n) { return n ? std::uniform_int_distribution<std::size_t>(0, n - 1)(rng) : 0; };
  std::string s = text;
  if (s.empty()) return s;
  std::vector<std::string> lines = split_lines(s);
  auto join = [](const std::vector<std::string>& ls) {
    std::string out;
    for (std::size_t i = 0; i < ls.size(); ++i) out += ls[i] + (i + 1 < ls.size() ? "\n" : "");
    return out;
  };
  static const std::string kChars = "(){}[]<>,:=%#$x+-/.0123456789 \n\t\x7f\x80\xff";
  switch (pick(8)) {
    case 0:
    case 1: {  // replace the n-th word occurrence
      const std::size_t at = pick(s.size());
      std::size_t b = at;
      while (b < s.size() && !(std::isalnum(static_cast<unsigned char>(s[b])) || s[b] == '_')) ++b;
      std::size_t e = b;
      while (e < s.size() && (std::isalnum(static_cast<unsigned char>(s[e])) || s[e] == '_')) ++e;
      if (b < e && !words.empty()) s.replace(b, e - b, words[pick(words.size())]);
      return s;
    }
    case 2: {
      const std::size_t at = pick(s.size());
      return s.erase(at, 1 + pick(4));
    }
    case 3: {
      const std::size_t at = pick(s.size() + 1);
      return s.insert(at, 1, kChars[pick(kChars.size())]);
    }
    case 4: {
      lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(pick(lines.size())));
      return join(lines);
    }
    case 5: {
      const std::size_t i = pick(lines.size());
      lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(pick(lines.size())), lines[i]);
      return join(lines);
    }
    case 6: {
      std::swap(lines[pick(lines.size())], lines[pick(lines.size())]);
      return join(lines);
    }
    default: return s.substr(0, pick(s.size()));
  }
}

TEST(TirRead, MutatedListingsNeverCrash) {
  std::vector<std::string> texts;
  for (const char* phase : {"tir", "passes"}) {
    for (const auto& e : fs::directory_iterator(kGoldenDir / phase)) {
      const std::string ext = e.path().extension().string();
      if (ext == ".tir" || ext == ".passes") texts.push_back(read_file(e.path()));
    }
  }
  ASSERT_FALSE(texts.empty());
  // IRIS_TIR_FUZZ_EDITS (edits per listing, default 300) and IRIS_TIR_FUZZ_SEED for
  // longer runs by hand.
  const char* edits_env = std::getenv("IRIS_TIR_FUZZ_EDITS");
  const char* seed_env = std::getenv("IRIS_TIR_FUZZ_SEED");
  const int edits = edits_env ? std::atoi(edits_env) : 300;
  std::mt19937 rng(seed_env ? static_cast<unsigned>(std::strtoul(seed_env, nullptr, 10)) : 20261123u);
  int read_ok = 0, verified = 0, tries = 0;
  for (const std::string& text : texts) {
    const std::vector<std::string> words = words_of(text);
    for (int n = 0; n < edits; ++n) {
      // Up to three edits on top of each other.
      std::string t = text;
      for (int k = 1 + static_cast<int>(rng() % 3); k > 0; --k) t = mutate(t, words, rng);
      ++tries;
      irisc::tir::Module m;
      irisc::tir::ReadError e;
      bool ok = false;
      try {
        ok = irisc::tir::read(t, &m, &e);
      } catch (...) {
        ADD_FAILURE() << "read() threw on:\n" << t;
        continue;
      }
      if (!ok) {
        EXPECT_FALSE(e.message.empty()) << t;
        EXPECT_GE(e.line, 1u) << t;
        EXPECT_LE(e.offset, t.size()) << t;
        continue;
      }
      ++read_ok;
      const std::string listing = irisc::tir::print(m);  // any module read() returns prints
      if (!irisc::tir::verify(m).empty()) continue;
      ++verified;
      expect_reads_back(listing, "mutated listing");
      irisc::CompileOptions o;
      o.stop_after = irisc::Stage::source;
      irisc::CompileResult r;
      ASSERT_TRUE(compile_no_throw(irisc::SourceBuffer("mutated.tir", t), o, &r, true)) << t;
      for (const irisc::Diagnostic& d : r.diagnostics) {
        EXPECT_NE(d.kind, irisc::DiagnosticKind::ToolchainFailed) << "a verified listing broke a pass or codegen:\n"
                                                                  << r.rendered_diagnostics << t;
      }
      if (testing::Test::HasFailure()) return;
    }
  }
  std::cout << tries << " edited listings: " << read_ok << " read, " << verified << " verified\n";
  EXPECT_GT(verified, 0);
}

}  // namespace
