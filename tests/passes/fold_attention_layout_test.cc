// fold-attention-layout's chain checks: the view chains are layouts of their roots, checked
// symbolically, so huge declared dims cost nothing; views that are not the strided form's rows stay
// as nodes (the operand is read from a value nearer to the attention); a chain that takes one shape
// symbol for another does not fold; values past 2^48 elements are declined with a reason.
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

// Appends node `op` named `name` with one f32 output `name`_out of `shape` (empty: left to shape
// inference); returns that output.
Value* AddOp(Graph& g, const std::string& op, const std::string& name, std::vector<Value*> in, Shape shape,
             Attributes attrs) {
  Value* out = *g.AddValue(name + "_out", DType::kF32, std::move(shape));
  Node* n = *g.AddNode(op, name, std::move(in), {out}, std::move(attrs));
  n->def = FindOp(op);
  n->origin = {name};
  return out;
}

// A 1-D i64 constant.
Value* Ints(Graph& g, const std::string& name, std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return *g.AddConstant(name, Tensor::FromI64({n}, v));
}

// How the blocks' Q and K are cut out of the packed projection, and where Y goes.
enum class Variant {
  kPlain,         // Q, K, V: Slice [pE, (p+1)E) of the last axis
  kStridedK,      // K: Slice [E, 3E) step 2 (every second column)
  kReorderedQ,    // Q: then Reshape [batch, E, s] and Transpose [0,2,1] (same dims, other elements)
  kNoOutputView,  // Y is the graph output itself (no Identity after the attention)
};

