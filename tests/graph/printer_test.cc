#include "graph/printer.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "graph/op_def.h"
#include "graph/shape_inference.h"

namespace gcomp {
namespace {

// x[batch,4] -> MatMul(w[4,3]) -> Add(b[3]) -> Relu -> y
std::unique_ptr<Graph> SmallGraph() {
  auto g = std::make_unique<Graph>();
  g->source = "small.onnx";
  g->name = "small";
  g->opset = 17;
  g->symbols = {"batch"};
  Value* x = *g->AddInput("x", DType::kF32, {Dim::Symbol("batch"), Dim(4)});
  Value* w = *g->AddConstant("w", Tensor::FromF32({4, 3}, std::vector<float>(12, 0.5f)));
  Value* b = *g->AddConstant("b", Tensor::FromF32({3}, {1, 2, 3}));
  auto node = [&](const std::string& op, const std::string& name, std::vector<Value*> ins) {
    Value* out = *g->AddValue(name + "_out", DType::kF32, {});
    Node* n = *g->AddNode(op, name, ins, {out});
    n->def = FindOp(op);
    n->origin = {name};
    return out;
  };
  Value* y = node("Relu", "relu", {node("Add", "add", {node("MatMul", "matmul", {x, w}), b})});
  g->AddOutput(y);
  EXPECT_TRUE(InferShapes(*g).ok());
  return g;
}

TEST(PrinterTest, TextIsStable) {
  auto g = SmallGraph();
  const std::string expected =
      "graph \"small\" opset 17\n"
      "  input %x: f32[batch,4]\n"
      "  const %w: f32[4,3]\n"
      "  const %b: f32[3] {1,2,3}\n"
      "  %matmul_out: f32[batch,3] = MatMul[\"matmul\"](%x, %w)\n"
      "  %add_out: f32[batch,3] = Add[\"add\"](%matmul_out, %b)\n"
      "  %relu_out: f32[batch,3] = Relu[\"relu\"](%add_out)\n"
      "  output %relu_out: f32[batch,3]\n";
  EXPECT_EQ(PrintGraph(*g), expected);
  EXPECT_EQ(PrintGraph(*g), PrintGraph(*SmallGraph()));
}

TEST(PrinterTest, OriginAndDecisionsArePrinted) {
  auto g = SmallGraph();
  Node* relu = g->nodes()[2];
  relu->origin = {"Relu_7", "Add_6"};
  relu->precision = DType::kF16;
  relu->decisions.push_back({"precision", "fp16", "rule: activations follow their producer"});
  std::string text = PrintGraph(*g);
  EXPECT_NE(text.find("# origin: Relu_7, Add_6  # precision f16"), std::string::npos) << text;
  EXPECT_NE(text.find("    # precision = fp16: rule: activations follow their producer"), std::string::npos) << text;
  std::string json = GraphToJson(*g);
  EXPECT_NE(json.find("\"origin\":[\"Relu_7\",\"Add_6\"]"), std::string::npos);
  EXPECT_NE(json.find("{\"kind\":\"precision\",\"choice\":\"fp16\""), std::string::npos);
}

TEST(PrinterTest, SummaryJsonDot) {
  auto g = SmallGraph();
  std::string summary = PrintSummary(*g);
  EXPECT_NE(summary.find("nodes: 3, constants: 2, parameters: 15"), std::string::npos) << summary;
  EXPECT_NE(summary.find("symbols: batch"), std::string::npos);
  std::string json = GraphToJson(*g);
  EXPECT_EQ(json.rfind("{\"schema_version\":1,", 0), 0u);
  EXPECT_NE(json.find("\"shape\":[\"batch\",4]"), std::string::npos) << json;
  EXPECT_NE(json.find("{\"from\":\"matmul\",\"to\":\"add\",\"value\":\"matmul_out\"}"), std::string::npos) << json;
  EXPECT_NE(json.find("{\"from\":null,\"to\":\"matmul\",\"value\":\"x\"}"), std::string::npos) << json;
  std::string dot = GraphToDot(*g);
  EXPECT_EQ(dot.rfind("digraph \"small\" {", 0), 0u);
  EXPECT_NE(dot.find("n0 -> n1 [label=\"f32[batch,3]\"]"), std::string::npos) << dot;
  EXPECT_EQ(JsonString("a\"b\\\n\x01"), "\"a\\\"b\\\\\\n\\u0001\"");
}

TEST(PrinterTest, HtmlIsSelfContainedAndDeterministic) {
  auto g = SmallGraph();
  Node* add = g->nodes()[1];
  add->origin = {"Add_6", "MatMul_5"};
  add->precision = DType::kF16;
  add->decisions.push_back({"fusion", "FusedGemm+bias", "bias Add of constant [3]"});
  std::string html = GraphToHtml(*g, "small <model>");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* banned : {"http://", "https://", "<script src", "<link", "@import", "url(http"}) {
    EXPECT_EQ(html.find(banned), std::string::npos) << banned;
  }
  EXPECT_NE(html.find("<title>small &lt;model&gt;</title>"), std::string::npos);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  for (const Node* n : g->nodes()) {
    EXPECT_NE(html.find(absl::StrCat(">", n->name, "</text>")), std::string::npos) << n->name;
    EXPECT_NE(html.find(absl::StrCat(">", n->op, "</text>")), std::string::npos) << n->op;
    EXPECT_NE(html.find(absl::StrCat("{name:\"", n->name, "\",op:\"", n->op, "\"")), std::string::npos) << n->name;
  }
  EXPECT_NE(html.find("[\"fusion\",\"FusedGemm+bias\",\"bias Add of constant [3]\"]"), std::string::npos);
  EXPECT_NE(html.find("origin:[\"Add_6\",\"MatMul_5\"]"), std::string::npos);
  EXPECT_NE(html.find("prec:\"f16\""), std::string::npos);
  EXPECT_NE(html.find("f32[batch,3]"), std::string::npos);  // output types
  EXPECT_NE(html.find("<div id=\"legend\">"), std::string::npos);
  for (const char* entry :
       {"conv", "gemm", "attention", "norm", "elementwise", "data movement", "other", "f16", "bf16"}) {
    EXPECT_NE(html.find(absl::StrCat("</i>", entry, "</span>")), std::string::npos) << entry;
  }
  // Two edges between nodes, one from the input, one to the output.
  size_t edges = 0;
  for (size_t at = 0; (at = html.find("<path class=\"e\"", at)) != std::string::npos; ++at) ++edges;
  EXPECT_EQ(edges, 4u);
  EXPECT_EQ(html, GraphToHtml(*g, "small <model>"));
  // Nothing in the data can close the script early.
  g->nodes()[2]->decisions.push_back({"note", "x", "</script><b>"});
  std::string tricky = GraphToHtml(*g, "t");
  EXPECT_EQ(tricky.find("</script><b>"), std::string::npos);
  EXPECT_NE(tricky.find("\\u003c/script>\\u003cb>"), std::string::npos);
  Graph empty;
  EXPECT_NE(GraphToHtml(empty, "empty").find("<svg"), std::string::npos);
}

// x -> r1 -> r2 -> r3 -> add(r3, r1): the chain stays on one vertical line and the skip edge
// runs straight beside it.
TEST(PrinterTest, HtmlLayoutKeepsChainStraight) {
  Graph g;
  Value* x = *g.AddInput("x", DType::kF32, {Dim(2), Dim(4)});
  auto node = [&](const std::string& op, const std::string& name, std::vector<Value*> ins) {
    Value* out = *g.AddValue(name + "_out", DType::kF32, {Dim(2), Dim(4)});
    Node* n = *g.AddNode(op, name, ins, {out});
    n->def = FindOp(op);
    n->origin = {name};
    return out;
  };
  Value* r1 = node("Relu", "r1", {x});
  Value* r3 = node("Relu", "r3", {node("Relu", "r2", {r1})});
  g.AddOutput(node("Add", "add", {r3, r1}));
  std::string html = GraphToHtml(g, "chain");
  auto x_of = [&](int i) {
    std::string key = absl::StrCat("data-i=\"", i, "\" transform=\"translate(");
    size_t at = html.find(key);
    EXPECT_NE(at, std::string::npos) << i;
    at += key.size();
    return html.substr(at, html.find(',', at) - at);
  };
  for (int i = 2; i <= 4; ++i) EXPECT_EQ(x_of(i), x_of(1)) << i;  // r1, r2, r3, add
  // The edge r1 -> add (clickable indices 1 and 4).
  size_t skip = html.find("data-v=\"1 4\"");
  ASSERT_NE(skip, std::string::npos);
  std::string path = html.substr(skip, html.find("\">", skip) - skip);
  EXPECT_NE(path.find('V'), std::string::npos) << path;  // a vertical run beside the chain
}

TEST(VerifierTest, AcceptsWellFormedAndRejectsBroken) {
  auto g = SmallGraph();
  EXPECT_TRUE(VerifyGraph(*g).ok());
  Node* add = g->nodes()[1];
  add->inputs[0]->users.clear();  // a use the value does not know about
  absl::Status s = VerifyGraph(*g);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("does not list node 'add' (Add) as a user"), std::string::npos) << s;
  auto g2 = SmallGraph();
  g2->nodes()[0]->inputs.pop_back();  // MatMul with one input
  s = VerifyGraph(*g2);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("node 'matmul' (MatMul): has 1 inputs, expected 2"), std::string::npos) << s;
}

}  // namespace
}  // namespace gcomp
