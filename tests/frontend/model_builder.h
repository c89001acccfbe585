// Builds small onnx::ModelProto graphs in C++ for frontend tests, and imports them.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "frontend/onnx_import.h"
#include "graph/graph.h"
#include "graph/printer.h"
#include "onnx/onnx_pb.h"

namespace gcomp::frontend::testing {

// ONNX TensorProto.DataType numbers used by the tests.
enum OnnxType : int32_t {
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kBfloat16 = 16,
};

// One dimension of a graph input: a value, a dim_param, or neither (Unnamed()).
struct DimSpec {
  DimSpec(int64_t v) : value(v) {}             // NOLINT(google-explicit-constructor)
  DimSpec(int v) : value(v) {}                 // NOLINT(google-explicit-constructor)
  DimSpec(const char* p) : param(p) {}         // NOLINT(google-explicit-constructor)
  DimSpec(const std::string& p) : param(p) {}  // NOLINT(google-explicit-constructor)
  static DimSpec Unnamed() { return DimSpec(std::string()); }
  std::optional<int64_t> value;
  std::string param;  // empty with no value: an unnamed dim
};

// ---- tensors ------------------------------------------------------------------------------

inline onnx::TensorProto RawTensor(const std::string& name, int32_t type, const std::vector<int64_t>& dims,
                                   const void* data, size_t bytes) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(std::string(static_cast<const char*>(data), bytes));
  return t;
}

inline onnx::TensorProto F32Tensor(const std::string& name, const std::vector<int64_t>& dims,
                                   const std::vector<float>& values) {
  return RawTensor(name, kFloat, dims, values.data(), values.size() * sizeof(float));
}

inline onnx::TensorProto I64Tensor(const std::string& name, const std::vector<int64_t>& dims,
                                   const std::vector<int64_t>& values) {
  return RawTensor(name, kInt64, dims, values.data(), values.size() * sizeof(int64_t));
}

inline onnx::TensorProto BoolTensor(const std::string& name, const std::vector<int64_t>& dims,
                                    const std::vector<uint8_t>& values) {
  return RawTensor(name, kBool, dims, values.data(), values.size());
}

// ---- attributes ---------------------------------------------------------------------------

inline onnx::AttributeProto* NewAttr(onnx::NodeProto* n, const std::string& name,
                                     onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}
inline void AttrInt(onnx::NodeProto* n, const std::string& name, int64_t v) {
  NewAttr(n, name, onnx::AttributeProto::INT)->set_i(v);
}
inline void AttrFloat(onnx::NodeProto* n, const std::string& name, float v) {
  NewAttr(n, name, onnx::AttributeProto::FLOAT)->set_f(v);
}
inline void AttrString(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  NewAttr(n, name, onnx::AttributeProto::STRING)->set_s(v);
}
inline void AttrInts(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = NewAttr(n, name, onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
inline void AttrFloats(onnx::NodeProto* n, const std::string& name, const std::vector<float>& v) {
  auto* a = NewAttr(n, name, onnx::AttributeProto::FLOATS);
  for (float x : v) a->add_floats(x);
}
inline void AttrTensor(onnx::NodeProto* n, const std::string& name, const onnx::TensorProto& t) {
  *NewAttr(n, name, onnx::AttributeProto::TENSOR)->mutable_t() = t;
}

// ---- models -------------------------------------------------------------------------------

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 17) {
    model_.set_ir_version(8);
    model_.set_producer_name("gcomp-frontend-test");
    model_.mutable_graph()->set_name("test");
    if (opset > 0) Opset(opset);
  }

  // Adds an opset import (the default domain unless `domain` is given).
  ModelBuilder& Opset(int64_t version, const std::string& domain = "") {
    auto* os = model_.add_opset_import();
    os->set_domain(domain);
    os->set_version(version);
    return *this;
  }

  ModelBuilder& Input(const std::string& name, int32_t elem_type, const std::vector<DimSpec>& dims) {
    auto* vi = graph()->add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    auto* shape = tt->mutable_shape();
    for (const DimSpec& d : dims) {
      auto* dim = shape->add_dim();
      if (d.value) {
        dim->set_dim_value(*d.value);
      } else if (!d.param.empty()) {
        dim->set_dim_param(d.param);
      }
    }
    return *this;
  }

  ModelBuilder& Initializer(const onnx::TensorProto& t) {
    *graph()->add_initializer() = t;
    return *this;
  }
  ModelBuilder& InitF32(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
    return Initializer(F32Tensor(name, dims, v));
  }
  ModelBuilder& InitI64(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
    return Initializer(I64Tensor(name, dims, v));
  }

  // Adds a node; set attributes on the returned proto with the Attr* helpers.
  onnx::NodeProto* Node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "",
                        const std::string& domain = "") {
    auto* n = graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    if (!domain.empty()) n->set_domain(domain);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return n;
  }

  // Declares a graph output; elem_type 0 leaves its type unset.
  ModelBuilder& Output(const std::string& name, int32_t elem_type = 0) {
    auto* vi = graph()->add_output();
    vi->set_name(name);
    if (elem_type != 0) vi->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
    return *this;
  }

  onnx::ModelProto& proto() { return model_; }
  onnx::GraphProto* graph() { return model_.mutable_graph(); }
  std::string Bytes() const { return model_.SerializeAsString(); }

 private:
  onnx::ModelProto model_;
};

inline absl::StatusOr<std::unique_ptr<Graph>> Import(const ModelBuilder& m, const std::string& base_dir = "") {
  return ImportOnnxBytes(m.Bytes(), "model.onnx", base_dir);
}

// ---- inspecting the imported graph --------------------------------------------------------

inline std::vector<Node*> NodesOf(const Graph& g, const std::string& op) {
  std::vector<Node*> out;
  for (Node* n : g.nodes()) {
    if (n->op == op) out.push_back(n);
  }
  return out;
}

inline std::vector<std::string> OpSequence(const Graph& g) {
  std::vector<std::string> out;
  for (const Node* n : g.nodes()) out.push_back(n->op);
  return out;
}

// PrintGraph without its first line (which names the opset).
// The import's error message, or "<imported>".
inline std::string ImportError(const ModelBuilder& m) {
  auto g = Import(m);
  if (g.ok()) return "<imported>";
  return std::string(g.status().message());
}

inline std::string PrintBody(const Graph& g) {
  std::string s = PrintGraph(g);
  size_t nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

inline std::string ShapeOf(const Graph& g, const std::string& value) {
  const Value* v = g.FindValue(value);
  return v ? ShapeToString(v->shape) : "<no value '" + value + "'>";
}

inline std::string SymValuesOf(const Graph& g, const std::string& value) {
  const Value* v = g.FindValue(value);
  if (!v || !v->sym_values) return "<none>";
  std::string out;
  for (const Dim& d : *v->sym_values) out += (out.empty() ? "" : ",") + d.ToString();
  return out;
}

}  // namespace gcomp::frontend::testing
