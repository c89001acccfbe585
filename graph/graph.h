// The graph IR: values, nodes and the graph that owns them.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/attribute.h"
#include "graph/dim.h"
#include "core/dtype.h"
#include "core/tensor.h"

namespace gcomp {

struct OpDef;
struct Node;

// A choice the compiler made for a node (precision, layout, lowering, kernel) and why.
struct Decision {
  std::string kind;    // "precision", "layout", "lowering", "kernel", ...
  std::string choice;  // "fp16", "NHWC", ...
  std::string reason;  // the rule or measurement that chose it
};

struct Value {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;
  Node* producer = nullptr;
  std::vector<Node*> users;
  // Constant data (initializers, Constant nodes, folded values).
  std::shared_ptr<const Tensor> constant;
  // Element values of small integer tensors (shape computations), possibly symbolic.
  std::optional<std::vector<Dim>> sym_values;

  bool is_constant() const { return constant != nullptr; }
};

struct Node {
  std::string name;
  std::string op;
  const OpDef* def = nullptr;
  std::vector<Value*> inputs;   // nullptr marks an omitted optional input
  std::vector<Value*> outputs;  // nullptr marks an omitted optional output
  Attributes attrs;
  std::vector<std::string> origin;  // ONNX node names this node came from
  std::vector<Decision> decisions;
  // Storage precision chosen for the node's float outputs (f32 unless a pass changes it);
  // the reference interpreter rounds outputs to it when emulating storage.
  DType precision = DType::kF32;

  Value* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  Value* output(size_t i) const { return i < outputs.size() ? outputs[i] : nullptr; }
  // "node 'Conv_12' (Conv)" for messages.
  std::string Describe() const;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Creates a value with a unique name (error if the name is taken).
  absl::StatusOr<Value*> AddValue(const std::string& name, DType dtype, Shape shape);
  absl::StatusOr<Value*> AddConstant(const std::string& name, Tensor data);
  absl::StatusOr<Value*> AddInput(const std::string& name, DType dtype, Shape shape);
  // Appends a node; its outputs must be values without a producer.
  absl::StatusOr<Node*> AddNode(const std::string& op, const std::string& name,
                                std::vector<Value*> inputs, std::vector<Value*> outputs,
                                Attributes attrs = {});
  void AddOutput(Value* v) { outputs_.push_back(v); }
  // A name not used by any value yet, derived from `base`.
  std::string UniqueValueName(const std::string& base);

  // ---- rewriting (passes use these through passes/rewriter.h) ----
  // Removes a node whose outputs have no users and are not graph outputs.
  absl::Status EraseNode(Node* node);
  // Points every use of `from` (node inputs and graph outputs) at `to`. A graph output keeps its
  // name: `to` takes the name and `from` gets a fresh one.
  void ReplaceAllUses(Value* from, Value* to);
  // Sets input `index` of `node` to `v`, keeping user lists consistent.
  void SetInput(Node* node, size_t index, Value* v);
  // Restores topological order (stable: keeps the existing order where it is already valid).
  absl::Status TopologicalSort();
  // Puts the nodes in `order`: a permutation of nodes() in which every node comes after the
  // producers of its inputs (error otherwise, and the order is unchanged).
  absl::Status Reorder(const std::vector<Node*>& order);
  // Drops values that no node, input or output refers to.
  void RemoveUnusedValues();
  // A node name not used yet, derived from `base`.
  std::string UniqueNodeName(const std::string& base);
  bool IsGraphOutput(const Value* v) const;

  Value* FindValue(const std::string& name) const;
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  // Nodes in topological order.
  std::vector<Node*> nodes() const;
  size_t num_nodes() const { return nodes_.size(); }
  std::vector<Value*> values() const;

  // Where the graph came from ("model.onnx"), used in messages.
  std::string source;
  std::string name;
  int64_t opset = 0;
  // Symbols of the input shapes in order of first appearance ("batch").
  std::vector<std::string> symbols;

 private:
  std::vector<std::unique_ptr<Value>> values_;
  std::map<std::string, Value*> value_by_name_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  int64_t next_unique_ = 0;
  void Rename(Value* v, const std::string& name);
};

}  // namespace gcomp
