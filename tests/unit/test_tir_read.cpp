// The TIR reader (compiler/tir/tir_read.hpp) and the parts of the printer that make the
// listing lossless: float constants, implied and annotated types, the size order,
// launch decisions, scoping. Round trips over every golden and sample, and a fuzzer,
// are in tests/golden/tir_read_test.cpp.
#include <gtest/gtest.h>

#include <string>

#include "compiler/passes/fold_constants.hpp"
#include "compiler/tir/tir_read.hpp"
#include "compiler/tir/verify.hpp"
#include "compiler/tir/visit.hpp"
#include "templates/include/iris/device/gemm/shapes.hpp"
#include "tir_test_support.hpp"

using namespace irisc;

namespace {

using tir_test::checked;

// Reads `text`, which must verify; returns the module.
tir::Module read_ok(const std::string& text) {
  tir::Module m;
  std::string err;
  EXPECT_TRUE(tir::read(text, &m, &err)) << err << "\n" << text;
  EXPECT_EQ(tir::verify(m), "") << text;
  return m;
}

// The listing reads back into a module that prints the same.
void expect_round_trip(const std::string& text) {
  tir::Module m = read_ok(text);
  EXPECT_EQ(tir::print(m), text);
}

std::string read_error(const std::string& text) {
  tir::Module m;
  std::string err;
  EXPECT_FALSE(tir::read(text, &m, &err)) << text;
  EXPECT_TRUE(m.kernels.empty());
  return err;
}

}  // namespace

TEST(TirRead, EmptyTextIsAnEmptyModule) {
  tir::Module m;
  std::string err;
  EXPECT_TRUE(tir::read("  // nothing\n\n", &m, &err)) << err;
  EXPECT_TRUE(m.kernels.empty());
}

TEST(TirRead, FloatConstantsKeepEveryBit) {
  // %g has 6 digits; a constant it would round is written with 17.
  tir::Module m = checked("kernel k(x: tensor<f32>[N]) {\n    store(x[0], 0.1 + 0.2);\n    store(x[1], 1.5);\n}\n");
  fold_constants(m);
  const std::string text = tir::print(m);
  EXPECT_NE(text.find("<- 0.30000000000000004:f32"), std::string::npos) << text;
  EXPECT_NE(text.find("<- 1.5:f32"), std::string::npos) << text;
  tir::Module back = read_ok(text);
  EXPECT_EQ(back.kernels[0].body[0]->value->float_value, 0.1 + 0.2);
  EXPECT_EQ(tir::print(back), text);
  expect_round_trip("kernel k(x: tensor<f32>[1:int]) {\n  store x[0:int] <- -inf:f32\n  store x[0:int] <- 1e+300:f32\n"
                    "  store x[0:int] <- -0:f32\n}\n");
}

TEST(TirRead, IntegerConstantsCoverSixtyFourBits) {
  expect_round_trip("kernel k(x: tensor<u64>[1:int]) {\n  store x[0:int] <- -9223372036854775808:u64\n"
                    "  store x[0:int] <- 9223372036854775807:u64\n}\n");
  EXPECT_NE(read_error("kernel k(x: tensor<u64>[1:int]) {\n  store x[0:int] <- 9223372036854775808:u64\n}\n")
                .find("2:21: an integer does not fit in 64 bits"),
            std::string::npos);
}

