// The TIR verifier (compiler/tir/verify.hpp): well-formed IR passes; IR broken the ways
// a buggy pass would break it is reported with what is wrong.
#include <gtest/gtest.h>

#include <string>

#include "compiler/passes/choose_launch.hpp"
#include "compiler/passes/select_gemm_mainloop.hpp"
#include "compiler/tir/verify.hpp"
#include "compiler/tir/visit.hpp"
#include "tir_test_support.hpp"

using namespace irisc;

namespace {

using tir_test::checked;

const char* kSource = R"(
kernel k(x: symmetric tensor<f32>[N]) {
    let a = rank + 1;
    for i in blocks(N, 256) {
        store(x[i], load(x[i]) * 2.0, to: a % world);
    }
}
)";

void expect_error(const tir::Module& m, const std::string& needle) {
  const std::string err = tir::verify(m);
  EXPECT_NE(err.find(needle), std::string::npos) << "verify said: '" << err << "'";
}

}  // namespace

TEST(TirVerify, WellFormedModulePasses) {
  tir::Module m = checked(kSource);
  EXPECT_EQ(tir::verify(m), "");
  choose_launch(m);
  EXPECT_EQ(tir::verify(m), "");
}

TEST(TirVerify, UseBeforeDefinition) {
  tir::Module m = checked(kSource);
  auto& body = m.kernels[0].body;
  std::swap(body[0], body[1]);  // the loop now reads %a before its let
  expect_error(m, "%a is used where no definition is in scope");
}

TEST(TirVerify, UseOutsideTheLoopThatDefinesIt) {
  tir::Module m = checked(kSource);
  auto& body = m.kernels[0].body;
  // Move the store out of the blocks loop: %i is no longer defined there.
  body.push_back(std::move(body[1]->body[0]));
  body[1]->body.clear();
  expect_error(m, "%i is used where no definition is in scope");
}

TEST(TirVerify, WrongOperandCount) {
  tir::Module m = checked(kSource);
  m.kernels[0].body[0]->value->operands.pop_back();  // rank + 1 loses an operand
  expect_error(m, "has 1 operand(s)");
}

TEST(TirVerify, TileShapeWithoutLayout) {
  tir::Module m = checked(kSource);
  choose_launch(m);
  m.kernels[0].layouts.clear();
  expect_error(m, "no layout");
}

TEST(TirVerify, ExtentsHoldOnlyLaunchValues) {
  tir::Module m = checked(kSource);
  // An extent that reads a variable cannot be evaluated by a launcher.
  m.kernels[0].params[0].dims[0] = m.kernels[0].body[0]->value;
  expect_error(m, "not known at launch");
}

TEST(TirVerify, ViewWithoutTensor) {
  tir::Module m = checked(kSource);
  tir::Stmt& store = *m.kernels[0].body[1]->body[0];
  store.view.param = 5;
  expect_error(m, "a view of no tensor");
}

namespace {

const char* kGemm = R"(
kernel g(A: tensor<bf16>[M, K], B: tensor<bf16>[K, N], C: tensor<bf16>[M, N]) {
    for (m, n) in tiles([M, N], [128, 128]) {
        let c = matmul(A[m, :], B[:, n], acc: f32) as bf16;
        store(C[m, n], c);
    }
}
)";

// kGemm as the pipeline leaves it on sm_90a: the sm90 GEMM decided.
tir::Module decided_gemm() {
  tir::Module m = checked(kGemm);
  choose_launch(m);
  EXPECT_EQ(select_gemm_mainloop(m), 1);
  EXPECT_EQ(tir::verify(m), "");
  return m;
}

}  // namespace

TEST(TirVerify, GemmDecisionOnAKernelOfAnotherShape) {
  tir::Module m = decided_gemm();
  // A statement after the tiles loop: the template's loop is no longer the whole kernel.
  auto after = std::make_unique<tir::Stmt>();
  after->kind = tir::StmtKind::Eval;
  after->value = std::make_shared<tir::Value>();
  after->value->kind = tir::ValueKind::Const;
  after->value->type = tir::Type::scalar(tir::ScalarType::int_);
  m.kernels[0].body.push_back(std::move(after));
  expect_error(m, "a GEMM kernel of the wrong shape: statements follow the tiles loop");
}

TEST(TirVerify, GemmDecisionWithAnotherLaunch) {
  tir::Module m = decided_gemm();
  m.kernels[0].block_threads = 256;  // choose-launch's, not the template's 384
  expect_error(m, "threads, blocks/sm or dynamic shared memory are not the template's");
  m = decided_gemm();
  m.kernels[0].layouts[0].accumulator = false;
  expect_error(m, "only layout is not the accumulator's");
}

TEST(TirVerify, WgmmaMatmulWithoutGemmDecision) {
  tir::Module m = decided_gemm();
  m.kernels[0].gemm = {};
  expect_error(m, "a wgmma_ws matmul in a kernel that is no GEMM");
}

// A matmul lowered to another vendor's matrix instructions than the target's (a pass
// that chose without asking the target).
TEST(TirVerify, MatmulLoweringTheTargetDoesNotHave) {
  tir::Module m = checked(kGemm);
  tir::Value* mm = nullptr;
  tir::mutate(m.kernels[0].body, [&](tir::ValuePtr& v) {
    if (v->kind == tir::ValueKind::Matmul) mm = v.get();
  });
  ASSERT_NE(mm, nullptr);
  mm->matmul = tir::MatmulLowering::mfma;
  expect_error(m, "is lowered to mfma, which sm_90a does not have");
  m.target = find_target("gfx942");
  ASSERT_NE(m.target, nullptr);
  EXPECT_EQ(tir::verify(m), "");
  mm->matmul = tir::MatmulLowering::mma_sync;
  expect_error(m, "is lowered to mma_sync, which gfx942 does not have");
  mm->matmul = tir::MatmulLowering::simt;
  EXPECT_EQ(tir::verify(m), "");
}
