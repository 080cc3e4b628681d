// The header irisc writes with --emit=header (through iris_add_kernels): it compiles
// for tensors and scalars of every dtype, its launcher takes them as typed C++
// arguments, and the code object it embeds is a cubin carrying its launch metadata.
#include <gtest/gtest.h>

#include <string_view>
#include <type_traits>

#include "every_param_kind.iris.hpp"

namespace {

using iris_kernels::every_param_kind::Kernels;
template <class T>
using T_ = const iris::Tensor<T>&;

// The launcher's exact signature: a typo in a dtype mapping fails to compile here.
using Launcher = void (Kernels::*)(T_<float>, T_<iris::half>, T_<iris::bfloat16>, T_<std::int32_t>,
                                   T_<std::uint32_t>, T_<std::int64_t>, T_<std::uint64_t>, float, iris::half,
                                   iris::bfloat16, std::int32_t, std::uint32_t, std::int64_t, std::uint64_t,
                                   std::int64_t, iris::Stream) const;
static_assert(std::is_same_v<decltype(&Kernels::every_kind), Launcher>);

TEST(EmbeddedLaunchers, CodeIsACubinWithItsMetadata) {
  const auto code = iris_kernels::every_param_kind::code();
  ASSERT_GT(code.size(), 4u);
  EXPECT_EQ(std::string_view(reinterpret_cast<const char*>(code.data()), 4), "\x7f" "ELF");
  const std::string_view bytes(reinterpret_cast<const char*>(code.data()), code.size());
  EXPECT_NE(bytes.find("iris_metadata"), std::string_view::npos);
  EXPECT_NE(bytes.find("iris_k_every_kind"), std::string_view::npos);
  EXPECT_EQ(std::string_view(iris_kernels::every_param_kind::kTarget), "sm_90a");
}

TEST(EmbeddedLaunchers, HalfAndBfloat16ScalarsBecomeFloatArgs) {
  const iris::Arg h = iris::half(0.5f), b = iris::bfloat16(2.0f);
  EXPECT_TRUE(h.is_float());
  EXPECT_EQ(h.float_value(), 0.5);
  EXPECT_TRUE(b.is_float());
  EXPECT_EQ(b.float_value(), 2.0);
}

}  // namespace
