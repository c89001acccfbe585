#include "frontend/onnx_import.h"

#include <google/protobuf/io/coded_stream.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontend/tensor_proto.h"
#include "graph/op_def.h"
#include "graph/shape_inference.h"
#include "core/status_macros.h"
#include "core/limits.h"
#include "onnx/onnx_pb.h"

namespace gcomp::frontend {
namespace {

// Opset in which each supported default-domain op first appeared in the form gcomp reads.
const std::map<std::string, int64_t>& SupportedOps() {
  static const auto* ops = new std::map<std::string, int64_t>{
      {"Add", 1}, {"Attention", 23}, {"AveragePool", 1}, {"BatchNormalization", 1}, {"Cast", 1},
      {"Clip", 1}, {"Concat", 1}, {"Constant", 1}, {"ConstantOfShape", 9}, {"Conv", 1},
      {"Div", 1}, {"Dropout", 1}, {"Equal", 1}, {"Erf", 9}, {"Exp", 1}, {"Expand", 8},
      {"Flatten", 1}, {"Gather", 1}, {"Gelu", 20}, {"Gemm", 1}, {"GlobalAveragePool", 1}, {"IsNaN", 9},
      {"Identity", 1}, {"LayerNormalization", 17}, {"MatMul", 1}, {"MaxPool", 1}, {"Mul", 1},
      {"Mod", 10}, {"Neg", 1}, {"Pad", 1}, {"Pow", 1}, {"Range", 11}, {"Reciprocal", 1}, {"ReduceMean", 1},
      {"ReduceSum", 1}, {"Relu", 1}, {"Reshape", 1}, {"Shape", 1}, {"Sigmoid", 1}, {"Slice", 1},
      {"Softmax", 1}, {"Split", 1}, {"Sqrt", 1}, {"Squeeze", 1}, {"Sub", 1}, {"Tanh", 1},
      {"Transpose", 1}, {"Unsqueeze", 1}, {"Where", 9}};
  return *ops;
}

bool IsDefaultDomain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

std::string NodeLabel(const onnx::NodeProto& n, const std::string& name) {
  return absl::StrCat("node '", name, "' (", n.op_type(), ")");
}

absl::StatusOr<AttrValue> ConvertAttribute(const onnx::AttributeProto& a, const std::string& base_dir) {
  using A = onnx::AttributeProto;
  int type = a.type();
  if (type == A::UNDEFINED) {  // very old exporters leave `type` unset
    if (a.has_f()) type = A::FLOAT;
    else if (a.has_i()) type = A::INT;
    else if (a.has_s()) type = A::STRING;
    else if (a.has_t()) type = A::TENSOR;
    else if (a.floats_size()) type = A::FLOATS;
    else if (a.ints_size()) type = A::INTS;
    else if (a.strings_size()) type = A::STRINGS;
  }
  switch (type) {
    case A::FLOAT: return AttrValue(a.f());
    case A::INT: return AttrValue(static_cast<int64_t>(a.i()));
    case A::STRING: return AttrValue(a.s());
    case A::FLOATS: return AttrValue(std::vector<float>(a.floats().begin(), a.floats().end()));
    case A::INTS: return AttrValue(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    case A::STRINGS: return AttrValue(std::vector<std::string>(a.strings().begin(), a.strings().end()));
    case A::TENSOR: {
      ASSIGN_OR_RETURN(Tensor t, TensorFromProto(a.t(), base_dir));
      return AttrValue(std::move(t));
    }
    default: {
      std::string type_name = A::AttributeType_IsValid(type) ? A::AttributeType_Name(type) : "";
      if (type_name.empty()) type_name = absl::StrCat(type);
      return absl::InvalidArgumentError(
          absl::StrCat("attribute '", a.name(), "' has type ", type_name,
                       ", expected FLOAT, INT, STRING, TENSOR, FLOATS, INTS or STRINGS (subgraphs, sparse tensors and "
                       "type protos are not supported)"));
    }
  }
}

class Importer {
 public:
  Importer(const onnx::ModelProto& model, std::string source, std::string base_dir)
      : model_(model), source_(std::move(source)), base_dir_(std::move(base_dir)) {}

  absl::StatusOr<std::unique_ptr<Graph>> Run();

 private:
  absl::Status Fail(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(source_, ": ", what));
  }
  absl::Status NodeFail(const onnx::NodeProto& n, const std::string& name, const std::string& what) const {
    return Fail(absl::StrCat(NodeLabel(n, name), ": ", what));
  }
  absl::Status ReadOpsets();
  absl::Status CheckSupported(const std::vector<std::string>& names);
  absl::Status AddInputs();
  absl::StatusOr<std::vector<size_t>> TopologicalOrder(const std::vector<std::string>& names);
  absl::Status ConvertNode(const onnx::NodeProto& n, const std::string& name);
  absl::Status ConvertConstant(const onnx::NodeProto& n, const std::string& name);
  absl::StatusOr<Value*> Input(const onnx::NodeProto& n, const std::string& name, int i);
  // Integer values of a constant input (initializer or Constant node output).
  absl::StatusOr<std::optional<std::vector<int64_t>>> ConstInts(const onnx::NodeProto& n, const std::string& name,
                                                                 int i, const char* what);
  absl::Status NormalizeOpset1To6(const onnx::NodeProto& n, const std::string& name, Attributes& attrs,
                                  std::vector<Value*>& ins);
  // A value name used neither in the graph nor by any node output of the model.
  std::string FreshName(const std::string& base) const;
  absl::StatusOr<Value*> MakeConst(const std::string& base, Tensor t);
  absl::StatusOr<Value*> NewValue(const std::string& base);
  absl::StatusOr<Node*> Emit(const std::string& op, const std::string& name, const std::string& origin,
                             std::vector<Value*> ins, std::vector<Value*> outs, Attributes attrs);

  const onnx::ModelProto& model_;
  std::string source_;
  std::string base_dir_;
  int64_t opset_ = 0;
  std::set<std::string> model_names_;  // node outputs of the model, reserved for it
  std::unique_ptr<Graph> g_ = std::make_unique<Graph>();
};

absl::Status Importer::ReadOpsets() {
  bool found = false;
  for (const auto& os : model_.opset_import()) {
    if (IsDefaultDomain(os.domain())) {
      opset_ = os.version();
      found = true;
    }
  }
  if (!found) {
    if (model_.opset_import_size() == 0 && model_.ir_version() > 0 && model_.ir_version() < 3) {
      opset_ = 1;  // implied before IR version 3
    } else if (model_.opset_import_size() == 0) {
      return Fail(absl::StrCat("model imports no opset, expected the default ONNX domain at opset ", kMinOpset, " to ",
                               kMaxOpset));
    } else {
      return Fail(absl::StrCat("model imports no default-domain opset, expected the default ONNX domain at opset ",
                               kMinOpset, " to ", kMaxOpset));
    }
  }
  if (opset_ < kMinOpset || opset_ > kMaxOpset) {
    return Fail(absl::StrCat("model imports default-domain opset ", opset_, ", expected ", kMinOpset, " to ", kMaxOpset,
                             opset_ > kMaxOpset ? " (newer than supported)" : " (older than supported)"));
  }
  return absl::OkStatus();
}

absl::Status Importer::CheckSupported(const std::vector<std::string>& names) {
  std::vector<std::string> problems;
  const auto& graph = model_.graph();
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& n = graph.node(i);
    std::string label = NodeLabel(n, names[i]);
    if (!IsDefaultDomain(n.domain())) {
      problems.push_back(absl::StrCat(label, " in domain '", n.domain(), "': unsupported domain",
                                      n.domain() == "com.microsoft" ? " (ONNX Runtime contrib op)" : ""));
      continue;
    }
    if (n.op_type() == "QuantizeLinear" || n.op_type() == "DequantizeLinear" || n.op_type() == "QLinearConv" ||
        n.op_type() == "QLinearMatMul") {
      problems.push_back(absl::StrCat(label, ": quantized (Q/DQ) graphs are not supported"));
      continue;
    }
    auto it = SupportedOps().find(n.op_type());
    if (it == SupportedOps().end()) {
      problems.push_back(absl::StrCat(label, ": unsupported op"));
    } else if (it->second > opset_) {
      problems.push_back(absl::StrCat(label, ": needs opset ", it->second, ", the model imports opset ", opset_));
    }
  }
  if (problems.empty()) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(source_, ": ", problems.size(), " unsupported node",
                                               problems.size() == 1 ? "" : "s", ":\n  ",
                                               absl::StrJoin(problems, "\n  ")));
}

