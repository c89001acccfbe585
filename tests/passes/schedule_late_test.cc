// schedule-late: the residual branch of a bottleneck block moves to just before its reader; a
// graph already in that order is left alone; Graph::Reorder refuses orders that are not
// topological permutations.
#include <gtest/gtest.h>

#include "graph/op_def.h"
#include "graph/printer.h"
#include "graph/shape_inference.h"
#include "passes/pass_manager.h"
#include "passes/passes.h"

namespace gcomp::passes {
namespace {

Node* Unary(Graph& g, const std::string& op, const std::string& name, Value* in) {
  Value* out = *g.AddValue(name + "_out", DType::kF32, {});
  Node* n = *g.AddNode(op, name, {in}, {out});
  n->def = FindOp(op);
  n->origin = {name};
  return n;
}

// x -> down = Relu(x) (first, as exporters write ResNet downsamples)
//   -> a = Sigmoid(x) -> b = Tanh(a) -> y = Add(b, down)
std::unique_ptr<Graph> Block() {
  auto g = std::make_unique<Graph>();
  g->source = "block.onnx";
  Value* x = *g->AddInput("x", DType::kF32, {Dim::Symbol("batch"), Dim(4)});
  Node* down = Unary(*g, "Relu", "down", x);
  Node* a = Unary(*g, "Sigmoid", "a", x);
  Node* b = Unary(*g, "Tanh", "b", a->output(0));
  Value* y = *g->AddValue("y", DType::kF32, {});
  Node* add = *g->AddNode("Add", "add", {b->output(0), down->output(0)}, {y});
  add->def = FindOp("Add");
  add->origin = {"add"};
  g->AddOutput(y);
  EXPECT_TRUE(InferShapes(*g).ok());
  return g;
}

std::vector<std::string> Names(const Graph& g) {
  std::vector<std::string> out;
  for (const Node* n : g.nodes()) out.push_back(n->name);
  return out;
}

TEST(ScheduleLateTest, ResidualBranchRunsJustBeforeItsReader) {
  auto g = Block();
  PassContext ctx;
  auto changed = ScheduleLate(*g, ctx);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(Names(*g), (std::vector<std::string>{"a", "b", "down", "add"}));
  ASSERT_TRUE(VerifyGraph(*g).ok());
  const Node* down = g->nodes()[2];
  ASSERT_EQ(down->decisions.size(), 1u);
  EXPECT_EQ(down->decisions[0].kind, "schedule");
  EXPECT_EQ(down->decisions[0].choice, "deferred");
  EXPECT_NE(down->decisions[0].reason.find("just before its first reader add (step 2, was 0)"), std::string::npos)
      << down->decisions[0].reason;
  for (const Node* n : g->nodes()) {
    if (n != down) EXPECT_TRUE(n->decisions.empty()) << n->name;
  }
  // Already in that order: nothing changes.
  auto again = ScheduleLate(*g, ctx);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
}

TEST(ScheduleLateTest, DeepChainNeedsNoRecursion) {
  auto g = std::make_unique<Graph>();
  Value* v = *g->AddInput("x", DType::kF32, {Dim(2)});
  for (int i = 0; i < 200000; ++i) v = Unary(*g, "Relu", "r" + std::to_string(i), v)->output(0);
  g->AddOutput(v);
  PassContext ctx;
  auto changed = ScheduleLate(*g, ctx);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
}

TEST(GraphReorderTest, RefusesNonTopologicalOrPartialOrders) {
  auto g = Block();
  std::vector<Node*> nodes = g->nodes();
  absl::Status s = g->Reorder({nodes[1], nodes[2], nodes[3]});
  EXPECT_FALSE(s.ok());
  s = g->Reorder({nodes[2], nodes[1], nodes[0], nodes[3]});  // Tanh before the Sigmoid it reads
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("before the producer of its input 'a_out'"), std::string::npos) << s;
  s = g->Reorder({nodes[0], nodes[0], nodes[1], nodes[3]});
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(Names(*g), (std::vector<std::string>{"down", "a", "b", "add"}));  // unchanged
  ASSERT_TRUE(g->Reorder({nodes[1], nodes[0], nodes[2], nodes[3]}).ok());
  EXPECT_EQ(Names(*g), (std::vector<std::string>{"a", "down", "b", "add"}));
}

}  // namespace
}  // namespace gcomp::passes