TEST(TirRead, ImpliedTypesAreLeftOutAndOthersWritten) {
  // Sema's types are the implied ones: no annotations.
  tir::Module m = checked(
      "kernel k(x: tensor<f32>[N], c: symmetric tensor<u32>[N]) {\n"
      "    for i in blocks(N, 256) {\n"
      "        let t = x[i];\n"
      "        store(x[i], max(t, 0.0) + sqrt(t));\n"
      "        let flags = index(i) < 5;\n"
      "        let old = atomic_add(c[i], 1);\n"
      "        store(x[0], sum(t));\n"
      "    }\n"
      "}\n");
  const std::string text = tir::print(m);
  for (const char* typed : {"add<", "max<", "sqrt<", "lt<", "index<", "sum<", "start<", "extent<", "system, "}) {
    EXPECT_EQ(text.find(std::string(" ") + typed), std::string::npos) << typed << "\n" << text;
    EXPECT_EQ(text.find(std::string("(") + typed), std::string::npos) << typed << "\n" << text;
  }
  expect_round_trip(text);
  // A type that is not the implied one is written, and read.
  const std::string typed =
      "kernel k(x: tensor<i64>[#N], c: tensor<u32>[#N]) grid 1:int {\n"
      "  let %a: i64 = add<i64>(1:int, 2:int)\n"
      "  let %b: int = add(1:int, 2:int)\n"
      "  let %s: i64 = sum<i64>(fill<tile<i32>[64]>(1:i32))\n"
      "  let %o: u64 = atomic_add<acq_rel, system, u64>(c[0:int], 1:u32)\n"
      "  let %u: i64 = neg<i64>(1:int)\n"
      "}\n";
  tir::Module t = read_ok(typed);
  EXPECT_EQ(t.kernels[0].body[0]->value->type, tir::Type::scalar(tir::ScalarType::i64));
  EXPECT_EQ(t.kernels[0].body[1]->value->type, tir::Type::scalar(tir::ScalarType::int_));
  EXPECT_EQ(tir::print(t), typed);
}

TEST(TirRead, SizeOrderIsWrittenWhenItIsNotTheOrderOfFirstUse) {
  // Sema numbers sizes from bare extents (N, then M); the first use in the listing is M.
  tir::Module m = checked(
      "kernel k(a: tensor<f32>[M * N], b: tensor<f32>[N], c: tensor<f32>[M]) {\n    store(a[0], 1.0);\n}\n");
  ASSERT_EQ(m.kernels[0].size_symbols, (std::vector<std::string>{"N", "M"}));
  const std::string text = tir::print(m);
  EXPECT_NE(text.find(") sizes(#N, #M) {"), std::string::npos) << text;
  tir::Module back = read_ok(text);
  EXPECT_EQ(back.kernels[0].size_symbols, m.kernels[0].size_symbols);
  EXPECT_EQ(tir::print(back), text);
  // In the order of first use, nothing is written.
  tir::Module plain = checked("kernel k(a: tensor<f32>[N], b: tensor<f32>[M]) {\n    store(a[0], 1.0);\n}\n");
  EXPECT_EQ(tir::print(plain).find("sizes("), std::string::npos);
  EXPECT_NE(read_error("kernel k(a: tensor<f32>[#N]) sizes(#M) {\n}\n").find("1:25: size #N is not in"),
            std::string::npos);
}

TEST(TirRead, LaunchDecisions) {
  expect_round_trip(
      "kernel k(x: tensor<f32>[#N]) grid 1:int {\n"
      "  launch threads 128, blocks/sm 2, dynamic shared 4096, layouts 64/1 32x32 64x64/2\n"
      "}\n");
  // Threads without chosen layouts (a hand-made decision) stay.
  tir::Module m = read_ok("kernel k(x: tensor<f32>[#N]) {\n  launch threads 64\n}\n");
  EXPECT_FALSE(m.kernels[0].layouts_chosen);
  EXPECT_EQ(m.kernels[0].block_threads, 64);
  EXPECT_EQ(tir::print(m), "kernel k(x: tensor<f32>[#N]) {\n  launch threads 64\n}\n");
  tir::Module chosen = read_ok("kernel k(x: tensor<f32>[#N]) grid 1:int {\n  launch threads 256, layouts\n}\n");
  EXPECT_TRUE(chosen.kernels[0].layouts_chosen);
  EXPECT_TRUE(chosen.kernels[0].layouts.empty());
  EXPECT_NE(read_error("kernel k() {\n  launch threads 2048\n}\n").find("2:18: a thread count 2048 is out of range"),
            std::string::npos);
  EXPECT_NE(read_error("kernel k() {\n  launch threads 64, threads 64\n}\n").find("'threads' is given twice"),
            std::string::npos);
}

