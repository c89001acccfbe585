#include "passes/rewriter.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "graph/op_def.h"
#include "graph/printer.h"
#include "graph/shape_inference.h"
#include "passes/pass_manager.h"

namespace gcomp::passes {
namespace {

// x -> Relu(a) -> Sigmoid(b) -> y
std::unique_ptr<Graph> Chain() {
  auto g = std::make_unique<Graph>();
  g->source = "chain.onnx";
  Value* x = *g->AddInput("x", DType::kF32, {Dim::Symbol("batch"), Dim(4)});
  Value* a = *g->AddValue("a", DType::kF32, {});
  Value* y = *g->AddValue("y", DType::kF32, {});
  Node* relu = *g->AddNode("Relu", "relu", {x}, {a});
  Node* sig = *g->AddNode("Sigmoid", "sigmoid", {a}, {y});
  relu->def = FindOp("Relu");
  sig->def = FindOp("Sigmoid");
  relu->origin = {"relu"};
  sig->origin = {"sigmoid"};
  g->AddOutput(y);
  EXPECT_TRUE(InferShapes(*g).ok());
  return g;
}

TEST(RewriterTest, CreateInfersShapesAndReplaceKeepsOutputNames) {
  auto g = Chain();
  Rewriter rw(*g);
  Node* relu = g->nodes()[0];
  Node* sig = g->nodes()[1];
  auto tanh = rw.Create("Tanh", "tanh", {relu->output(0)}, {}, MergeOrigins({sig}));
  ASSERT_TRUE(tanh.ok()) << tanh.status();
  EXPECT_EQ(ShapeToString((*tanh)->output(0)->shape), "[batch,4]");
  rw.ReplaceAllUses(sig->output(0), (*tanh)->output(0));
  ASSERT_TRUE(rw.EraseWithDeadInputs(sig).ok());
  ASSERT_TRUE(rw.Finish().ok());
  ASSERT_TRUE(VerifyGraph(*g).ok());
  EXPECT_EQ(g->outputs()[0]->name, "y");  // the graph output keeps its name
  EXPECT_EQ(g->outputs()[0]->producer->op, "Tanh");
  EXPECT_EQ(g->outputs()[0]->producer->origin, std::vector<std::string>{"sigmoid"});
  EXPECT_EQ(g->num_nodes(), 2u);
}

TEST(RewriterTest, EraseRefusesUsedNodesAndDeadChainsGo) {
  auto g = Chain();
  Rewriter rw(*g);
  Node* relu = g->nodes()[0];
  absl::Status s = rw.Erase(relu);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("output 'a' is still used"), std::string::npos) << s;
  // Route the output around both nodes: the whole chain becomes dead.
  Node* sig = g->nodes()[1];
  rw.ReplaceAllUses(sig->output(0), g->inputs()[0]);
  ASSERT_TRUE(rw.EraseWithDeadInputs(sig).ok());
  ASSERT_TRUE(rw.Finish().ok());
  EXPECT_EQ(g->num_nodes(), 0u);
}

TEST(RewriterTest, TopologicalSortPlacesNewNodesBeforeUsers) {
  auto g = Chain();
  Rewriter rw(*g);
  Node* sig = g->nodes()[1];
  // A node appended at the end that the sigmoid is then rewired to read.
  auto neg = rw.Create("Neg", "neg", {g->inputs()[0]}, {}, {"neg"});
  ASSERT_TRUE(neg.ok());
  g->SetInput(sig, 0, (*neg)->output(0));
  ASSERT_EQ(g->nodes()[0]->op, "Relu");
  ASSERT_TRUE(rw.Erase(g->nodes()[0]).ok());  // its output lost its only user
  ASSERT_TRUE(rw.Finish().ok());
  ASSERT_TRUE(VerifyGraph(*g).ok()) << PrintGraph(*g);
  EXPECT_EQ(g->nodes().front()->op, "Neg");
}

// What the rules below saw: "<rule> <node> <position>".
std::vector<std::string> g_offered;

absl::StatusOr<bool> RecordRule(RuleSweep& sweep, Node* root) {
  g_offered.push_back(absl::StrCat("Record ", root->name, " ", sweep.Position(root)));
  sweep.Explain(*root, "recorded", "Step");
  return false;
}

// Relu(x) -> Sigmoid  ->  Tanh(x): erases both, so the Sigmoid is offered to no rule afterwards.
absl::StatusOr<bool> FoldChainRule(RuleSweep& sweep, Node* relu) {
  g_offered.push_back(absl::StrCat("FoldChain ", relu->name, " ", sweep.Position(relu)));
  Node* sig = SingleUser(sweep.graph(), relu->output(0));
  if (!sig) return false;
  auto tanh = sweep.rewriter().Create("Tanh", "tanh", {relu->input(0)}, {}, MergeOrigins({relu, sig}));
  if (!tanh.ok()) return tanh.status();
  EXPECT_EQ(sweep.Position(*tanh), -1);  // created during the sweep
  sweep.rewriter().ReplaceAllUses(sig->output(0), (*tanh)->output(0));
  if (absl::Status s = sweep.EraseAll({relu, sig}); !s.ok()) return s;
  return true;
}

TEST(RewriteRuleTest, AnExplanationIsKeptOnceWhenALaterRoundRepeatsIt) {
  PassOptions options;
  options.explain = true;
  const std::vector<RewriteRule> record = {{"Record", {"Sigmoid", "Tanh"}, RecordRule}};
  auto g = Chain();
  PassContext ctx(options);
  for (int round = 0; round < 3; ++round) {
    auto changed = ApplyRules(*g, ctx, record);
    ASSERT_TRUE(changed.ok()) << changed.status();
  }
  EXPECT_EQ(ctx.explanations(), std::vector<std::string>{"RecordStep at sigmoid: recorded"});
}

TEST(RewriteRuleTest, NodesGoOnlyToRulesOfTheirRootOpAndErasedOnesToNone) {
  PassOptions options;
  options.explain = true;
  const std::vector<RewriteRule> record = {{"Record", {"Sigmoid", "Tanh"}, RecordRule}};
  {
    auto g = Chain();
    PassContext ctx(options);
    g_offered.clear();
    auto changed = ApplyRules(*g, ctx, record);
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_FALSE(*changed);
    EXPECT_EQ(g_offered, std::vector<std::string>{"Record sigmoid 1"});
    EXPECT_EQ(ctx.explanations(), std::vector<std::string>{"RecordStep at sigmoid: recorded"});
  }
  {
    auto g = Chain();
    PassContext ctx(options);
    g_offered.clear();
    const std::vector<RewriteRule> rules = {{"FoldChain", {"Relu"}, FoldChainRule}, record[0]};
    auto changed = ApplyRules(*g, ctx, rules);
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_TRUE(*changed);
    EXPECT_EQ(g_offered, std::vector<std::string>{"FoldChain relu 0"});  // the Sigmoid was erased, the Tanh is new
    ASSERT_TRUE(VerifyGraph(*g).ok()) << PrintGraph(*g);
    ASSERT_EQ(g->num_nodes(), 1u);
    EXPECT_EQ(g->nodes()[0]->op, "Tanh");
  }
}

TEST(PassManagerTest, UnknownPassAndLevels) {
  auto g = Chain();
  PassContext ctx;
  absl::Status s = RunPasses(*g, {"no-such-pass"}, ctx);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("unknown pass 'no-such-pass'"), std::string::npos);
  EXPECT_TRUE(PassesForLevel("O0")->empty());
  EXPECT_FALSE(PassesForLevel("O2")->empty());
  EXPECT_EQ(PassesForLevel("O7").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(RunPasses(*g, {"dce", "remove-identity"}, ctx, RunOptions{.verify_each = true}).ok());
}

}  // namespace
}  // namespace gcomp::passes
