#include "core/dtype.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gcomp {
namespace {

TEST(DTypeTest, NamesAndSizes) {
  EXPECT_STREQ(DTypeName(DType::kBF16), "bf16");
  EXPECT_EQ(*DTypeFromName("f8e4m3"), DType::kF8E4M3);
  EXPECT_FALSE(DTypeFromName("f128").has_value());
  EXPECT_EQ(DTypeSize(DType::kI64), 8u);
  EXPECT_EQ(DTypeSize(DType::kBool), 1u);
  EXPECT_EQ(*DTypeFromOnnx(1), DType::kF32);
  EXPECT_EQ(*DTypeFromOnnx(16), DType::kBF16);
  EXPECT_FALSE(DTypeFromOnnx(8).has_value());  // STRING
  EXPECT_EQ(OnnxTypeName(8), "STRING");
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kF8E4M3, DType::kF64, DType::kI64,
                  DType::kI32, DType::kI8, DType::kU8, DType::kBool}) {
    EXPECT_EQ(*DTypeFromOnnx(DTypeToOnnx(t)), t);
  }
}

TEST(DTypeTest, HalfRoundTripsEveryFiniteValue) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    uint16_t bits = static_cast<uint16_t>(h);
    float f = HalfToFloat(bits);
    if (std::isnan(f)) continue;
    EXPECT_EQ(FloatToHalf(f), bits) << h;
  }
}

TEST(DTypeTest, HalfRoundsToNearestEven) {
  EXPECT_EQ(HalfToFloat(FloatToHalf(1.0f + 1.0f / 2048)), 1.0f);           // tie -> even
  EXPECT_EQ(HalfToFloat(FloatToHalf(1.0f + 3.0f / 2048)), 1.0f + 2.0f / 1024);  // tie -> even (up)
  EXPECT_EQ(HalfToFloat(FloatToHalf(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(HalfToFloat(FloatToHalf(65520.0f))));
  EXPECT_EQ(HalfToFloat(FloatToHalf(std::ldexp(1.0f, -24))), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(HalfToFloat(FloatToHalf(std::ldexp(1.0f, -26))), 0.0f);
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(NAN))));
}

TEST(DTypeTest, BFloat16) {
  EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(1.0f)), 1.0f);
  EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(1.00390625f)), 1.0f);  // tie -> even
  EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(3.14159f)), 3.140625f);
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(NAN))));
}

TEST(DTypeTest, Float8E4M3) {
  for (int v = 0; v < 256; ++v) {
    float f = F8E4M3ToFloat(static_cast<uint8_t>(v));
    if (std::isnan(f)) continue;
    EXPECT_EQ(FloatToF8E4M3(f), static_cast<uint8_t>(v)) << v;
  }
  EXPECT_EQ(F8E4M3ToFloat(FloatToF8E4M3(1000.0f)), 448.0f);  // saturates
  EXPECT_EQ(RoundToStorage(0.3f, DType::kF8E4M3), 0.3125f);
  EXPECT_EQ(RoundToStorage(0.1f, DType::kF32), 0.1f);
}

}  // namespace
}  // namespace gcomp
