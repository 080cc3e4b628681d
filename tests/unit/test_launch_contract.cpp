// The launch contract (compiler/contract): what irisc writes reads back identically, and
// a corrupt contract is an Error at read time (or an error code at evaluation), never a
// crash, a hang or an overflow.
#include <gtest/gtest.h>

#include <climits>
#include <string>

#include "compiler/contract/launch_contract.hpp"
#include "compiler/driver/compile.hpp"
#include "templates/include/iris/device/gemm/shapes.hpp"

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
  return R"({"format":"irisc-metadata","version":3,"kernels":[{"name":"k","symbol":"iris_k_k","threads":256,)"
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
  expect_read_error(R"({"format":"irisc-metadata","version":1,"kernels":[]})", "version 1 is not 3");
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

// A kernel that runs as the sm90 GEMM template (select-gemm-mainloop) passes one TMA
// tensor map per operand after everything else, with the template's boxes, and runs a
// persistent grid of min(tiles, sms) programs.
TEST(LaunchContract, GemmKernelPassesTensorMaps) {
  const char* source = R"(
kernel kn<BM: int = 128, BN: int = 256>(A: tensor<bf16>[M, K], B: tensor<bf16>[K, N], C: tensor<bf16>[M, N]) {
    for (m, n) in tiles([M, N], [BM, BN]) {
        let c = matmul(A[m, :], B[:, n], acc: f32) as bf16;
        store(C[m, n], c);
    }
}
kernel nk(A: tensor<f16>[M, K], Bt: tensor<f16>[N, K], C: tensor<f32>[M, N], s: f32) {
    for (m, n) in tiles([M, N], [64, 128]) {
        let c = matmul(A[m, :], Bt[n, :], acc: f32);
        store(C[m, n], c * s);
    }
}
)";
  const std::string text = metadata_of(source);
  const c::Module m = c::read(text);
  EXPECT_EQ(c::write(m), text);
  ASSERT_EQ(m.kernels.size(), 2u);
  const c::Kernel& kn = m.kernels[0];
  EXPECT_EQ(kn.threads, 384);  // a producer warpgroup and two consumers
  EXPECT_EQ(kn.min_blocks_per_sm, 1);
  EXPECT_EQ(kn.dynamic_shared_bytes, iris::device::gemm::sm90_shared_bytes({128, 256, 64, 4, 16, 2}));
  // 128-row tiles run in clusters of 2 along M: whole clusters of tile rows.
  EXPECT_EQ(kn.cluster, 2);
  EXPECT_EQ(m.kernels[1].cluster, 1);
  EXPECT_EQ(c::to_string(kn.grid, kn.sizes), "min((((((M + 127) / 128) + 1) / 2) * 2) * ((N + 255) / 256), sms)");
  const std::int64_t sizes[] = {200, 136, 296};  // M, K, N
  std::int64_t v = 0;
  ASSERT_EQ(c::eval(kn.grid, {sizes, 2, 132}, &v), c::EvalError::ok);
  EXPECT_EQ(v, 4);
  const std::int64_t tall[] = {300, 136, 296};  // 3 tile rows: 2 clusters
  ASSERT_EQ(c::eval(kn.grid, {tall, 2, 132}, &v), c::EvalError::ok);
  EXPECT_EQ(v, 8);
  // context, A, B, C, M, K, N, sms, then the maps of A and B
  ASSERT_EQ(kn.args.size(), 10u);
  const c::Arg& a = kn.args[8];
  const c::Arg& b = kn.args[9];
  EXPECT_EQ(a.kind, c::ArgKind::tensor_map);
  EXPECT_EQ(a.index, 0);
  EXPECT_EQ(a.bytes, 128);
  EXPECT_EQ(a.role, c::MapRole::a);
  EXPECT_EQ(a.box_rows, 128);  // BM rows of 64 k
  EXPECT_EQ(a.box_cols, 64);
  EXPECT_EQ(b.kind, c::ArgKind::tensor_map);
  EXPECT_EQ(b.index, 1);
  EXPECT_EQ(b.role, c::MapRole::b_kn);
  EXPECT_EQ(b.box_rows, 64);  // 64 k rows of 64 n
  EXPECT_EQ(b.box_cols, 64);
  const c::Kernel& nk = m.kernels[1];
  EXPECT_EQ(nk.threads, 256);  // one consumer warpgroup for 64 rows
  ASSERT_EQ(nk.args.size(), 11u);
  EXPECT_EQ(nk.args[10].role, c::MapRole::b_nk);
  EXPECT_EQ(nk.args[10].box_rows, 128);  // BN rows of 64 k
  EXPECT_EQ(nk.args[10].box_cols, 64);
  EXPECT_NE(text.find(R"({"kind":"tensor_map","bytes":128,"index":1,"role":"b_kn","box":[64,64]})"), std::string::npos);
}

