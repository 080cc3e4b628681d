// The launch contract (compiler/contract): what irisc writes reads back identically, and
// a corrupt contract is an Error at read time (or an error code at evaluation), never a
// crash, a hang or an overflow.
#include <gtest/gtest.h>

#include <climits>
#include <string>

#include "compiler/contract/launch_contract.hpp"
#include "compiler/driver/compile.hpp"

namespace c = irisc::contract;

namespace {

std::string metadata_of(const char* source) {
  irisc::CompileOptions o;
  o.stop_after = irisc::Stage::cuda;
  const irisc::CompileResult r = irisc::compile(irisc::SourceBuffer("k.iris", source), o);
  EXPECT_TRUE(r.ok) << r.rendered_diagnostics;
  return r.metadata;
}

const char* kGemm = R"(
kernel gemm<BM: int = 64>(A: tensor<bf16>[M, K], B: tensor<bf16>[K, N], C: symmetric tensor<bf16>[M, N * world], s: f32) {
    for (m, n) in tiles([M, N], [BM, 64]) {
        store(C[m, n + rank * N], (matmul(A[m, :], B[:, n]) * s) as bf16);
    }
}
kernel roles(x: symmetric tensor<f32>[N]) {
    role a(programs: max(sms - 2, 1)) { store(x[0], 1.0); }
    role b(programs: 2) { store(x[1], 1.0); }
}
)";

// A minimal valid contract whose pieces the corruption tests replace.
std::string contract_with(const std::string& dims, const std::string& grid, const std::string& extra_args = "") {
  return R"({"format":"irisc-metadata","version":2,"kernels":[{"name":"k","symbol":"iris_k_k","threads":256,)"
         R"("min_blocks_per_sm":0,"dynamic_shared_bytes":0,"grid":)" +
         grid + R"(,"roles":[],"constants":{},"sizes":["N"],"params":[{"name":"x","kind":"tensor","dtype":"f32",)"
         R"("symmetric":false,"dims":[)" +
         dims + R"(]}],"args":[{"kind":"context","bytes":72},{"kind":"param","index":0,"bytes":8},)"
         R"({"kind":"size","index":0,"bytes":8})" +
         extra_args + R"(,{"kind":"sms","bytes":8}]}]})";
}

