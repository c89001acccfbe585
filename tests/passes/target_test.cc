// The embedded target descriptions (passes/targets/*.target) and their parser.
#include "passes/target.h"

#include <gtest/gtest.h>

namespace gcomp::passes {
namespace {

TEST(Target, EveryTargetIsEmbeddedAndParses) {
  ASSERT_EQ(AllTargets().size(), 4u);
  for (const char* name : {"ref", "cpu", "cuda:sm_90", "cuda:sm_80"}) {
    auto t = FindTarget(name);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ((*t)->name, name);
    EXPECT_TRUE((*t)->HasPrecision("fp32"));
  }
}

TEST(Target, CudaIsSm90) {
  auto t = FindTarget("cuda");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)->name, "cuda:sm_90");
}

TEST(Target, LayoutsAndNativeOps) {
  const TargetDescription* ref = *FindTarget("ref");
  const TargetDescription* cpu = *FindTarget("cpu");
  const TargetDescription* sm90 = *FindTarget("cuda:sm_90");
  EXPECT_EQ(ref->layout, "NCHW");
  EXPECT_FALSE(ref->rewrite);
  EXPECT_EQ(cpu->layout, "NHWC");
  EXPECT_EQ(sm90->layout, "NHWC");
  EXPECT_FALSE(cpu->implicit_gemm_conv.empty());  // oneDNN convolution
  EXPECT_FALSE(cpu->fused_attention.empty());
  EXPECT_FALSE(sm90->implicit_gemm_conv.empty());
  EXPECT_FALSE(sm90->fused_attention.empty());
}

TEST(Target, Fp8OnlyFromSm89) {
  EXPECT_TRUE((*FindTarget("cuda:sm_90"))->HasPrecision("fp8"));
  EXPECT_FALSE((*FindTarget("cuda:sm_80"))->HasPrecision("fp8"));
  EXPECT_FALSE((*FindTarget("cpu"))->HasPrecision("fp8"));
}

TEST(Target, CublasLtGeluEpilogueIsTanhApproximation) {
  const TargetDescription* sm90 = *FindTarget("cuda:sm_90");
  ASSERT_NE(sm90->Epilogue("relu"), nullptr);
  EXPECT_TRUE(sm90->Epilogue("relu")->exact);
  ASSERT_NE(sm90->Epilogue("gelu_tanh"), nullptr);
  EXPECT_TRUE(sm90->Epilogue("gelu_tanh")->exact);
  ASSERT_NE(sm90->Epilogue("gelu"), nullptr);
  EXPECT_FALSE(sm90->Epilogue("gelu")->exact);
  EXPECT_NE(sm90->Epilogue("gelu")->note.find("tanh"), std::string::npos);
  EXPECT_TRUE((*FindTarget("cpu"))->Epilogue("gelu")->exact);
}

TEST(Target, UnknownTargetListsTheKnownOnes) {
  auto t = FindTarget("tpu");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("unknown target 'tpu'"), std::string::npos);
  EXPECT_NE(t.status().message().find("cuda (= cuda:sm_90)"), std::string::npos);
  EXPECT_NE(t.status().message().find("cuda:sm_80"), std::string::npos);
}

TEST(Target, ParserErrorsNameFileAndLine) {
  auto t = ParseTargetDescription("name x\nprecisions fp32\nlayout NCWH\n", "x.target");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("x.target:3: layout 'NCWH'"), std::string::npos) << t.status();
  t = ParseTargetDescription("name x\nprecisions fp32\nfrobnicate yes\n", "x.target");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("x.target:3: unknown key 'frobnicate'"), std::string::npos);
  t = ParseTargetDescription("precisions fp32\n", "x.target");
  ASSERT_FALSE(t.ok());
  t = ParseTargetDescription("name x\nprecisions fp32 fp4\n", "x.target");
  ASSERT_FALSE(t.ok());
  t = ParseTargetDescription("# c\nname x\nprecisions fp32 fp16\ngemm-epilogue gelu approx tanh form\n", "x.target");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->Epilogue("gelu")->note, "tanh form");
  EXPECT_EQ(t->layout, "NCHW");
}

}  // namespace
}  // namespace gcomp::passes