absl::Status Importer::AddInputs() {
  const auto& graph = model_.graph();
  for (const auto& init : graph.initializer()) {
    if (init.name().empty()) return Fail("an initializer has no name");
    auto t = TensorFromProto(init, base_dir_);
    if (!t.ok()) return Fail(std::string(t.status().message()));
    auto v = g_->AddConstant(init.name(), std::move(*t));
    if (!v.ok()) return Fail(absl::StrCat("initializer '", init.name(), "': ", v.status().message()));
  }
  if (graph.sparse_initializer_size() > 0) return Fail("sparse initializers are not supported");
  for (const auto& in : graph.input()) {
    if (g_->FindValue(in.name())) continue;  // an initializer listed as input (IR < 4)
    if (!in.type().has_tensor_type()) {
      return Fail(absl::StrCat("graph input '", in.name(), "' is not a tensor"));
    }
    const auto& tt = in.type().tensor_type();
    auto dtype = DTypeFromOnnx(tt.elem_type());
    if (!dtype) {
      return Fail(absl::StrCat("graph input '", in.name(), "' has element type ", OnnxTypeName(tt.elem_type()),
                               ", expected a supported type (float, float16, bfloat16, int64, ...)"));
    }
    if (!tt.has_shape()) return Fail(absl::StrCat("graph input '", in.name(), "' has no shape (rank unknown)"));
    if (absl::Status s = CheckRank(tt.shape().dim_size()); !s.ok()) {
      return Fail(absl::StrCat("graph input '", in.name(), "' has ", s.message()));
    }
    Shape shape;
    for (int d = 0; d < tt.shape().dim_size(); ++d) {
      const auto& dim = tt.shape().dim(d);
      if (dim.has_dim_value()) {
        if (dim.dim_value() < 0) {
          return Fail(absl::StrCat("graph input '", in.name(), "' has negative dimension ", dim.dim_value(),
                                   " at axis ", d));
        }
        if (dim.dim_value() > kMaxDim) {
          return Fail(absl::StrCat("graph input '", in.name(), "' has dimension ", dim.dim_value(), " at axis ", d,
                                   ", over the limit of ", kMaxDim));
        }
        shape.emplace_back(dim.dim_value());
      } else {
        std::string sym = dim.has_dim_param() && !dim.dim_param().empty()
                              ? dim.dim_param()
                              : absl::StrCat("unk_", in.name(), "_", d);
        if (std::find(g_->symbols.begin(), g_->symbols.end(), sym) == g_->symbols.end()) g_->symbols.push_back(sym);
        shape.push_back(Dim::Symbol(sym));
      }
    }
    // A concrete input larger than any tensor gcomp can hold could never be fed; refuse it here.
    if (auto dims = ConcreteDims(shape)) {
      auto numel = CheckedNumElements(*dims);
      int64_t bytes = 0;
      if (!numel.ok() || __builtin_mul_overflow(*numel, static_cast<int64_t>(DTypeSize(*dtype)), &bytes) ||
          bytes > kMaxTensorBytes) {
        return Fail(absl::StrCat("graph input '", in.name(), "' has shape ", ShapeToString(shape), " (",
                                 numel.ok() ? absl::StrCat(*numel, " ", DTypeName(*dtype), " elements")
                                            : std::string(numel.status().message()),
                                 "), expected at most ", kMaxTensorBytes >> 30, " GiB"));
      }
    }
    auto v = g_->AddInput(in.name(), *dtype, shape);
    if (!v.ok()) return Fail(absl::StrCat("graph input: ", v.status().message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<size_t>> Importer::TopologicalOrder(const std::vector<std::string>& names) {
  const auto& graph = model_.graph();
  std::map<std::string, size_t> producer;
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const auto& out : graph.node(i).output()) {
      if (out.empty()) continue;
      if (g_->FindValue(out)) {
        return Fail(absl::StrCat(NodeLabel(graph.node(i), names[i]), ": output '", out,
                                 "' is already a graph input or initializer"));
      }
      auto [it, inserted] = producer.emplace(out, i);
      if (!inserted) {
        return Fail(absl::StrCat("value '", out, "' is produced by both ", NodeLabel(graph.node(it->second), names[it->second]),
                                 " and ", NodeLabel(graph.node(i), names[i])));
      }
    }
  }
  size_t n = graph.node_size();
  std::vector<std::vector<size_t>> users(n);
  std::vector<size_t> pending(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const auto& node = graph.node(static_cast<int>(i));
    for (const auto& in : node.input()) {
      if (in.empty()) continue;
      auto it = producer.find(in);
      if (it != producer.end()) {
        users[it->second].push_back(i);
        ++pending[i];
      } else if (!g_->FindValue(in)) {
        return Fail(absl::StrCat(NodeLabel(node, names[i]), ": input '", in,
                                 "' is not produced by any node, initializer or graph input"));
      }
    }
  }
  std::vector<size_t> order, ready;
  for (size_t i = n; i-- > 0;) {
    if (pending[i] == 0) ready.push_back(i);
  }
  while (!ready.empty()) {
    size_t i = ready.back();
    ready.pop_back();
    order.push_back(i);
    for (size_t u : users[i]) {
      if (--pending[u] == 0) ready.push_back(u);
    }
  }
  if (order.size() != n) {
    for (size_t i = 0; i < n; ++i) {
      if (pending[i]) {
        return Fail(absl::StrCat("the graph has a cycle through ", NodeLabel(graph.node(static_cast<int>(i)), names[i])));
      }
    }
  }
  return order;
}

absl::StatusOr<Value*> Importer::Input(const onnx::NodeProto& n, const std::string& name, int i) {
  if (i >= n.input_size() || n.input(i).empty()) return nullptr;
  Value* v = g_->FindValue(n.input(i));
  if (!v) return NodeFail(n, name, absl::StrCat("input '", n.input(i), "' is not defined"));
  return v;
}

absl::StatusOr<std::optional<std::vector<int64_t>>> Importer::ConstInts(const onnx::NodeProto& n,
                                                                         const std::string& name, int i,
                                                                         const char* what) {
  ASSIGN_OR_RETURN(Value * v, Input(n, name, i));
  if (!v) return std::optional<std::vector<int64_t>>();
  if (!v->is_constant()) {
    // Values that shape inference already knows (shape arithmetic on static dims) count too.
    if (!IsFloat(v->dtype) && v->sym_values &&
        std::all_of(v->sym_values->begin(), v->sym_values->end(), [](const Dim& d) { return d.IsConst(); })) {
      std::vector<int64_t> vals;
      for (const Dim& d : *v->sym_values) vals.push_back(d.value());
      return std::optional<std::vector<int64_t>>(vals);
    }
    return NodeFail(n, name, absl::StrCat(what, " input '", v->name,
                                          "' must be a constant (initializer, Constant or static shape arithmetic)"));
  }
  if (IsFloat(v->constant->dtype())) {
    return NodeFail(n, name, absl::StrCat(what, " input '", v->name, "' has dtype ", DTypeName(v->constant->dtype()),
                                          ", expected i64"));
  }
  return std::optional<std::vector<int64_t>>(v->constant->ToI64());
}

std::string Importer::FreshName(const std::string& base) const {
  std::string name = base;
  for (int k = 1; g_->FindValue(name) || model_names_.count(name); ++k) name = absl::StrCat(base, "_", k);
  return name;
}

absl::StatusOr<Value*> Importer::MakeConst(const std::string& base, Tensor t) {
  return g_->AddConstant(FreshName(base), std::move(t));
}

absl::StatusOr<Value*> Importer::NewValue(const std::string& base) {
  return g_->AddValue(FreshName(base), DType::kF32, {});
}

absl::StatusOr<Node*> Importer::Emit(const std::string& op, const std::string& name, const std::string& origin,
                                     std::vector<Value*> ins, std::vector<Value*> outs, Attributes attrs) {
  auto node = g_->AddNode(op, name, std::move(ins), std::move(outs), std::move(attrs));
  if (!node.ok()) return Fail(std::string(node.status().message()));
  (*node)->def = FindOp(op);
  (*node)->origin = {origin};
  if (!(*node)->def) return absl::InternalError(absl::StrCat("op table has no entry for ", op));
  // Nodes arrive in topological order: inferring each one now gives later conversions (Softmax
  // before opset 13, Clip before 11) the rank and dtype of their inputs.
  RETURN_IF_ERROR(InferNode(*g_, **node));
  return *node;
}

absl::Status Importer::ConvertConstant(const onnx::NodeProto& n, const std::string& name) {
  if (n.output_size() != 1) return NodeFail(n, name, absl::StrCat("has ", n.output_size(), " outputs, expected 1"));
  if (n.attribute_size() != 1) {
    return NodeFail(n, name, absl::StrCat("has ", n.attribute_size(), " attributes, expected exactly one value attribute"));
  }
  const auto& a = n.attribute(0);
  Tensor t;
  if (a.name() == "value") {
    if (a.type() != onnx::AttributeProto::TENSOR && !a.has_t()) {
      return NodeFail(n, name, "attribute 'value' is not a tensor");
    }
    auto r = TensorFromProto(a.t(), base_dir_);
    if (!r.ok()) return NodeFail(n, name, std::string(r.status().message()));
    t = std::move(*r);
  } else if (a.name() == "value_float") {
    t = Tensor::FromF32({}, {a.f()});
  } else if (a.name() == "value_floats") {
    t = Tensor::FromF32({a.floats_size()}, std::vector<float>(a.floats().begin(), a.floats().end()));
  } else if (a.name() == "value_int") {
    t = Tensor::FromI64({}, {a.i()});
  } else if (a.name() == "value_ints") {
    t = Tensor::FromI64({a.ints_size()}, std::vector<int64_t>(a.ints().begin(), a.ints().end()));
  } else {
    return NodeFail(n, name, absl::StrCat("attribute '", a.name(), "' is not supported (string and sparse constants are out of scope)"));
  }
  auto v = g_->AddConstant(n.output(0), std::move(t));
  if (!v.ok()) return NodeFail(n, name, std::string(v.status().message()));
  return absl::OkStatus();
}

// Opsets 1-6 in the forms of opset 7 and later, as ONNX Runtime reads them:
//   consumed_inputs (opsets 1-5)        an in-place hint without semantics: dropped
//   broadcast/axis of binary ops (1-6)  B aligned at `axis` of A becomes B with trailing unit dims
//                                       (NumPy broadcasting gives the same elements); without axis
//                                       the alignment is already NumPy's (the suffix)
//   Gemm's broadcast (1-6)              C broadcast NumPy-style, as Gemm-7
//   Reshape's shape attribute (1-4)     a constant shape input
//   Concat without axis (1-3)           axis 1
//   Cast's type name (1-5)              the TensorProto type number
//   Split's split input (1)             the split attribute (a constant)
absl::Status Importer::NormalizeOpset1To6(const onnx::NodeProto& n, const std::string& name, Attributes& attrs,
                                          std::vector<Value*>& ins) {
  const std::string& op = n.op_type();
  attrs.Erase("consumed_inputs");
  static const std::set<std::string> kBinary = {"Add", "Sub", "Mul", "Div", "Pow", "Equal"};
  if (kBinary.count(op)) {
    const bool broadcast = attrs.GetInt("broadcast", 0) != 0;
    const bool has_axis = attrs.Has("axis");
    const int64_t axis_attr = attrs.GetInt("axis", 0);
    attrs.Erase("broadcast");
    attrs.Erase("axis");
    if (!broadcast || !has_axis || ins.size() < 2 || !ins[0] || !ins[1]) return absl::OkStatus();
    const int64_t ra = static_cast<int64_t>(ins[0]->shape.size()), rb = static_cast<int64_t>(ins[1]->shape.size());
    const int64_t axis = axis_attr < 0 ? axis_attr + ra : axis_attr;
    const int64_t trailing = ra - axis - rb;
    if (axis < 0 || axis > ra || trailing < 0) {
      return NodeFail(n, name, absl::StrCat("broadcast axis ", axis_attr, " does not place B (rank ", rb,
                                            ") inside A (rank ", ra, ")"));
    }
    if (trailing == 0) return absl::OkStatus();
    std::vector<int64_t> axes;
    for (int64_t k = 0; k < trailing; ++k) axes.push_back(rb + k);
    Attributes ua;
    ua.Set("axes", axes);
    ASSIGN_OR_RETURN(Value * b, NewValue(name + "/legacy_broadcast"));
    RETURN_IF_ERROR(Emit("Unsqueeze", name + "/legacy_broadcast", name, {ins[1]}, {b}, ua).status());
    ins[1] = b;
  } else if (op == "Gemm") {
    attrs.Erase("broadcast");
  } else if (op == "Reshape" && attrs.Has("shape")) {
    const std::vector<int64_t> shape = attrs.GetInts("shape");
    ASSIGN_OR_RETURN(Value * s, MakeConst(name + "/shape", Tensor::FromI64({static_cast<int64_t>(shape.size())}, shape)));
    attrs.Erase("shape");
    ins.resize(1);
    ins.push_back(s);
  } else if (op == "Concat" && !attrs.Has("axis")) {
    attrs.Set("axis", int64_t{1});
  } else if (op == "Cast" && attrs.Find("to") && std::holds_alternative<std::string>(*attrs.Find("to"))) {
    static const std::map<std::string, int64_t> kTypes = {
        {"FLOAT", 1}, {"UINT8", 2}, {"INT8", 3}, {"UINT16", 4}, {"INT16", 5}, {"INT32", 6}, {"INT64", 7},
        {"STRING", 8}, {"BOOL", 9}, {"FLOAT16", 10}, {"DOUBLE", 11}, {"UINT32", 12}, {"UINT64", 13}};
    const std::string to = attrs.GetString("to", "");
    auto it = kTypes.find(to);
    if (it == kTypes.end()) return NodeFail(n, name, absl::StrCat("casts to '", to, "', expected an ONNX type name"));
    attrs.Set("to", it->second);
  } else if (op == "Split" && ins.size() > 1 && ins[1]) {
    ASSIGN_OR_RETURN(auto split, ConstInts(n, name, 1, "split"));
    if (!split) return NodeFail(n, name, "the split input must be a constant");
    attrs.Set("split", *split);
    ins.resize(1);
  }
  return absl::OkStatus();
}

absl::Status Importer::ConvertNode(const onnx::NodeProto& n, const std::string& name) {
  const std::string& op = n.op_type();
  if (op == "Constant") return ConvertConstant(n, name);

  Attributes attrs;
  for (const auto& a : n.attribute()) {
    auto v = ConvertAttribute(a, base_dir_);
    if (!v.ok()) return NodeFail(n, name, std::string(v.status().message()));
    attrs.Set(a.name(), std::move(*v));
  }
  std::vector<Value*> ins;
  for (int i = 0; i < n.input_size(); ++i) {
    ASSIGN_OR_RETURN(Value * v, Input(n, name, i));
    ins.push_back(v);
  }
  std::vector<Value*> outs;
  for (const auto& o : n.output()) {
    if (o.empty()) {
      outs.push_back(nullptr);
      continue;
    }
    auto v = g_->AddValue(o, DType::kF32, {});
    if (!v.ok()) return NodeFail(n, name, std::string(v.status().message()));
    outs.push_back(*v);
  }
  while (!outs.empty() && outs.back() == nullptr) outs.pop_back();
  auto extra_outputs_used = [&](size_t keep) {
    for (size_t k = keep; k < outs.size(); ++k) {
      if (outs[k]) return true;
    }
    return false;
  };
  auto trim_inputs = [&](size_t keep) { ins.resize(std::min(ins.size(), keep)); };
  // Whether an integer input's values are known now (constant or static shape arithmetic). One
  // known only at run time (a graph input) stays an input; its op's shape is then data-dependent.
  auto known_now = [&](size_t i) {
    const Value* v = i < ins.size() ? ins[i] : nullptr;
    return !v || v->is_constant() ||
           (v->sym_values &&
            std::all_of(v->sym_values->begin(), v->sym_values->end(), [](const Dim& d) { return d.IsConst(); }));
  };
  auto axes_to_attr = [&](int input_index, const char* attr) -> absl::Status {
    if (!known_now(static_cast<size_t>(input_index))) return absl::OkStatus();
    ASSIGN_OR_RETURN(auto axes, ConstInts(n, name, input_index, attr));
    if (axes) attrs.Set(attr, *axes);
    trim_inputs(static_cast<size_t>(input_index));
    return absl::OkStatus();
  };
  std::string ir_op = op;
  if (opset_ < 7) RETURN_IF_ERROR(NormalizeOpset1To6(n, name, attrs, ins));
  // Ops rewritten below read their first input.
  auto first_input = [&]() -> absl::StatusOr<Value*> {
    if (ins.empty() || !ins[0]) return NodeFail(n, name, "required input 0 is missing");
    return ins[0];
  };

  if (op == "Cast") {
    int64_t to = attrs.GetInt("to", -1);
    const bool in_range = to >= INT32_MIN && to <= INT32_MAX;  // no wrap-around into a valid type
    auto t = in_range ? DTypeFromOnnx(static_cast<int32_t>(to)) : std::nullopt;
    if (!t) {
      std::string type = in_range ? OnnxTypeName(static_cast<int32_t>(to)) : absl::StrCat("type ", to);
      return NodeFail(n, name, absl::StrCat("casts to ", type, ", expected a supported type"));
    }
    attrs.Set("to", std::string(DTypeName(*t)));
  } else if (op == "Squeeze" || op == "Unsqueeze") {
    if (opset_ >= 13) RETURN_IF_ERROR(axes_to_attr(1, "axes"));
  } else if (op == "ReduceSum" || op == "ReduceMean") {
    if ((op == "ReduceSum" && opset_ >= 13) || (op == "ReduceMean" && opset_ >= 18)) {
      RETURN_IF_ERROR(axes_to_attr(1, "axes"));
    }
  } else if (op == "Split") {
    if (opset_ >= 13) RETURN_IF_ERROR(axes_to_attr(1, "split"));
  } else if (op == "Clip" && opset_ < 11) {
    ASSIGN_OR_RETURN(Value * x, first_input());
    Value* lo = nullptr;
    Value* hi = nullptr;
    // The bounds take the input's dtype, as Clip-11's min/max inputs must.
    if (attrs.Has("min")) {
      ASSIGN_OR_RETURN(lo, MakeConst(name + "/min", Tensor::Scalar(x->dtype, attrs.GetFloat("min", 0))));
    }
    if (attrs.Has("max")) {
      ASSIGN_OR_RETURN(hi, MakeConst(name + "/max", Tensor::Scalar(x->dtype, attrs.GetFloat("max", 0))));
    }
    attrs.Erase("min");
    attrs.Erase("max");
    ins = {x, lo, hi};
  } else if (op == "Slice" && opset_ < 10) {
    ASSIGN_OR_RETURN(Value * x, first_input());
    std::vector<int64_t> starts = attrs.GetInts("starts"), ends = attrs.GetInts("ends");
    ASSIGN_OR_RETURN(Value * s, MakeConst(name + "/starts", Tensor::FromI64({static_cast<int64_t>(starts.size())}, starts)));
    ASSIGN_OR_RETURN(Value * e, MakeConst(name + "/ends", Tensor::FromI64({static_cast<int64_t>(ends.size())}, ends)));
    Value* ax = nullptr;
    if (attrs.Has("axes")) {
      std::vector<int64_t> axes = attrs.GetInts("axes");
      ASSIGN_OR_RETURN(ax, MakeConst(name + "/axes", Tensor::FromI64({static_cast<int64_t>(axes.size())}, axes)));
    }
    ins = {x, s, e, ax};
    attrs = {};
  } else if (op == "Pad") {
    const bool value_known = ins.size() < 3 || !ins[2] || ins[2]->is_constant();
    if (opset_ >= 11 && (!known_now(1) || !known_now(3) || !value_known)) {
      // Keeps the inputs (pads, constant_value, axes): some are known only at run time.
    } else if (opset_ >= 11) {
      ASSIGN_OR_RETURN(auto pads, ConstInts(n, name, 1, "pads"));
      if (!pads) return NodeFail(n, name, "pads input is missing");
      float value = 0.0f;
      ASSIGN_OR_RETURN(Value * cv, Input(n, name, 2));
      if (cv) {
        if (!cv->is_constant() || cv->constant->numel() != 1) {
          return NodeFail(n, name, "constant_value must be a constant scalar");
        }
        value = cv->constant->GetF32(0);
      }
      ASSIGN_OR_RETURN(auto axes, ConstInts(n, name, 3, "axes"));
      if (axes) attrs.Set("axes", *axes);  // per-axis pads (opset 18); Pad expands them
      attrs.Set("pads", *pads);
      attrs.Set("value", value);
      trim_inputs(1);
    } else if (attrs.Has("paddings")) {  // opset 1 name
      attrs.Set("pads", attrs.GetInts("paddings"));
    }
  } else if (op == "BatchNormalization") {
    if (attrs.Has("spatial") && attrs.GetInt("spatial", 1) != 1) {
      return NodeFail(n, name, "spatial=0 (per-activation statistics) is not supported, expected spatial=1");
    }
    if (attrs.GetInt("training_mode", 0) != 0) return NodeFail(n, name, "training_mode=1 is not supported (inference only)");
    if (extra_outputs_used(1)) return NodeFail(n, name, "training outputs (running mean/var) are not supported");
    if (opset_ < 7 && attrs.GetInt("is_test", 0) == 0) {
      return NodeFail(n, name, "is_test=0 (training) is not supported, expected is_test=1 (inference)");
    }
    attrs.Erase("spatial");
    attrs.Erase("is_test");
    attrs.Erase("consumed_inputs");
  } else if (op == "Dropout") {
    if (opset_ >= 12 && ins.size() > 2 && ins[2]) {
      if (!ins[2]->is_constant() || ins[2]->constant->numel() != 1 || ins[2]->constant->GetI64(0) != 0) {
        return NodeFail(n, name, "training_mode must be a constant false (inference only)");
      }
    }
    if (attrs.GetInt("is_test", 1) == 0 && opset_ < 7) return NodeFail(n, name, "is_test=0 is not supported");
    trim_inputs(1);
    attrs = {};
  } else if (op == "LayerNormalization" || op == "Attention") {
    // Same signature in every opset gcomp reads.
  } else if (op == "Softmax" && opset_ < 13) {
    // Before opset 13 Softmax flattens the input to 2-D at `axis` (default 1).
    ASSIGN_OR_RETURN(Value * x, first_input());
    int64_t r = static_cast<int64_t>(x->shape.size());
    int64_t axis = attrs.GetInt("axis", 1);
    if (axis < -r || axis >= r) return NodeFail(n, name, absl::StrCat("axis ", axis, " is out of range for rank ", r));
    if (axis < 0) axis += r;
    if (axis == r - 1) {
      attrs.Set("axis", int64_t{-1});
    } else {
      Attributes fa;
      fa.Set("axis", axis);
      ASSIGN_OR_RETURN(Value * flat, NewValue(name + "/flatten"));
      RETURN_IF_ERROR(Emit("Flatten", name + "/flatten", name, {x}, {flat}, fa).status());
      ASSIGN_OR_RETURN(Value * sm, NewValue(name + "/softmax"));
      Attributes sa;
      sa.Set("axis", int64_t{1});
      RETURN_IF_ERROR(Emit("Softmax", name, name, {flat}, {sm}, sa).status());
      ASSIGN_OR_RETURN(Value * shape, NewValue(name + "/shape"));
      RETURN_IF_ERROR(Emit("Shape", name + "/shape", name, {x}, {shape}, {}).status());
      RETURN_IF_ERROR(Emit("Reshape", name + "/reshape", name, {sm, shape}, outs, {}).status());
      return absl::OkStatus();
    }
  }
  return Emit(ir_op, name, name, std::move(ins), std::move(outs), std::move(attrs)).status();
}

absl::StatusOr<std::unique_ptr<Graph>> Importer::Run() {
  g_->source = source_;
  if (!model_.has_graph()) return Fail("model has no graph");
  const auto& graph = model_.graph();
  g_->name = graph.name();
  RETURN_IF_ERROR(ReadOpsets());
  g_->opset = opset_;
  if (graph.node_size() > kMaxNodes) {
    return Fail(absl::StrCat("the graph has ", graph.node_size(), " nodes, over the limit of ", kMaxNodes));
  }
  // Node names: ONNX allows empty or repeated names; gcomp needs unique ones for messages.
  std::vector<std::string> names;
  std::set<std::string> used;
  for (int i = 0; i < graph.node_size(); ++i) {
    std::string base = graph.node(i).name().empty() ? absl::StrCat(graph.node(i).op_type(), "_", i) : graph.node(i).name();
    std::string nm = base;
    for (int k = 1; used.count(nm); ++k) nm = absl::StrCat(base, "_", k);
    used.insert(nm);
    names.push_back(nm);
  }
  RETURN_IF_ERROR(CheckSupported(names));
  RETURN_IF_ERROR(AddInputs());
  ASSIGN_OR_RETURN(std::vector<size_t> order, TopologicalOrder(names));
  for (const auto& node : graph.node()) model_names_.insert(node.output().begin(), node.output().end());
  for (size_t i : order) RETURN_IF_ERROR(ConvertNode(graph.node(static_cast<int>(i)), names[i]));
  if (graph.output_size() == 0) return Fail("the graph has no outputs");
  std::set<std::string> output_names;
  for (const auto& out : graph.output()) {
    Value* v = g_->FindValue(out.name());
    if (!v) return Fail(absl::StrCat("graph output '", out.name(), "' is not produced by any node, initializer or input"));
    if (!output_names.insert(out.name()).second) {
      return Fail(absl::StrCat("graph output '", out.name(), "' is listed twice"));
    }
    g_->AddOutput(v);
  }
  RETURN_IF_ERROR(InferShapes(*g_));
  for (const auto& out : graph.output()) {
    Value* v = g_->FindValue(out.name());
    if (out.type().has_tensor_type() && out.type().tensor_type().elem_type() != 0) {
      auto declared = DTypeFromOnnx(out.type().tensor_type().elem_type());
      if (!declared || *declared != v->dtype) {
        return Fail(absl::StrCat("graph output '", out.name(), "' is declared ",
                                 OnnxTypeName(out.type().tensor_type().elem_type()), ", inferred ", DTypeName(v->dtype)));
      }
    }
  }
  return std::move(g_);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Graph>> ImportOnnxBytes(const std::string& bytes, const std::string& source,
                                                       const std::string& base_dir) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {  // protobuf's CodedInputStream takes an int size
    return absl::InvalidArgumentError(absl::StrCat(source, ": model has ", bytes.size(),
                                                   " bytes, over protobuf's 2 GiB limit (use external data)"));
  }
  if (bytes.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": file is empty, expected an ONNX model (ModelProto)"));
  }
  onnx::ModelProto model;
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                static_cast<int>(bytes.size()));
  stream.SetTotalBytesLimit(INT_MAX);
  if (!model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": not a valid ONNX model (protobuf parse failed; truncated or not a model file)"));
  }
  if (!model.has_graph() && model.opset_import_size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": not an ONNX model (no graph and no opset import)"));
  }
  Importer importer(model, source, base_dir);
  return importer.Run();
}

absl::StatusOr<std::unique_ptr<Graph>> ImportOnnxFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path, INT_MAX));
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  return ImportOnnxBytes(bytes, path, dir.empty() ? std::filesystem::current_path().string() : dir.string());
}

}  // namespace gcomp::frontend