// The sm90 GEMM decision: `gemm stages N group_m N cluster N` and the accumulator layout `RxC/acc`
// on the launch line, `wgmma_ws` on the matmul (here with B given as [N, K]).
TEST(TirRead, GemmDecision) {
  const std::string shared = std::to_string(iris::device::gemm::sm90_shared_bytes({64, 128, 64, 6, 16}));
  const std::string text =
      "kernel g(A: tensor<bf16>[#M, #K], Bt: tensor<bf16>[#N, #K], C: tensor<f32>[#M, #N]) grid "
      "min(mul(div(add(#M, 63:int), 64:int), div(add(#N, 127:int), 128:int)), sms) {\n"
      "  launch threads 256, blocks/sm 1, dynamic shared " + shared + ", gemm stages 6 group_m 16 cluster 1, layouts 64x128/acc\n"
      "  for (%m, %n) in tiles([#M, #N], [64, 128]) {\n"
      "    let %c: tile<f32>[64, 128] = matmul<tile<f32>[64, 128], wgmma_ws>(A[mul(start(%m), #K) rows 64 valid "
      "extent(%m) x all #K ld #K], Bt[mul(start(%n), #K) rows 128 valid extent(%n) x all #K ld #K])\n"
      "    store C[add(mul(start(%m), #N), start(%n)) +: 64x128 valid extent(%m)xextent(%n) ld #N] <- %c\n"
      "  }\n"
      "}\n";
  expect_round_trip(text);
  const tir::Module m = read_ok(text);
  EXPECT_EQ(m.kernels[0].gemm, (tir::GemmMainloop{6, 16, 1}));
  EXPECT_TRUE(m.kernels[0].layouts[0].accumulator);
  EXPECT_FALSE(m.kernels[0].uses_mma);
  EXPECT_NE(read_error("kernel k() {\n  launch gemm stages 4\n}\n").find("expected 'group_m'"), std::string::npos);
}

TEST(TirRead, MatmulLoweringSetsUsesMma) {
  const std::string head =
      "kernel k(A: tensor<bf16>[#M, #K], B: tensor<bf16>[#K, #N]) {\n"
      "  for (%m, %n) in tiles([#M, #N], [64, 64]) {\n"
      "    let %c: tile<f32>[64, 64] = matmul<tile<f32>[64, 64]";
  const std::string tail =
      ">(A[mul(start(%m), #K) rows 64 valid extent(%m) x all #K ld #K], B[start(%n) all #K x cols 64 valid "
      "extent(%n) ld #N])\n  }\n}\n";
  EXPECT_FALSE(read_ok(head + tail).kernels[0].uses_mma);
  EXPECT_FALSE(read_ok(head + ", simt" + tail).kernels[0].uses_mma);
  EXPECT_TRUE(read_ok(head + ", mma_sync" + tail).kernels[0].uses_mma);
}

TEST(TirRead, TwoDimensionalViewBoundsAfterNames) {
  // `x` is glued to a `)`, spaced after a name.
  expect_round_trip(
      "kernel k(A: tensor<f32>[#M, #N]) grid 1:int {\n"
      "  store A[0:int +: 32x32 valid #M x #N ld #N] <- 1:f32\n"
      "  store A[0:int +: 32x32 valid min(#M, 32:int)x#N ld #N] <- 1:f32\n"
      "}\n");
}

TEST(TirRead, VariablesResolveInLexicalScope) {
  tir::Module m = read_ok(
      "kernel k(x: tensor<i64>[#N]) grid 1:int {\n"
      "  let %v: int = 1:int\n"
      "  for %i in range(0:int, %v) {\n"
      "    let %v: int = %i\n"
      "    store x[%v] <- 1:i64\n"
      "  }\n"
      "  store x[%v] <- 2:i64\n"
      "}\n");
  const tir::Kernel& k = m.kernels[0];
  ASSERT_EQ(k.vars.size(), 3u);
  EXPECT_TRUE(k.vars[0].mutable_);   // a let
  EXPECT_FALSE(k.vars[1].mutable_);  // a loop variable
  EXPECT_EQ(k.body[1]->hi->var, 0);  // the bound sees the outer %v
  EXPECT_EQ(k.body[1]->body[1]->view.offset->var, 2);
  EXPECT_EQ(k.body[2]->view.offset->var, 0);
  EXPECT_NE(read_error("kernel k(x: tensor<i64>[#N]) {\n  for %i in range(0:int, 4:int) {\n  }\n  store x[%i] <- 1:i64\n}\n")
                .find("4:11: unknown variable %i"),
            std::string::npos);
  EXPECT_NE(read_error("kernel k(x: tensor<i64>[#N]) {\n  for %i in range(0:int, 4:int) {\n    %i = 1:int\n  }\n}\n")
                .find("3:5: cannot assign to loop variable %i"),
            std::string::npos);
  EXPECT_NE(read_error("kernel k(x: tensor<i64>[#N]) {\n  let %a: int = %a\n}\n").find("2:17: unknown variable %a"),
            std::string::npos);
}

