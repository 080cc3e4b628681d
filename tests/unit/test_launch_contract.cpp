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

std::string metadata_of(const char* source, bool tma_stores = false) {
  irisc::CompileOptions o;
  o.stop_after = irisc::Stage::source;
  o.tma_stores = tma_stores;
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

// `text` with its first `from` replaced by `to`.
std::string edited(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
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
  c::Expr min_rem{{{c::Op::constant, INT64_MIN}, {c::Op::constant, -1}, {c::Op::rem, 0}}};
  EXPECT_EQ(c::eval(min_rem, {}, &v), c::EvalError::overflow);
  c::Expr min_neg{{{c::Op::constant, INT64_MIN}, {c::Op::constant, -1}, {c::Op::mul, 0}}};
  EXPECT_EQ(c::eval(min_neg, {}, &v), c::EvalError::overflow);
  c::Expr below{{{c::Op::constant, INT64_MIN}, {c::Op::constant, 1}, {c::Op::sub, 0}}};
  EXPECT_EQ(c::eval(below, {}, &v), c::EvalError::overflow);
  c::Expr min_by_one{{{c::Op::constant, INT64_MIN}, {c::Op::constant, 1}, {c::Op::div, 0}}};
  ASSERT_EQ(c::eval(min_by_one, {}, &v), c::EvalError::ok);
  EXPECT_EQ(v, INT64_MIN);
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
// persistent grid of min(tiles, sms) programs; compiled with tma_stores, then one map
// for each 16-bit tensor its epilogue stores tiles into (a consumer's 64 x 64 boxes).
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
  {
    const c::Kernel with = c::read(metadata_of(source, true)).kernels[0];
    ASSERT_EQ(with.args.size(), 11u);  // and C's
    const c::Arg& cm = with.args[10];
    EXPECT_EQ(cm.kind, c::ArgKind::tensor_map);
    EXPECT_EQ(cm.index, 2);
    EXPECT_EQ(cm.role, c::MapRole::c);  // stored on this rank only
    EXPECT_EQ(cm.bytes, 128);
    EXPECT_EQ(cm.box_rows, 64);
    EXPECT_EQ(cm.box_cols, 64);
  }
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
  ASSERT_EQ(nk.args.size(), 11u);  // an f32 C: no map, its epilogue stores from its threads
  EXPECT_EQ(nk.args[10].role, c::MapRole::b_nk);
  EXPECT_EQ(nk.args[10].box_rows, 128);  // BN rows of 64 k
  EXPECT_EQ(nk.args[10].box_cols, 64);
  EXPECT_NE(text.find(R"({"kind":"tensor_map","bytes":128,"index":1,"role":"b_kn","box":[64,64]})"), std::string::npos);
}

// With tma_stores the epilogue stores by TMA only where nothing in it orders those
// stores before something else: a signal after the store keeps it on the consumers'
// threads (no map), and a store to another rank of a symmetric tensor takes one map a
// rank. Without it, no kernel has such a map.
TEST(LaunchContract, EpilogueTmaStoresWhereNothingWaitsForThem) {
  const char* source = R"(
kernel push(A: tensor<bf16>[M, K], B: tensor<bf16>[K, N], R: symmetric tensor<bf16>[M, N]) {
    for (m, n) in tiles([M, N], [128, 256]) {
        let c = matmul(A[m, :], B[:, n], acc: f32) as bf16;
        store(R[m, n], c, to: (rank + 1) % world);
    }
}
kernel flagged(A: tensor<bf16>[M, K], B: tensor<bf16>[K, N], C: tensor<bf16>[M, N], f: tensor<u64>[F]) {
    for t, (m, n) in tiles([M, N], [128, 256]) {
        let c = matmul(A[m, :], B[:, n], acc: f32) as bf16;
        store(C[m, n], c);
        signal(f[t], 1 as u64);
    }
}
)";
  const c::Module m = c::read(metadata_of(source, true));
  ASSERT_EQ(m.kernels.size(), 2u);
  const c::Arg& last = m.kernels[0].args.back();
  EXPECT_EQ(last.role, c::MapRole::c_every_rank);
  EXPECT_EQ(last.bytes, c::kTensorMapBytes * c::kMaxRanks);
  EXPECT_EQ(last.index, 2);
  for (const c::Arg& a : m.kernels[1].args) EXPECT_FALSE(a.kind == c::ArgKind::tensor_map && c::stored_through(a.role));
  for (const c::Kernel& k : c::read(metadata_of(source)).kernels) {
    for (const c::Arg& a : k.args) EXPECT_FALSE(a.kind == c::ArgKind::tensor_map && c::stored_through(a.role));
  }
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
                    "tensor maps of role a are 128 bytes");
  // A gathered A: one map per rank in one argument, of a symmetric tensor.
  const std::string sym = R"({"name":"A","kind":"tensor","dtype":"bf16","symmetric":true,"dims":[["size",0],["size",1]]})";
  const std::string gathered = R"({"kind":"tensor_map","bytes":1024,"index":0,"role":"a_gathered","box":[128,64]})";
  {
    const c::Module m = c::read(with_map(sym, gathered));
    EXPECT_EQ(m.kernels[0].args.back().role, c::MapRole::a_gathered);
    EXPECT_EQ(m.kernels[0].args.back().bytes, 1024);
  }
  expect_read_error(with_map(sym, R"({"kind":"tensor_map","bytes":128,"index":0,"role":"a_gathered","box":[128,64]})"),
                    "tensor maps of role a_gathered are 1024 bytes");
  expect_read_error(with_map(a, gathered), "parameter 'A' is gathered but not symmetric");
  expect_read_error(with_map(a, R"({"kind":"tensor_map","bytes":128,"index":0,"role":"d","box":[128,64]})"),
                    "unknown role 'd'");
  // The epilogue's C: on this rank (one map), or on every rank (one map a rank, of a
  // symmetric tensor).
  EXPECT_EQ(c::read(with_map(a, R"({"kind":"tensor_map","bytes":128,"index":0,"role":"c","box":[64,64]})"))
                .kernels[0].args.back().role,
            c::MapRole::c);
  const std::string every = R"({"kind":"tensor_map","bytes":1024,"index":0,"role":"c_every_rank","box":[64,64]})";
  EXPECT_EQ(c::read(with_map(sym, every)).kernels[0].args.back().role, c::MapRole::c_every_rank);
  expect_read_error(with_map(a, every), "parameter 'A' is stored to on every rank but not symmetric");
  expect_read_error(with_map(a, R"({"kind":"tensor_map","bytes":128,"index":0,"role":"a"})"), "missing \"box\"");
  expect_read_error(with_map(a, R"({"kind":"tensor_map","bytes":128,"index":0,"role":"a","box":[128]})"),
                    "must be [rows, cols]");
  expect_read_error(with_map(a, R"({"kind":"tensor_map","bytes":128,"index":0,"role":"a","box":[512,64]})"),
                    "is not one TMA reads");
  expect_read_error(with_map(a, R"({"kind":"tensor_map","bytes":128,"index":0,"role":"a","box":[128,128]})"),
                    "is not one TMA reads");
}