TEST(LaunchContract, CorruptTensorMapsAreErrors) {
  const auto with_map = [](const std::string& param, const std::string& map) {
    return R"({"format":"irisc-metadata","version":3,"kernels":[{"name":"k","symbol":"iris_k_k","threads":384,)"
           R"("min_blocks_per_sm":1,"dynamic_shared_bytes":0,"grid":"sms","roles":[],"constants":{},"sizes":["M","K"],)"
           R"("params":[)" +
           param + R"(,{"name":"s","kind":"scalar","dtype":"f32"}],"args":[{"kind":"context","bytes":72},)"
                   R"({"kind":"param","index":0,"bytes":8},{"kind":"param","index":1,"bytes":4},)"
                   R"({"kind":"size","index":0,"bytes":8},{"kind":"size","index":1,"bytes":8},{"kind":"sms","bytes":8},)" +
           map + "]}]}";
  };
  const std::string a = R"({"name":"A","kind":"tensor","dtype":"bf16","symmetric":false,"dims":[["size",0],["size",1]]})";
  const std::string good = R"({"kind":"tensor_map","bytes":128,"index":0,"role":"a","box":[128,64]})";
  {
    const c::Module m = c::read(with_map(a, good));
    EXPECT_EQ(m.kernels[0].args.back().kind, c::ArgKind::tensor_map);
    EXPECT_EQ(m.kernels[0].args.back().box_rows, 128);
  }
  const std::string f32 = R"({"name":"A","kind":"tensor","dtype":"f32","symmetric":false,"dims":[["size",0],["size",1]]})";
  expect_read_error(with_map(f32, good), "not a 2-D tensor of bf16 or f16");
  const std::string flat = R"({"name":"A","kind":"tensor","dtype":"bf16","symmetric":false,"dims":[["size",0],["size",1],2]})";
  expect_read_error(with_map(flat, good), "not a 2-D tensor of bf16 or f16");
  expect_read_error(with_map(a, R"({"kind":"tensor_map","bytes":128,"index":1,"role":"a","box":[128,64]})"),
                    "not a 2-D tensor");  // the scalar s
  expect_read_error(with_map(a, R"({"kind":"tensor_map","bytes":128,"index":2,"role":"a","box":[128,64]})"),
                    "outside [0, 1]");
  expect_read_error(with_map(a, R"({"kind":"tensor_map","bytes":64,"index":0,"role":"a","box":[128,64]})"),
                    "tensor maps are 128 bytes");
  expect_read_error(with_map(a, R"({"kind":"tensor_map","bytes":128,"index":0,"role":"c","box":[128,64]})"),
                    "unknown role 'c'");
  expect_read_error(with_map(a, R"({"kind":"tensor_map","bytes":128,"index":0,"role":"a"})"), "missing \"box\"");
  expect_read_error(with_map(a, R"({"kind":"tensor_map","bytes":128,"index":0,"role":"a","box":[128]})"),
                    "must be [rows, cols]");
  expect_read_error(with_map(a, R"({"kind":"tensor_map","bytes":128,"index":0,"role":"a","box":[512,64]})"),
                    "is not one TMA reads");
  expect_read_error(with_map(a, R"({"kind":"tensor_map","bytes":128,"index":0,"role":"a","box":[128,128]})"),
                    "is not one TMA reads");
}
