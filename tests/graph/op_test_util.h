// Helpers for op tests: build a one-node graph, infer shapes, run the reference interpreter.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/interpreter.h"
#include "graph/op_def.h"
#include "graph/shape_inference.h"

namespace gcomp::testing {

struct OpInput {
  std::string name;
  Tensor value;
  bool constant = false;  // becomes an initializer instead of a graph input
};

// Builds a graph with one `op` node, runs shape inference, and returns the graph.
// `outputs` is the number of node outputs.
inline absl::StatusOr<std::unique_ptr<Graph>> SingleOpGraph(const std::string& op,
                                                            const std::vector<OpInput>& inputs,
                                                            Attributes attrs, int outputs = 1) {
  auto g = std::make_unique<Graph>();
  g->source = "test.onnx";
  std::vector<Value*> ins;
  for (const OpInput& in : inputs) {
    if (in.name.empty()) {
      ins.push_back(nullptr);
      continue;
    }
    absl::StatusOr<Value*> v = in.constant ? g->AddConstant(in.name, in.value)
                                           : g->AddInput(in.name, in.value.dtype(), ShapeFromInts(in.value.dims()));
    if (!v.ok()) return v.status();
    ins.push_back(*v);
  }
  std::vector<Value*> outs;
  for (int i = 0; i < outputs; ++i) {
    auto v = g->AddValue("out" + std::to_string(i), DType::kF32, {});
    if (!v.ok()) return v.status();
    outs.push_back(*v);
  }
  auto node = g->AddNode(op, "node0", ins, outs, std::move(attrs));
  if (!node.ok()) return node.status();
  (*node)->def = FindOp(op);
  for (Value* o : outs) g->AddOutput(o);
  absl::Status s = InferShapes(*g);
  if (!s.ok()) return s;
  return g;
}

// Runs a single op through shape inference and the reference interpreter.
inline absl::StatusOr<std::vector<Tensor>> RunOp(const std::string& op, const std::vector<OpInput>& inputs,
                                                 Attributes attrs, int outputs = 1) {
  auto g = SingleOpGraph(op, inputs, std::move(attrs), outputs);
  if (!g.ok()) return g.status();
  std::map<std::string, Tensor> feeds;
  for (const OpInput& in : inputs) {
    if (!in.name.empty() && !in.constant) feeds[in.name] = in.value;
  }
  auto res = RunReference(**g, feeds);
  if (!res.ok()) return res.status();
  std::vector<Tensor> out;
  for (int i = 0; i < outputs; ++i) out.push_back(res->at("out" + std::to_string(i)));
  return out;
}

}  // namespace gcomp::testing