// Per sequence length s in `seqs`, one block: tokens_i [batch, s, E] -> MatMul w_qkv_i [E, 3E] ->
// qkv [batch, s, 3E] -> Slice x3 (as `variant` says) -> Attention_i (packed, kHeads heads) ->
// Identity (none with kNoOutputView) -> y_i.
std::unique_ptr<Graph> SlicedQkv(const std::vector<int64_t>& seqs, int64_t e, Variant variant = Variant::kPlain) {
  auto g = std::make_unique<Graph>();
  g->source = "sliced_qkv.onnx";
  g->symbols.push_back("batch");
  auto node = [&](const std::string& op, const std::string& name, std::vector<Value*> in, Attributes attrs = {}) {
    return AddOp(*g, op, name, std::move(in), {}, std::move(attrs));
  };
  auto ints = [&](const std::string& name, std::vector<int64_t> v) { return Ints(*g, name, std::move(v)); };
  for (size_t i = 0; i < seqs.size(); ++i) {
    const int64_t s = seqs[i];
    const std::string block = std::to_string(i);
    Value* x = *g->AddInput("tokens" + block, DType::kF32, {Dim::Symbol("batch"), Dim(s), Dim(e)});
    Value* w = *g->AddInput("w_qkv" + block, DType::kF32, {Dim(e), Dim(3 * e)});
    Value* qkv = node("MatMul", "qkv" + block, {x, w});
    Value* axis = ints("axis" + block, {2});
    std::vector<Value*> qkv_parts;
    for (int64_t p = 0; p < 3; ++p) {
      const std::string name = std::string(1, "qkv"[p]) + block;
      if (p == 1 && variant == Variant::kStridedK) {
        qkv_parts.push_back(
            node("Slice", name,
                 {qkv, ints(name + "_start", {e}), ints(name + "_end", {3 * e}), axis, ints(name + "_step", {2})}));
        continue;
      }
      qkv_parts.push_back(
          node("Slice", name, {qkv, ints(name + "_start", {p * e}), ints(name + "_end", {(p + 1) * e}), axis}));
    }
    if (variant == Variant::kReorderedQ) {
      Attributes perm;
      perm.Set("perm", std::vector<int64_t>{0, 2, 1});
      qkv_parts[0] =
          node("Transpose", "q_back" + block,
               {node("Reshape", "q_swap" + block, {qkv_parts[0], ints("q_swap_shape" + block, {0, e, s})})}, perm);
    }
    Attributes a;
    a.Set("q_num_heads", kHeads);
    a.Set("kv_num_heads", kHeads);
    Value* y = node("Attention", "attention" + block, qkv_parts, a);
    g->AddOutput(variant == Variant::kNoOutputView ? y : node("Identity", "y" + block, {y}));
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
  auto g = SlicedQkv({16}, 8);
  Folded f = Fold(*g);
  EXPECT_TRUE(f.changed);
  const Node* attention = AttentionOf(*g);
  ASSERT_NE(attention, nullptr);
  EXPECT_EQ(attention->attrs.GetString("qkv_layout", ""), "BSW");
  EXPECT_EQ(attention->attrs.GetInt("k_offset", -1), 8);
  EXPECT_EQ(attention->attrs.GetInt("v_offset", -1), 16);
}

TEST(FoldAttentionLayout, HugeDimsFoldWithoutEvaluatingElements) {
  // 2^24 tokens of 64, two blocks: the chains are layouts, checked in a few steps per dim and node,
  // so dims of any size cost no more than small ones (no index tensor is made).
  auto g = SlicedQkv({int64_t{1} << 24, 16384}, 64);
  Folded f = Fold(*g);
  EXPECT_TRUE(f.changed);
  EXPECT_TRUE(f.explanations.empty());
  EXPECT_EQ(AttentionOf(*g, "attention0")->attrs.GetString("qkv_layout", ""), "BSW");
  EXPECT_EQ(AttentionOf(*g, "attention1")->attrs.GetString("qkv_layout", ""), "BSW");
  EXPECT_LT(f.seconds, 1.0);
}

TEST(FoldAttentionLayout, DimsPast2To48ElementsAreDeclined) {
  auto g = SlicedQkv({int64_t{1} << 30}, int64_t{1} << 20);
  Folded f = Fold(*g);
  EXPECT_FALSE(f.changed);
  ExpectOnlyExplanation(f, "not folded: a value of the view chains has more than 2^48 elements");
}

TEST(FoldAttentionLayout, AnOutputThatIsRowsAlreadyFolds) {
  // Y [batch, s, E] is a graph output with no view after it: the strided form writes it as it is,
  // and the Slices before the attention go.
  auto g = SlicedQkv({16}, 8, Variant::kNoOutputView);
  Folded f = Fold(*g);
  EXPECT_TRUE(f.changed);
  EXPECT_TRUE(f.explanations.empty());
  const Node* attention = AttentionOf(*g);
  ASSERT_NE(attention, nullptr);
  EXPECT_EQ(attention->attrs.GetString("qkv_layout", ""), "BSW");
  EXPECT_EQ(attention->attrs.GetInt("v_offset", -1), 16);
  ASSERT_EQ(g->outputs().size(), 1u);
  EXPECT_EQ(g->outputs()[0], attention->output(0));
  EXPECT_EQ(g->outputs()[0]->name, "attention0_out");
}

TEST(FoldAttentionLayout, OperandsAndOutputAlreadyRowsAreLeftAloneSilently) {
  // Q, K and V are [batch, s, E] graph inputs and Y the graph output: the attention reads and
  // writes rows already; nothing to fold and nothing to explain (opset-23 Attention on three
  // projections).
  Graph g;
  g.symbols.push_back("batch");
  std::vector<Value*> qkv;
  for (const char* name : {"q", "k", "v"})
    qkv.push_back(*g.AddInput(name, DType::kF32, {Dim::Symbol("batch"), Dim(16), Dim(8)}));
  Attributes a;
  a.Set("q_num_heads", kHeads);
  a.Set("kv_num_heads", kHeads);
  Value* y = *g.AddValue("y", DType::kF32, {});
  Node* n = *g.AddNode("Attention", "attention0", qkv, {y}, a);
  n->def = FindOp("Attention");
  g.AddOutput(y);
  ASSERT_TRUE(InferShapes(g).ok());
  Folded f = Fold(g);
  EXPECT_FALSE(f.changed);
  EXPECT_TRUE(f.explanations.empty());
}

// The value the folded attention reads `input` from, and whether view node `name` is still there.
std::string RootOf(const Graph& g, size_t input) { return AttentionOf(g)->input(input)->name; }
bool HasNode(const Graph& g, const std::string& name) {
  for (const Node* n : g.nodes()) {
    if (n->name == name) return true;
  }
  return false;
}

TEST(FoldAttentionLayout, StridedColumnsAreNotFoldedThrough) {
  // K takes every second column of [E, 3E): a strided view, but not the heads of one column block
  // of the projection. Q and V are read from it in place; K from its own Slice, which stays.
  auto g = SlicedQkv({16}, 8, Variant::kStridedK);
  Folded f = Fold(*g);
  EXPECT_TRUE(f.changed);
  EXPECT_TRUE(f.explanations.empty());
  EXPECT_EQ(RootOf(*g, 0), "qkv0_out");
  EXPECT_EQ(RootOf(*g, 1), "k0_out");
  EXPECT_EQ(RootOf(*g, 2), "qkv0_out");
  EXPECT_EQ(AttentionOf(*g)->attrs.GetInt("k_offset", -1), 0);
  EXPECT_TRUE(HasNode(*g, "k0"));
  EXPECT_FALSE(HasNode(*g, "q0"));
}

TEST(FoldAttentionLayout, AReshapeThatReordersIsNotFoldedThrough) {
  // Q through Reshape [batch, E, s] and Transpose [0,2,1] has Q's dims again, but the Reshape
  // splits the token digit across the new dims: its elements are not the projection's Q rows.
  // Q is read from the Transpose's output, which stays with its chain.
  auto g = SlicedQkv({16}, 8, Variant::kReorderedQ);
  Folded f = Fold(*g);
  EXPECT_TRUE(f.changed);
  EXPECT_TRUE(f.explanations.empty());
  EXPECT_EQ(RootOf(*g, 0), "q_back0_out");
  EXPECT_EQ(RootOf(*g, 1), "qkv0_out");
  EXPECT_EQ(AttentionOf(*g)->attrs.GetInt("k_offset", -1), 8);
  EXPECT_TRUE(HasNode(*g, "q_swap0"));
  EXPECT_TRUE(HasNode(*g, "q0"));
}

TEST(FoldAttentionLayout, AChainThatTakesTheBatchForTheSequenceDoesNotFoldThrough) {
  // qkv [seq, batch, 3E] reshaped (not transposed) to [batch, seq, 3E]: the same elements in
  // another order, which are batch-first rows only where seq == batch. With both symbols bound to
  // the same values the Reshape would be folded and the attention would read qkv as batch-first
  // rows; bound to distinct values, the attention reads the Reshape's output and the Reshape stays.
  Graph g;
  g.source = "swapped_symbols.onnx";
  g.symbols = {"seq", "batch"};
  const int64_t e = 8;
  const Dim seq = Dim::Symbol("seq"), batch = Dim::Symbol("batch");
  Value* qkv = *g.AddInput("qkv", DType::kF32, {seq, batch, Dim(3 * e)});
  auto node = [&](const std::string& op, const std::string& name, std::vector<Value*> in, Shape shape,
                  Attributes attrs = {}) {
    return AddOp(g, op, name, std::move(in), std::move(shape), std::move(attrs));
  };
  auto ints = [&](const std::string& name, std::vector<int64_t> v) { return Ints(g, name, std::move(v)); };
  // The shape the exporter would compute from Shape/Gather/Concat; the pass reads the output's dims.
  Value* rows = node("Reshape", "to_batch_first", {qkv, ints("rows_shape", {0, 0, 3 * e})}, {batch, seq, Dim(3 * e)});
  std::vector<Value*> parts;
  for (int64_t p = 0; p < 3; ++p) {
    const std::string name(1, "qkv"[p]);
    parts.push_back(
        node("Slice", name,
             {rows, ints(name + "_start", {p * e}), ints(name + "_end", {(p + 1) * e}), ints(name + "_axis", {2})},
             {batch, seq, Dim(e)}));
  }
  Attributes a;
  a.Set("q_num_heads", kHeads);
  a.Set("kv_num_heads", kHeads);
  g.AddOutput(
      node("Identity", "y", {node("Attention", "attention0", parts, {batch, seq, Dim(e)}, a)}, {batch, seq, Dim(e)}));
  Folded f = Fold(g);
  EXPECT_TRUE(f.changed);
  EXPECT_EQ(RootOf(g, 0), "to_batch_first_out");
  EXPECT_EQ(AttentionOf(g)->attrs.GetString("qkv_layout", ""), "BSW");
  EXPECT_TRUE(HasNode(g, "to_batch_first"));
}

}  // namespace
}  // namespace gcomp::passes