// An inlined function's parameter is a `let` of its name, which hides a variable of
// that name that the caller uses after the call in the same scope: the listing gives the
// caller's variable a name of its own, so that it reads back as the same kernel (the
// host backend runs the listing).
TEST(TirRead, AVariableHiddenByAnInlinedParameterIsListedUnderANameOfItsOwn) {
  tir::Module m = checked(
      "fn twice(e: int) {\n    return e * 2;\n}\n"
      "kernel k(x: tensor<i64>[N]) {\n"
      "    let e = 5;\n"
      "    for i in range(0, 2) {\n"
      "        store(x[i], twice(i + 1));\n"
      "        store(x[i + 2], e);\n"
      "    }\n"
      "}\n");
  const std::string text = tir::print(m);
  EXPECT_NE(text.find("let %e_1: int = 5:int"), std::string::npos) << text;
  EXPECT_NE(text.find("<- cast<i64>(%e_1)"), std::string::npos) << text;
  EXPECT_NE(text.find("let %e: int = add(%i, 1:int)"), std::string::npos) << text;
  tir::Module back = read_ok(text);
  EXPECT_EQ(tir::print(back), text);
  // The second store reads the kernel's e, not the parameter.
  const tir::Kernel& k = back.kernels[0];
  int stores = 0;
  tir::walk(k.body, [&](const tir::Stmt& s) {
    if (s.kind != tir::StmtKind::Store || ++stores != 2) return;
    int var = -1;
    tir::walk(*s.value, [&](const tir::Value& v) {
      if (v.kind == tir::ValueKind::VarRef) var = v.var;
    });
    ASSERT_GE(var, 0);
    EXPECT_EQ(k.vars[static_cast<std::size_t>(var)].name, "e_1");
  }, [](const tir::Value&) {});
  EXPECT_EQ(stores, 2);
}

TEST(TirRead, ErrorsSayWhereAndWhat) {
  const std::pair<const char*, const char*> cases[] = {
      {"kernal k() {\n}\n", "1:1: expected 'kernel', found 'kernal'"},
      {"kernel k(x: tensor<f32>[#N]) {\n  store y[0:int] <- 1:f32\n}\n", "2:9: 'y' is not a tensor parameter"},
      {"kernel k(x: tensor<f32>[#N]) {\n  store x[0:int] <- 1:f33\n}\n", "2:23: unknown element type 'f33'"},
      {"kernel k(x: tensor<f32>[#N]) {\n  store x[0:int] <- frob(1:f32)\n}\n",
       "2:21: unknown operation 'frob' with 1 operand(s)"},
      {"kernel k(x: tensor<f32>[#N]) {\n  store x[0:int] <- add(1:f32)\n}\n",
       "2:21: unknown operation 'add' with 1 operand(s)"},
      {"kernel k(x: tensor<f32>[#N]) {\n  store x[0:int] <- 1.5.5:f32\n}\n", "2:21: malformed number '1.5.5'"},
      {"kernel k(x: tensor<f32>[#N]) {\n  store x[0:int] <- 1.5:int\n}\n", "2:21: malformed integer '1.5' for int"},
      {"kernel k(x: tensor<f32>[#N]) {\n  store x[0:int] <- 1:f32\n", "3:1: expected '}', found the end of the text"},
      {"kernel k(x: tensor<f32>[#N]) {\n  wait<acquire, system> x[0:int] near 1:f32\n}\n",
       "2:34: unknown comparison 'near'"},
      {"kernel k(x: tensor<f32>[#N]) {\n  signal<release, galaxy> set x[0:int] <- 1:f32\n}\n",
       "2:19: unknown scope 'galaxy'"},
      {"kernel k(x: tensor<f32>[#N], x: f32) {\n}\n", "1:30: parameter 'x' is defined twice"},
      {"kernel k() {\n}\nkernel k() {\n}\n", "3:1: kernel 'k' is defined twice"},
      {"kernel k() {\n  role a = 1:int {\n  }\n  role a = 1:int {\n  }\n}\n", "4:8: role 'a' is defined twice"},
      {"kernel k(x: tensor<f32>[#N]) {\n  for %i in blocks(#N, 0) {\n  }\n}\n",
       "2:24: a block size 0 is out of range [1, 1048576]"},
      {"kernel k() {\n  \xff\n}\n", "2:3: expected a statement, found byte 0xff"},
      {"kernel k() with B=1 B=2 {\n}\n", "1:21: compile-time parameter 'B' is given twice"},
  };
  for (const auto& [text, want] : cases) {
    const std::string err = read_error(text);
    EXPECT_EQ(err.rfind(want, 0), 0u) << "got: " << err << "\nwant: " << want << "\nfor:\n" << text;
  }
}