void expect_read_error(const std::string& text, const std::string& needle) {
  try {
    c::read(text);
    ADD_FAILURE() << "read() accepted a corrupt contract; expected an error mentioning '" << needle << "'";
  } catch (const c::Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(LaunchContract, WhatIriscWritesReadsBackIdentically) {
  const std::string text = metadata_of(kGemm);
  const c::Module m = c::read(text);
  ASSERT_EQ(m.kernels.size(), 2u);
  EXPECT_EQ(c::write(m), text);
  const c::Kernel& k = m.kernels[0];
  EXPECT_EQ(k.symbol, "iris_k_gemm");
  EXPECT_EQ(k.sizes, (std::vector<std::string>{"M", "K", "N"}));
  EXPECT_EQ(k.min_blocks_per_sm, 2);  // tensor cores
  // context, A, B, C, s, M, K, N, sms
  ASSERT_EQ(k.args.size(), 9u);
  EXPECT_EQ(k.args[0].kind, c::ArgKind::context);
  EXPECT_EQ(k.args[4].kind, c::ArgKind::param);
  EXPECT_EQ(k.args[4].bytes, 4);  // f32 scalar
  EXPECT_EQ(k.args[8].kind, c::ArgKind::sms);
  EXPECT_EQ(c::to_string(k.params[2].dims[1], k.sizes), "N * world");
  EXPECT_EQ(c::to_string(m.kernels[1].roles[0].programs, {}), "max(sms - 2, 1)");
  // No expression text anywhere: extents and grids are structured.
  EXPECT_EQ(text.find("world)"), std::string::npos);
  EXPECT_EQ(text.find("sms *"), std::string::npos);
}

TEST(LaunchContract, EvaluatesWithCheckedArithmetic) {
  const c::Module m = c::read(metadata_of(kGemm));
  const c::Kernel& k = m.kernels[0];
  const std::int64_t sizes[] = {256, 512, 128};
  std::int64_t v = 0;
  ASSERT_EQ(c::eval(k.params[2].dims[1], {sizes, 4, 132}, &v), c::EvalError::ok);
  EXPECT_EQ(v, 512);
  ASSERT_EQ(c::eval(k.grid, {sizes, 4, 132}, &v), c::EvalError::ok);
  EXPECT_EQ(v, 132 * 8);
  const std::int64_t huge[] = {1, 1, INT64_MAX};
  EXPECT_EQ(c::eval(k.params[2].dims[1], {huge, 4, 132}, &v), c::EvalError::overflow);
  c::Expr min_div{{{c::Op::constant, INT64_MIN}, {c::Op::constant, -1}, {c::Op::div, 0}}};
  EXPECT_EQ(c::eval(min_div, {}, &v), c::EvalError::overflow);
  c::Expr by_zero{{{c::Op::constant, 7}, {c::Op::world, 0}, {c::Op::rem, 0}}};
  EXPECT_EQ(c::eval(by_zero, {{}, 0, 1}, &v), c::EvalError::division_by_zero);
  c::Expr underflow{{{c::Op::add, 0}}};
  EXPECT_EQ(c::eval(underflow, {}, &v), c::EvalError::bad_program);
  c::Expr bad_size{{{c::Op::size, 3}}};
  EXPECT_EQ(c::eval(bad_size, {sizes, 1, 1}, &v), c::EvalError::bad_program);
}

TEST(LaunchContract, CorruptContractsAreErrors) {
  EXPECT_NO_THROW(c::read(contract_with(R"(["size",0])", R"(["mul","sms",8])")));
  expect_read_error("{", "not JSON");
  expect_read_error(R"({"format":"irisc-metadata","version":1,"kernels":[]})", "version 1 is not 2");
  expect_read_error(std::string(100000, '[') + std::string(100000, ']'), "nested deeper");
  expect_read_error(contract_with(R"(["size",7])", "1"), "size symbol 7 does not exist");
  expect_read_error(contract_with(R"(["size",0])", R"(["pow",2,3])"), "unknown operation 'pow'");
  expect_read_error(contract_with(R"(["size",0])", R"x("(-9223372036854775807-1)/(-1)")x"), "unknown value");
  expect_read_error(contract_with(R"(["mul",["size",0],"sms"])", "1"), "sms is not known here");
  expect_read_error(contract_with(R"(["mul",["size",0],"resident"])", "1"), "resident is not known here");
  {
    const c::Module m = c::read(contract_with(R"(["size",0])", R"(["mul","sms","resident"])"));
    std::int64_t v = 0;
    c::Bindings b;
    b.sms = 132;
    b.resident = 3;
    ASSERT_EQ(c::eval(m.kernels[0].grid, b, &v), c::EvalError::ok);
    EXPECT_EQ(v, 396);
    EXPECT_EQ(c::to_string(m.kernels[0].grid, m.kernels[0].sizes), "sms * resident");
  }
  expect_read_error(contract_with(R"(["size",0])", "null"), "grid exactly when it has no roles");
  expect_read_error(contract_with(R"(["size",0])", "1", R"(,{"kind":"param","index":0,"bytes":8})"),
                    "not passed exactly once");
  expect_read_error(contract_with(R"(["size",0])", "1", R"(,{"kind":"trace","bytes":8})"), "unknown argument kind");
  std::string deep = "1";
  for (int i = 0; i < 40; ++i) deep = R"(["add",)" + deep + ",1]";
  EXPECT_NO_THROW(c::read(contract_with(R"(["size",0])", deep)));
  std::string longer = "1";
  for (int i = 0; i < 200; ++i) longer = R"(["add",1,)" + longer + "]";
  expect_read_error(contract_with(R"(["size",0])", longer), "nested deeper");
}
