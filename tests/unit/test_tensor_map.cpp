// Tensor-map specs are checked before the driver sees them (every rule the encoder
// would reject, said in words), and the sm90 GEMM's shapes fit the shared memory and
// TMA limits they are encoded with.
#include <gtest/gtest.h>

#include <string>

#include "iris/device/gemm/shapes.hpp"
#include "iris/iris.hpp"

namespace iris {
namespace {

namespace dg = iris::device::gemm;

alignas(256) unsigned char fake_tensor[256];

std::string rejection(const TensorMapSpec& spec) {
  try {
    encode_tensor_map(spec);
  } catch (const NoDeviceError&) {
    return "(reached the driver)";
  } catch (const Error& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(TensorMap, MatrixSpecIsInnermostFirstInBytes) {
  const TensorMapSpec s = TensorMapSpec::matrix(DType::bf16, fake_tensor, 300, 200, 208, 128, 64);
  EXPECT_EQ(s.rank, 2);
  EXPECT_EQ(s.dims[0], 200u);
  EXPECT_EQ(s.dims[1], 300u);
  EXPECT_EQ(s.strides[1], 208u * 2);
  EXPECT_EQ(s.box[0], 64u);
  EXPECT_EQ(s.box[1], 128u);
}

TEST(TensorMap, RejectsRowStridesThatAreNotMultiplesOf16Bytes) {
  // bf16 [K, N] with N = 300: rows 600 bytes apart, which TMA cannot address.
  const std::string why = rejection(TensorMapSpec::matrix(DType::bf16, fake_tensor, 136, 300, 300, 64, 64));
  EXPECT_NE(why.find("row strides must be nonzero multiples of 16 bytes"), std::string::npos) << why;
  EXPECT_NE(why.find("600 bytes"), std::string::npos) << why;
}

// What the launcher asks before choosing a kernel's fallback: the same words as the
// encoder's error, with no device; "" for a spec a map can be made of.
TEST(TensorMap, ProblemIsTheEncodersRuleWithoutADevice) {
  const TensorMapSpec bad = TensorMapSpec::matrix(DType::bf16, fake_tensor, 136, 300, 300, 64, 64);
  EXPECT_EQ(tensor_map_problem(bad), rejection(bad));
  EXPECT_EQ(tensor_map_problem(TensorMapSpec::matrix(DType::bf16, fake_tensor, 136, 296, 296, 64, 64)), "");
  EXPECT_NE(tensor_map_problem(TensorMapSpec::matrix(DType::f16, fake_tensor + 8, 64, 64, 64, 64, 64)).find("aligned"),
            std::string::npos);
}

TEST(TensorMap, TheJitFallsBackFromTheWgmmaTargetOnly) {
  EXPECT_EQ(jit_fallback_target("sm_90a"), "sm_90");
  for (const char* t : {"sm_90", "sm_80", "host", "gfx942", "nonsense"}) EXPECT_EQ(jit_fallback_target(t), "") << t;
}

TEST(TensorMap, RejectsMisalignedBase) {
  const std::string why = rejection(TensorMapSpec::matrix(DType::bf16, fake_tensor + 8, 64, 64, 64, 64, 64));
  EXPECT_NE(why.find("16-byte aligned"), std::string::npos) << why;
}

TEST(TensorMap, RejectsBoxesPastTheLimits) {
  EXPECT_NE(rejection(TensorMapSpec::matrix(DType::bf16, fake_tensor, 512, 64, 64, 512, 64)).find("1 to 256"),
            std::string::npos);
  // 128 bf16 columns are 256 bytes, more than the 128-byte swizzle span.
  const std::string why = rejection(TensorMapSpec::matrix(DType::bf16, fake_tensor, 64, 128, 128, 64, 128));
  EXPECT_NE(why.find("exceeds the swizzle span"), std::string::npos) << why;
  TensorMapSpec odd = TensorMapSpec::matrix(DType::bf16, fake_tensor, 64, 64, 64, 64, 4);
  odd.swizzle = TensorMapSwizzle::none;
  EXPECT_NE(rejection(odd).find("multiple of 16 bytes"), std::string::npos);
}

TEST(TensorMap, RejectsBadRankAndNullBase) {
  TensorMapSpec s = TensorMapSpec::matrix(DType::bf16, fake_tensor, 64, 64, 64, 64, 64);
  s.rank = 6;
  EXPECT_NE(rejection(s).find("rank must be 1 to 5"), std::string::npos);
  EXPECT_NE(rejection(TensorMapSpec::matrix(DType::bf16, nullptr, 64, 64, 64, 64, 64)).find("null base"),
            std::string::npos);
}

// Every shape the sm90 GEMM is instantiated with fits an H100/H200 program's shared
// memory (227 KiB) and gives TMA boxes within its limits.
TEST(Sm90GemmShapes, FitSharedMemoryAndTmaBoxes) {
  const dg::Sm90Shape shapes[] = {{128, 256, 64, 4, 16, 1}, {128, 256, 64, 4, 16, 2}, {128, 128, 64, 6, 16, 2},
                                  {128, 128, 64, 6, 16, 1}, {64, 256, 64, 5, 16, 1},  {64, 128, 64, 8, 16, 1}};
  for (const dg::Sm90Shape& s : shapes) {
    SCOPED_TRACE(std::to_string(s.bm) + "x" + std::to_string(s.bn) + " stages " + std::to_string(s.stages));
    EXPECT_TRUE(dg::sm90_shape_ok(s));
    EXPECT_LE(dg::sm90_shared_bytes(s), 227 * 1024);
    EXPECT_EQ(dg::sm90_stage_bytes(s) % 1024, 0);
    for (const dg::Box2D b : {dg::sm90_box_a(s), dg::sm90_box_b(s, dg::BLayout::kn), dg::sm90_box_b(s, dg::BLayout::nk)}) {
      EXPECT_EQ(b.inner * dg::kSm90ElemBytes, 128);  // one swizzle span
      EXPECT_LE(b.outer, 256);
    }
  }
  EXPECT_EQ(dg::sm90_threads({128, 256, 64, 4, 16, 1}), 384);
  EXPECT_FALSE(dg::sm90_shape_ok({128, 256, 64, 4, 16, 4}));
  EXPECT_FALSE(dg::sm90_shape_ok({256, 256, 64, 4, 16, 1}));
  // A cluster of 2 needs an even number of 64-column boxes of B to split.
  EXPECT_FALSE(dg::sm90_shape_ok({128, 64, 64, 6, 16, 2}));
  EXPECT_FALSE(dg::sm90_shape_ok({128, 192, 64, 4, 16, 2}));
  EXPECT_TRUE(dg::sm90_shape_ok({128, 128, 64, 6, 16, 2}));
}

}  // namespace
}  // namespace iris
