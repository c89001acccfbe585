// fold-attention-layout's work bound: the view chains are checked element by element, within a
// number of element visits that grows with the model's constants, so a model file that declares
// huge dims with few weights is declined quickly (with a reason) instead of allocating and
// walking index tensors of any size.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "graph/op_def.h"
#include "graph/printer.h"
#include "graph/shape_inference.h"
#include "passes/pass_manager.h"
#include "passes/passes.h"

namespace gcomp::passes {
namespace {

constexpr int64_t kHeads = 2;

// Per sequence length s in `seqs`, one block: tokens_i [batch, s, E] (+ a positional embedding
// [s, E] when `embedding`) -> MatMul [E, 3E] -> qkv [batch, s, 3E] -> Slice x3 -> Attention_i
// (packed, kHeads heads) -> Identity -> y_i. The constants count as the model file's, as the
// importer counts them.
std::unique_ptr<Graph> SlicedQkv(const std::vector<int64_t>& seqs, int64_t e, bool embedding) {
  auto g = std::make_unique<Graph>();
  g->source = "sliced_qkv.onnx";
  g->symbols.push_back("batch");
  auto node = [&](const std::string& op, const std::string& name, std::vector<Value*> in, Attributes attrs = {}) {
    Value* out = *g->AddValue(name + "_out", DType::kF32, {});
    Node* n = *g->AddNode(op, name, std::move(in), {out}, std::move(attrs));
    n->def = FindOp(op);
    n->origin = {name};
    return out;
  };
  auto constant = [&](const std::string& name, Tensor t) {
    g->file_constant_elements += t.numel();
    return *g->AddConstant(name, std::move(t));
  };
  auto ints = [&](const std::string& name, std::vector<int64_t> v) {
    const int64_t n = static_cast<int64_t>(v.size());
    return constant(name, Tensor::FromI64({n}, v));
  };
  for (size_t i = 0; i < seqs.size(); ++i) {
    const int64_t s = seqs[i];
    const std::string block = std::to_string(i);
    Value* x = *g->AddInput("tokens" + block, DType::kF32, {Dim::Symbol("batch"), Dim(s), Dim(e)});
    if (embedding) {
      x = node("Add", "embed" + block,
               {x, constant("pos" + block, Tensor::FromF32({s, e}, std::vector<float>(s * e, 0.5f)))});
    }
    Value* w = constant("w_qkv" + block, Tensor::FromF32({e, 3 * e}, std::vector<float>(3 * e * e, 0.25f)));
    Value* qkv = node("MatMul", "qkv" + block, {x, w});
    Value* axis = ints("axis" + block, {2});
    std::vector<Value*> qkv_parts;
    for (int64_t p = 0; p < 3; ++p) {
      const std::string name = std::string(1, "qkv"[p]) + block;
      qkv_parts.push_back(
          node("Slice", name, {qkv, ints(name + "_start", {p * e}), ints(name + "_end", {(p + 1) * e}), axis}));
    }
    Attributes a;
    a.Set("q_num_heads", kHeads);
    a.Set("kv_num_heads", kHeads);
    g->AddOutput(node("Identity", "y" + block, {node("Attention", "attention" + block, qkv_parts, a)}));
  }
  EXPECT_TRUE(InferShapes(*g).ok());
  return g;
}

struct Folded {
  bool changed = false;
  std::vector<std::string> explanations;
  double seconds = 0;
};

Folded Fold(Graph& g) {
  PassOptions options;
  options.explain = true;
  PassContext ctx(options);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<bool> changed = FoldAttentionLayout(g, ctx);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(VerifyGraph(g).ok()) << PrintGraph(g);
  return {changed.ok() && *changed, ctx.explanations(), seconds};
}

// The pass's only explanation contains `text`.
void ExpectOnlyExplanation(const Folded& f, const std::string& text) {
  ASSERT_EQ(f.explanations.size(), 1u);
  EXPECT_NE(f.explanations[0].find(text), std::string::npos) << f.explanations[0];
}

const Node* AttentionOf(const Graph& g, const std::string& name = "attention0") {
  for (const Node* n : g.nodes()) {
    if (n->op == "Attention" && n->name == name) return n;
  }
  return nullptr;
}

TEST(FoldAttentionLayout, SmallChainsFold) {
  auto g = SlicedQkv({16}, 8, false);
  Folded f = Fold(*g);
  EXPECT_TRUE(f.changed);
  const Node* attention = AttentionOf(*g);
  ASSERT_NE(attention, nullptr);
  EXPECT_EQ(attention->attrs.GetString("qkv_layout", ""), "BSW");
  EXPECT_EQ(attention->attrs.GetInt("k_offset", -1), 8);
  EXPECT_EQ(attention->attrs.GetInt("v_offset", -1), 16);
}

TEST(FoldAttentionLayout, HugeDimsWithFewWeightsAreDeclinedQuickly) {
  // 16384 tokens of 64 with 12K weights: checking Q, K and V at batch 2 and 3 would visit about
  // 7e7 elements, more than the pass's least budget (2^25).
  auto g = SlicedQkv({16384}, 64, false);
  Folded f = Fold(*g);
  EXPECT_FALSE(f.changed);
  ExpectOnlyExplanation(f, "FoldAttentionLayout at attention0: not folded: checking the view chains");
  ExpectOnlyExplanation(f, "per element of the model file's constants");
  EXPECT_LT(f.seconds, 10.0);
  EXPECT_FALSE(AttentionOf(*g)->attrs.Has("qkv_layout"));
}

TEST(FoldAttentionLayout, ADeclinedFoldLeavesTheBudgetToTheNext) {
  // The large block is declined; the small one after it still folds on what is left.
  auto g = SlicedQkv({16384, 16}, 64, false);
  Folded f = Fold(*g);
  EXPECT_TRUE(f.changed);
  ExpectOnlyExplanation(f, "at attention0: not folded: checking the view chains");
  EXPECT_FALSE(AttentionOf(*g, "attention0")->attrs.Has("qkv_layout"));
  EXPECT_EQ(AttentionOf(*g, "attention1")->attrs.GetString("qkv_layout", ""), "BSW");
}

TEST(FoldAttentionLayout, TheBudgetGrowsWithTheWeights) {
  // The same chains with a 1M-element positional embedding in the model: they are checked and fold.
  auto g = SlicedQkv({16384}, 64, true);
  Folded f = Fold(*g);
  EXPECT_TRUE(f.changed);
  EXPECT_EQ(AttentionOf(*g)->attrs.GetString("qkv_layout", ""), "BSW");
}

TEST(FoldAttentionLayout, DimsPastAnyBudgetAreNotEvaluated) {
  // 2^24 tokens of 8: no tensor past 2^25 elements is evaluated (nor allocated).
  auto g = SlicedQkv({int64_t{1} << 24}, 8, false);
  Folded f = Fold(*g);
  EXPECT_FALSE(f.changed);
  ExpectOnlyExplanation(f, "not folded: a value of the view chains has more than 33554432 elements");
  EXPECT_LT(f.seconds, 10.0);
}

}  // namespace
}  // namespace gcomp::passes