// Numbers out of range, arithmetic that can only fail, and shapes the launcher or the
// driver cannot run are read errors naming the field, not surprises at launch.
TEST(LaunchContract, OutOfRangeMetadataIsAnError) {
  const std::string good = contract_with(R"(["size",0])", "1");
  EXPECT_NO_THROW(c::read(good));
  const auto field = [&](const std::string& from, const std::string& to, const std::string& needle) {
    expect_read_error(edited(good, from, to), needle);
  };
  field(R"("threads":256)", R"("threads":0)", R"(kernel 'k': "threads" = 0 is outside [1, 1024])");
  field(R"("threads":256)", R"("threads":1025)", R"("threads" = 1025 is outside [1, 1024])");
  field(R"("threads":256)", R"("threads":18446744073709551615)", R"("threads" = 18446744073709551615 is outside [1, 1024])");
  field(R"("threads":256)", R"("threads":2.5)", R"("threads" must be an integer)");
  field(R"("dynamic_shared_bytes":0)", R"("dynamic_shared_bytes":232449)",
        R"("dynamic_shared_bytes" = 232449 is outside [0, 232448])");
  field(R"("dynamic_shared_bytes":0)", R"("dynamic_shared_bytes":-1)", R"("dynamic_shared_bytes" = -1 is outside)");
  field(R"("min_blocks_per_sm":0)", R"("min_blocks_per_sm":33)", R"("min_blocks_per_sm" = 33 is outside [0, 32])");
  field(R"("threads":256)", R"("threads":256,"cluster":0)", R"("cluster" = 0 is outside [1, 8])");
  field(R"("threads":256)", R"("threads":256,"cluster":16)", R"("cluster" = 16 is outside [1, 8])");
  EXPECT_EQ(c::read(edited(good, R"("threads":256)", R"("threads":256,"cluster":8)")).kernels[0].cluster, 8);
  // Indices into the parameter and size tables, and argument sizes.
  field(R"({"kind":"param","index":0,"bytes":8})", R"({"kind":"param","index":1,"bytes":8})",
        R"(kernel 'k' argument: "index" = 1 is outside [0, 0])");
  field(R"({"kind":"param","index":0,"bytes":8})", R"({"kind":"param","index":-1,"bytes":8})", R"("index" = -1 is outside [0, 0])");
  field(R"({"kind":"size","index":0,"bytes":8})", R"({"kind":"size","index":3,"bytes":8})", R"("index" = 3 is outside [0, 0])");
  field(R"({"kind":"param","index":0,"bytes":8})", R"({"kind":"param","index":0,"bytes":4})", "argument 'x' has the wrong size");
  field(R"({"kind":"context","bytes":72})", R"({"kind":"context","bytes":0})", R"("bytes" = 0 is outside [1, 4096])");
  field(R"({"kind":"context","bytes":72})", R"({"kind":"context","bytes":4096})",
        "the arguments take 4120 bytes, more than the 4096 a kernel is passed");
  field(R"({"kind":"size","index":0,"bytes":8})", R"({"kind":"size","index":0,"bytes":4})", "size arguments are 8 bytes");
  // Tables: counts and names.
  std::string many_roles;
  for (int i = 0; i < 65; ++i) many_roles += std::string(i ? "," : "") + R"({"name":"r)" + std::to_string(i) + R"(","programs":1})";
  field(R"("grid":1,"roles":[])", R"("grid":null,"roles":[)" + many_roles + "]", "65 roles, more than 64");
  field(R"("grid":1,"roles":[])", R"("grid":null,"roles":[{"name":"a","programs":1},{"name":"a","programs":2}])",
        "role 'a' is declared twice");
  field(R"("sizes":["N"])", R"("sizes":["N","N"])", "size 'N' is named twice");
  field(R"("constants":{})", R"("constants":[1,2])", R"("constants" must be an object)");
  field(R"("constants":{})", R"("constants":{"BM":9223372036854775808})", "integer 9223372036854775808 does not fit in 64 bits");
  std::string many_args;
  for (int i = 0; i < 160; ++i) many_args += R"(,{"kind":"sms","bytes":8})";
  expect_read_error(contract_with(R"(["size",0])", "1", many_args), "164 arguments, more than 160");
  const std::string kernel = good.substr(good.find("{\"name\""), good.rfind("]}") - good.find("{\"name\""));
  expect_read_error(edited(good, kernel, kernel + "," + kernel), "metadata has two kernels named 'k'");
}