TEST(TirRead, DeepNestingIsAnErrorNotACrash) {
  auto nested = [](int n) {
    std::string s = "kernel k(x: tensor<i64>[#N]) grid 1:int {\n  store x[0:int] <- ";
    for (int i = 0; i < n; ++i) s += "neg(";
    s += "1:i64";
    for (int i = 0; i < n; ++i) s += ")";
    return s + "\n}\n";
  };
  expect_round_trip(nested(tir::kMaxReadNesting - 10));
  EXPECT_NE(read_error(nested(tir::kMaxReadNesting + 1)).find("nesting deeper than"), std::string::npos);
  EXPECT_NE(read_error(nested(200000)).find("nesting deeper than"), std::string::npos);
  std::string ifs = "kernel k() {\n";
  for (int i = 0; i < 100000; ++i) ifs += "if 1:bool {\n";
  EXPECT_NE(read_error(ifs).find("nesting deeper than"), std::string::npos);
}

TEST(TirRead, ErrorReportsOffsetLineAndColumn) {
  tir::ReadError e;
  tir::Module m;
  EXPECT_FALSE(tir::read("kernel k() {\n  eval %x\n}\n", &m, &e));
  EXPECT_EQ(e.offset, 20u);
  EXPECT_EQ(e.line, 2u);
  EXPECT_EQ(e.column, 8u);
  EXPECT_EQ(e.message, "unknown variable %x (no definition in scope)");
}

namespace {

// Every kernel, statement and value range, in listing order.
void ranges_of(const std::vector<tir::StmtPtr>& body, std::vector<std::pair<std::uint32_t, std::uint32_t>>& out);
void ranges_of(const tir::Value& v, std::vector<std::pair<std::uint32_t, std::uint32_t>>& out) {
  out.emplace_back(v.range.begin, v.range.end);
  tir::for_each_child(v, [&](const tir::ValuePtr& c) { ranges_of(*c, out); });
}
void ranges_of(const std::vector<tir::StmtPtr>& body, std::vector<std::pair<std::uint32_t, std::uint32_t>>& out) {
  for (const tir::StmtPtr& s : body) {
    out.emplace_back(s->range.begin, s->range.end);
    tir::for_each_value(*s, [&](const tir::ValuePtr& v) { ranges_of(*v, out); });
    tir::for_each_body(*s, [&](const std::vector<tir::StmtPtr>& b) { ranges_of(b, out); });
  }
}

}  // namespace

// With positions (the host code object's listing): the kernel's, every statement's and
// every value's source range, and each view's per-dimension indices, read back as they
// were; without, the listing is the one the goldens hold.
TEST(TirRead, PositionsAndIndicesComeBack) {
  tir::Module m = checked(R"(kernel k(x: tensor<f32>[R, C], y: tensor<f32>[N]) {
    for i in blocks(N, 64) {
        store(y[i], load(y[i]) * 2.0);
        store(x[1, i], load(y[i]));
    }
})");
  const std::string listing = tir::print(m, true);
  EXPECT_NE(listing.find(" at ("), std::string::npos) << listing;
  EXPECT_NE(listing.find("@"), std::string::npos) << listing;
  EXPECT_EQ(tir::print(m).find("@"), std::string::npos);
  tir::Module back = read_ok(listing);
  EXPECT_EQ(tir::print(back, true), listing);
  EXPECT_EQ(tir::print(back), tir::print(m));
  std::vector<std::pair<std::uint32_t, std::uint32_t>> want, got;
  ranges_of(m.kernels[0].body, want);
  ranges_of(back.kernels[0].body, got);
  EXPECT_EQ(got, want);
  EXPECT_EQ(back.kernels[0].range.begin, m.kernels[0].range.begin);
  EXPECT_EQ(back.kernels[0].range.end, m.kernels[0].range.end);
}
