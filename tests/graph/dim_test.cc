#include "graph/dim.h"

#include <gtest/gtest.h>

namespace gcomp {
namespace {

TEST(DimTest, ConstantsAndSymbols) {
  EXPECT_TRUE(Dim(5).IsConst());
  EXPECT_EQ(Dim(5).value(), 5);
  EXPECT_EQ(Dim(0).ToString(), "0");
  Dim b = Dim::Symbol("batch");
  EXPECT_FALSE(b.IsConst());
  EXPECT_EQ(b.ToString(), "batch");
}

TEST(DimTest, ArithmeticPrintsCanonically) {
  Dim b = Dim::Symbol("batch");
  EXPECT_EQ(Dim::Mul(b, Dim(197))->ToString(), "batch*197");
  EXPECT_EQ(Dim::Mul(Dim(12), b)->ToString(), "batch*12");
  Dim two_b_plus_one = *Dim::Add(*Dim::Mul(b, Dim(2)), Dim(1));
  EXPECT_EQ(two_b_plus_one.ToString(), "batch*2+1");
  EXPECT_EQ(Dim::Sub(two_b_plus_one, Dim(1))->ToString(), "batch*2");
  EXPECT_EQ(*Dim::Sub(b, b), Dim(0));
  EXPECT_EQ(Dim::Mul(b, Dim::Symbol("seq"))->ToString(), "batch*seq");
}

TEST(DimTest, ExactDivision) {
  Dim b = Dim::Symbol("batch");
  Dim total = *Dim::Mul(b, Dim(197 * 768));
  auto q = Dim::DivExact(total, *Dim::Mul(b, Dim(768)));
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(*q, Dim(197));
  auto per_head = Dim::DivExact(*Dim::Mul(b, Dim(12)), Dim(12));
  ASSERT_TRUE(per_head.has_value());
  EXPECT_EQ(*per_head, b);
  EXPECT_FALSE(Dim::DivExact(b, Dim(2)).has_value());
  EXPECT_FALSE(Dim::DivExact(Dim(7), Dim(2)).has_value());
  EXPECT_EQ(*Dim::FloorDiv(Dim(7), 2), Dim(3));
  EXPECT_EQ(*Dim::FloorDiv(Dim(-7), 2), Dim(-4));
}

TEST(DimTest, OverflowIsAnError) {
  Dim big(int64_t{1} << 62);
  EXPECT_FALSE(Dim::Mul(big, Dim(4)).ok());
  EXPECT_FALSE(Dim::Add(Dim(INT64_MAX), Dim(1)).ok());
  EXPECT_FALSE(CheckedNumElements({int64_t{1} << 40, int64_t{1} << 40}).ok());
  EXPECT_FALSE(CheckedNumElements({3, -1}).ok());
  EXPECT_EQ(*CheckedNumElements({2, 3, 4}), 24);
}

TEST(DimTest, ShapeExpressionLimits) {
  // Degree: a product of 8 symbols is allowed (a rank-8 element count), of 9 refused.
  Dim p(1);
  for (int i = 0; i < 8; ++i) p = *Dim::Mul(p, Dim::Symbol("s" + std::to_string(i)));
  EXPECT_EQ(p.Degree(), 8u);
  absl::StatusOr<Dim> nine = Dim::Mul(p, Dim::Symbol("s8"));
  ASSERT_FALSE(nine.ok());
  EXPECT_EQ(nine.status().message(),
            "shape expression s0*s1*s2*s3*s4*s5*s6*s7*s8 has 1 term and degree 9, over the limits of 32 terms and "
            "degree 8");
  // Terms: (a+1)(b+1)...: 2^5 = 32 terms allowed, 2^6 refused.
  Dim t(1);
  for (int i = 0; i < 5; ++i) t = *Dim::Mul(t, *Dim::Add(Dim::Symbol("a" + std::to_string(i)), Dim(1)));
  absl::StatusOr<Dim> more = Dim::Mul(t, *Dim::Add(Dim::Symbol("a5"), Dim(1)));
  ASSERT_FALSE(more.ok());
  EXPECT_NE(std::string(more.status().message()).find("has 64 terms and degree 6, over the limits of 32 terms"),
            std::string::npos)
      << more.status();
  absl::StatusOr<Dim> sum = Dim::Add(t, Dim::Symbol("z"));
  ASSERT_FALSE(sum.ok());
  EXPECT_NE(std::string(sum.status().message()).find("has 33 terms"), std::string::npos) << sum.status();
}

TEST(DimTest, Evaluate) {
  Dim d = *Dim::Add(*Dim::Mul(Dim::Symbol("batch"), Dim(12)), Dim(1));
  EXPECT_EQ(*d.Evaluate({{"batch", 3}}), 37);
  EXPECT_FALSE(d.Evaluate({}).ok());
}

TEST(DimTest, ShapeHelpers) {
  Shape s = {Dim::Symbol("batch"), Dim(3), Dim(224), Dim(224)};
  EXPECT_EQ(ShapeToString(s), "[batch,3,224,224]");
  EXPECT_EQ(NumElements(s)->ToString(), "batch*150528");
  EXPECT_FALSE(ConcreteDims(s).has_value());
  EXPECT_EQ(*ConcreteDims(ShapeFromInts({1, 2})), (std::vector<int64_t>{1, 2}));
}

}  // namespace
}  // namespace gcomp