TEST(LaunchContract, ExpressionsThatCanOnlyFailAreReadErrors) {
  const auto grid = [](const std::string& g) { return contract_with(R"(["size",0])", g); };
  expect_read_error(grid(R"(["div",-9223372036854775808,-1])"), "kernel 'k' grid: -9223372036854775808 / -1 overflows 64 bits");
  expect_read_error(grid(R"(["rem",-9223372036854775808,-1])"), "kernel 'k' grid: -9223372036854775808 % -1 overflows 64 bits");
  expect_read_error(grid(R"(["mul",["add",9223372036854775807,1],"sms"])"), "overflows 64 bits");
  expect_read_error(grid(R"(["div",["size",0],["sub",2,2]])"), "kernel 'k' grid: N / (2 - 2) divides by zero");
  expect_read_error(grid(R"(["rem","sms",0])"), "sms % 0 divides by zero");
  expect_read_error(grid("9223372036854775808"), "integer 9223372036854775808 does not fit in 64 bits");
  expect_read_error(grid("1.5"), "expected an integer, not 1.5");
  expect_read_error(grid("0"), "kernel 'k' grid: the constant 0 is less than 1");
  expect_read_error(grid(R"(["size",18446744073709551615])"), "integer 18446744073709551615 does not fit in 64 bits");
  expect_read_error(contract_with(R"(["size",0],["sub",0,3])", "1"), "parameter 'x' extent: the constant -3 is less than 0");
  expect_read_error(edited(grid("1"), R"("grid":1,"roles":[])", R"("grid":null,"roles":[{"name":"a","programs":["sub",1,1]}])"),
                    "kernel 'k' role 'a': the constant 0 is less than 1");
  // Non-constant operands are left to the launch, where the values are known.
  EXPECT_NO_THROW(c::read(grid(R"(["div",["size",0],"sms"])")));
  EXPECT_NO_THROW(c::read(grid(R"(["sub",1,["size",0]])")));
}

// The reader recurses over nesting; deep texts are refused before parsing, whatever brackets.
TEST(LaunchContract, DeepNestingIsAnError) {
  expect_read_error(std::string(100000, '['), "metadata nested deeper than 64 levels");
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += R"({"a":)";
  expect_read_error(objects, "metadata nested deeper than 64 levels");
  // Brackets inside strings are text, not nesting.
  const std::string in_names = contract_with(R"(["size",0])", "1");
  EXPECT_NO_THROW(c::read(edited(in_names, R"("name":"k")", R"("name":")" + std::string(1000, '[') + R"(")")));
}
