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
