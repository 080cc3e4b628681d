// Options validation, size parsing/printing, dtype conversions, log levels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "iris/iris.hpp"

namespace iris {
namespace {

TEST(ParseSize, UnitsAndErrors) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("64KiB"), 64u << 10);
  EXPECT_EQ(parse_size("16m"), 16u << 20);
  EXPECT_EQ(parse_size("2 GiB"), std::size_t{2} << 30);
  EXPECT_EQ(parse_size("1G"), std::size_t{1} << 30);
  EXPECT_THROW(parse_size("-1G", "--heap"), Error);
  EXPECT_THROW(parse_size("1.5G"), Error);
  EXPECT_THROW(parse_size("lots"), Error);
  EXPECT_THROW(parse_size("12XB"), Error);
  EXPECT_THROW(parse_size("99999999999999999999999"), Error);
  EXPECT_THROW(parse_size("20000000000T"), Error);
  try {
    parse_size("-5", "--heap");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--heap"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("negative"), std::string::npos);
  }
}

TEST(FormatBytes, HumanReadable) {
  EXPECT_EQ(format_bytes(256), "256 B");
  EXPECT_EQ(format_bytes(2 << 20), "2 MiB");
  EXPECT_EQ(format_bytes(1536u << 20), "1.50 GiB");
}

TEST(Options, Validation) {
  Options o;
  EXPECT_NO_THROW(o.validate());
  o.heap_bytes = 0;
  EXPECT_THROW(o.validate(), Error);
  o.heap_bytes = 3 << 20;  // not a multiple of 2 MiB
  try {
    o.validate();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a multiple of 2 MiB"), std::string::npos) << e.what();
  }
  o.heap_bytes = 4 << 20;
  o.ranks = -1;
  EXPECT_THROW(o.validate(), Error);
  o.ranks = device::kMaxRanks + 1;
  EXPECT_THROW(o.validate(), Error);
}

TEST(Options, FromEnvironment) {
  setenv("IRIS_HEAP_SIZE", "64MiB", 1);
  setenv("IRIS_RANKS", "3", 1);
  setenv("IRIS_SHARE_GPUS", "1", 1);
  Options o = Options::from_env();
  EXPECT_EQ(o.heap_bytes, 64u << 20);
  EXPECT_EQ(o.ranks, 3);
  EXPECT_TRUE(o.share_gpus);
  setenv("IRIS_RANKS", "three", 1);
  EXPECT_THROW(Options::from_env(), Error);
  unsetenv("IRIS_HEAP_SIZE");
  unsetenv("IRIS_RANKS");
  unsetenv("IRIS_SHARE_GPUS");
}

TEST(DType, HalfAndBfloat16RoundTrip) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f, 0.1f}) {
    EXPECT_NEAR(static_cast<float>(half(f)), f, std::fabs(f) * 1e-3f + 1e-7f) << f;
  }
  EXPECT_TRUE(std::isinf(static_cast<float>(half(1e6f))));
  EXPECT_TRUE(std::isnan(static_cast<float>(half(NAN))));
  EXPECT_EQ(half(1.0f).bits, 0x3C00);
  EXPECT_EQ(bfloat16(1.0f).bits, 0x3F80);
  EXPECT_EQ(bfloat16(-2.0f).bits, 0xC000);
  EXPECT_EQ(static_cast<float>(bfloat16(3.140625f)), 3.140625f);
  EXPECT_TRUE(std::isnan(static_cast<float>(bfloat16(NAN))));
  // Round to nearest even: 1 + 2^-8 is a tie between 1 and 1 + 2^-7 -> 1.
  EXPECT_EQ(bfloat16(1.0f + 1.0f / 256).bits, 0x3F80);
  EXPECT_EQ(dtype_size(DType::bf16), 2u);
  EXPECT_EQ(dtype_name(DType::u64), "u64");
  EXPECT_EQ(dtype_bits(DType::i32, -1.0), 0xFFFFFFFFu);
  // Values the type does not have are refused, not cast into something else.
  EXPECT_THROW(dtype_bits(DType::i32, 1e30), Error);
  EXPECT_THROW(dtype_bits(DType::i32, 2147483648.0), Error);
  EXPECT_EQ(dtype_bits(DType::i32, -2147483648.0), 0x80000000u);
  EXPECT_THROW(dtype_bits(DType::u32, -1.0), Error);
  EXPECT_THROW(dtype_bits(DType::i64, 1.5), Error);
  EXPECT_THROW(dtype_bits(DType::u64, NAN), Error);
  EXPECT_THROW(dtype_bits(DType::f16, 1e6), Error);
  EXPECT_EQ(dtype_bits(DType::f16, INFINITY), 0x7C00u);
  try {
    dtype_bits(DType::i32, 1e30);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is not a value of i32"), std::string::npos) << e.what();
  }
}

TEST(Log, LevelsParse) {
  LogLevel l;
  EXPECT_TRUE(parse_log_level("DEBUG", &l));
  EXPECT_EQ(l, LogLevel::debug);
  EXPECT_FALSE(parse_log_level("loud", &l));
  set_log_rank(2, 4);
  EXPECT_EQ(log_prefix(), "[iris 2/4]");
  set_log_rank(-1, 0);
  EXPECT_EQ(log_prefix(), "[iris]");
}

}  // namespace
}  // namespace iris
