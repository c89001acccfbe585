#include "graph/printer.h"

#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "graph/op_def.h"

namespace gcomp {
namespace {

std::string TypeString(const Value& v) { return absl::StrCat(DTypeName(v.dtype), ShapeToString(v.shape)); }

std::string SymValuesString(const Value& v) {
  if (!v.sym_values) return "";
  return absl::StrCat(" = {", absl::StrJoin(*v.sym_values, ",", [](std::string* o, const Dim& d) { o->append(d.ToString()); }), "}");
}

std::string AttrsString(const Attributes& a) {
  if (a.all().empty()) return "";
  return absl::StrCat(" {", absl::StrJoin(a.all(), ", ", [](std::string* o, const auto& kv) {
                        absl::StrAppend(o, kv.first, "=", AttrValueToString(kv.second));
                      }),
                      "}");
}

std::string Operand(const Value* v) { return v ? absl::StrCat("%", v->name) : std::string("_"); }

std::vector<const Value*> UsedConstants(const Graph& g) {
  std::vector<const Value*> out;
  std::set<const Value*> seen;
  for (const Node* n : g.nodes()) {
    for (const Value* in : n->inputs) {
      if (in && in->is_constant() && seen.insert(in).second) out.push_back(in);
    }
  }
  for (const Value* o : g.outputs()) {
    if (o->is_constant() && seen.insert(o).second) out.push_back(o);
  }
  return out;
}

std::string JsonShape(const Shape& s) {
  return absl::StrCat("[", absl::StrJoin(s, ",", [](std::string* o, const Dim& d) {
                        if (d.IsConst()) {
                          absl::StrAppend(o, d.value());
                        } else {
                          o->append(JsonString(d.ToString()));
                        }
                      }),
                      "]");
}

std::string JsonFloat(float f) {
  if (std::isnan(f)) return "\"nan\"";
  if (std::isinf(f)) return f > 0 ? "\"inf\"" : "\"-inf\"";
  return absl::StrFormat("%.9g", f);
}

std::string JsonAttr(const AttrValue& v) {
  struct J {
    std::string operator()(int64_t x) const { return absl::StrCat(x); }
    std::string operator()(float x) const { return JsonFloat(x); }
    std::string operator()(const std::string& x) const { return JsonString(x); }
    std::string operator()(const std::vector<int64_t>& x) const { return absl::StrCat("[", absl::StrJoin(x, ","), "]"); }
    std::string operator()(const std::vector<float>& x) const {
      return absl::StrCat("[", absl::StrJoin(x, ",", [](std::string* o, float f) { o->append(JsonFloat(f)); }), "]");
    }
    std::string operator()(const std::vector<std::string>& x) const {
      return absl::StrCat("[", absl::StrJoin(x, ",", [](std::string* o, const std::string& s) { o->append(JsonString(s)); }), "]");
    }
    std::string operator()(const Tensor& t) const {
      return absl::StrCat("{\"dtype\":\"", DTypeName(t.dtype()), "\",\"dims\":[", absl::StrJoin(t.dims(), ","), "]}");
    }
  };
  return std::visit(J{}, v);
}

std::string JsonValue(const Value& v) {
  return absl::StrCat("{\"name\":", JsonString(v.name), ",\"dtype\":\"", DTypeName(v.dtype), "\",\"shape\":", JsonShape(v.shape), "}");
}

std::string DotEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

int64_t ParamCount(const Graph& g) {
  int64_t n = 0;
  for (const Value* c : UsedConstants(g)) n += c->constant->numel();
  return n;
}

}  // namespace

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string PrintGraph(const Graph& g) {
  std::string out = absl::StrCat("graph ", JsonString(g.name), " opset ", g.opset, "\n");
  for (const Value* v : g.inputs()) absl::StrAppend(&out, "  input %", v->name, ": ", TypeString(*v), "\n");
  for (const Value* c : UsedConstants(g)) {
    absl::StrAppend(&out, "  const %", c->name, ": ", TypeString(*c));
    if (c->constant->numel() <= 8) absl::StrAppend(&out, " ", c->constant->DebugString().substr(TypeString(*c).size()));
    out += "\n";
  }
  for (const Node* n : g.nodes()) {
    std::vector<std::string> outs;
    for (const Value* o : n->outputs) {
      outs.push_back(o ? absl::StrCat("%", o->name, ": ", TypeString(*o), SymValuesString(*o)) : "_");
    }
    absl::StrAppend(&out, "  ", absl::StrJoin(outs, ", "), " = ", n->op, "[", JsonString(n->name), "](",
                    absl::StrJoin(n->inputs, ", ", [](std::string* o, const Value* v) { o->append(Operand(v)); }), ")",
                    AttrsString(n->attrs));
    if (!(n->origin.size() == 1 && n->origin[0] == n->name)) {
      absl::StrAppend(&out, "  # origin: ", absl::StrJoin(n->origin, ", "));
    }
    if (n->precision != DType::kF32) absl::StrAppend(&out, "  # precision ", DTypeName(n->precision));
    out += "\n";
    for (const Decision& d : n->decisions) {
      absl::StrAppend(&out, "    # ", d.kind, " = ", d.choice, ": ", d.reason, "\n");
    }
  }
  for (const Value* v : g.outputs()) absl::StrAppend(&out, "  output %", v->name, ": ", TypeString(*v), "\n");
  return out;
}

std::string PrintSummary(const Graph& g) {
  std::map<std::string, int> hist;
  for (const Node* n : g.nodes()) ++hist[n->op];
  std::string out = absl::StrCat("graph ", JsonString(g.name), " (", g.source, "), opset ", g.opset, "\n");
  for (const Value* v : g.inputs()) absl::StrAppend(&out, "  input  ", v->name, ": ", TypeString(*v), "\n");
  for (const Value* v : g.outputs()) absl::StrAppend(&out, "  output ", v->name, ": ", TypeString(*v), "\n");
  absl::StrAppend(&out, "  nodes: ", g.num_nodes(), ", constants: ", UsedConstants(g).size(),
                  ", parameters: ", ParamCount(g), "\n");
  if (!g.symbols.empty()) absl::StrAppend(&out, "  symbols: ", absl::StrJoin(g.symbols, ", "), "\n");
  out += "  ops:\n";
  for (const auto& [op, count] : hist) absl::StrAppend(&out, absl::StrFormat("    %-20s %5d\n", op, count));
  return out;
}

std::string GraphToDot(const Graph& g) {
  std::string out = absl::StrCat("digraph ", JsonString(g.name.empty() ? "graph" : g.name), " {\n  rankdir=TB;\n",
                                 "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#eef3fb\", fontname=\"Helvetica\"];\n");
  std::map<const Node*, int> id;
  for (const Node* n : g.nodes()) id[n] = static_cast<int>(id.size());
  for (const Value* v : g.inputs()) {
    absl::StrAppend(&out, "  ", JsonString("in:" + v->name), " [shape=ellipse, fillcolor=\"#e6f4e6\", label=\"",
                    DotEscape(v->name), "\\n", DotEscape(TypeString(*v)), "\"];\n");
  }
  for (const Node* n : g.nodes()) {
    absl::StrAppend(&out, "  n", id[n], " [label=\"", DotEscape(n->op), "\\n", DotEscape(n->name), "\"];\n");
  }
  for (const Node* n : g.nodes()) {
    for (const Value* in : n->inputs) {
      if (!in || in->is_constant()) continue;
      std::string from = in->producer ? absl::StrCat("n", id[in->producer]) : JsonString("in:" + in->name);
      absl::StrAppend(&out, "  ", from, " -> n", id[n], " [label=\"", DotEscape(TypeString(*in)), "\"];\n");
    }
  }
  for (const Value* v : g.outputs()) {
    absl::StrAppend(&out, "  ", JsonString("out:" + v->name), " [shape=ellipse, fillcolor=\"#fbeee6\", label=\"",
                    DotEscape(v->name), "\\n", DotEscape(TypeString(*v)), "\"];\n");
    if (v->producer) absl::StrAppend(&out, "  n", id[v->producer], " -> ", JsonString("out:" + v->name), ";\n");
  }
  return out + "}\n";
}

std::string GraphToJson(const Graph& g) {
  std::string out = absl::StrCat("{\"schema_version\":", kJsonSchemaVersion, ",\"graph\":{\"name\":", JsonString(g.name),
                                 ",\"source\":", JsonString(g.source), ",\"opset\":", g.opset, "},\n");
  auto list = [](const std::vector<Value*>& vs) {
    return absl::StrJoin(vs, ",", [](std::string* o, const Value* v) { o->append(JsonValue(*v)); });
  };
  absl::StrAppend(&out, "\"inputs\":[", list(g.inputs()), "],\n\"outputs\":[", list(g.outputs()), "],\n\"constants\":[");
  auto consts = UsedConstants(g);
  absl::StrAppend(&out, absl::StrJoin(consts, ",", [](std::string* o, const Value* v) { o->append(JsonValue(*v)); }), "],\n\"nodes\":[\n");
  std::vector<std::string> nodes, edges;
  for (const Node* n : g.nodes()) {
    std::string attrs = absl::StrJoin(n->attrs.all(), ",", [](std::string* o, const auto& kv) {
      absl::StrAppend(o, JsonString(kv.first), ":", JsonAttr(kv.second));
    });
    std::string decisions = absl::StrJoin(n->decisions, ",", [](std::string* o, const Decision& d) {
      absl::StrAppend(o, "{\"kind\":", JsonString(d.kind), ",\"choice\":", JsonString(d.choice), ",\"reason\":", JsonString(d.reason), "}");
    });
    std::vector<std::string> outs;
    for (const Value* v : n->outputs) outs.push_back(v ? JsonValue(*v) : "null");
    nodes.push_back(absl::StrCat(
        "{\"name\":", JsonString(n->name), ",\"op\":", JsonString(n->op), ",\"inputs\":[",
        absl::StrJoin(n->inputs, ",", [](std::string* o, const Value* v) { o->append(v ? JsonString(v->name) : "null"); }),
        "],\"outputs\":[", absl::StrJoin(outs, ","), "],\"attributes\":{", attrs, "},\"origin\":[",
        absl::StrJoin(n->origin, ",", [](std::string* o, const std::string& s) { o->append(JsonString(s)); }),
        "],\"precision\":\"", DTypeName(n->precision), "\",\"decisions\":[", decisions, "]}"));
    for (const Value* in : n->inputs) {
      if (!in || in->is_constant()) continue;
      edges.push_back(absl::StrCat("{\"from\":", in->producer ? JsonString(in->producer->name) : "null",
                                   ",\"to\":", JsonString(n->name), ",\"value\":", JsonString(in->name), "}"));
    }
  }
  absl::StrAppend(&out, absl::StrJoin(nodes, ",\n"), "\n],\n\"edges\":[\n", absl::StrJoin(edges, ",\n"), "\n]}\n");
  return out;
}

absl::Status VerifyGraph(const Graph& g) {
  auto fail = [&](const std::string& what) {
    return absl::InternalError(absl::StrCat(g.source, ": IR verification failed: ", what));
  };
  std::set<const Value*> available;
  std::set<std::string> node_names;
  for (const Value* v : g.inputs()) available.insert(v);
  for (const Value* v : g.values()) {
    if (v->is_constant()) available.insert(v);
  }
  for (const Node* n : g.nodes()) {
    if (!n->def) return fail(absl::StrCat(n->Describe(), " has no op definition"));
    if (!node_names.insert(n->name).second) return fail(absl::StrCat("node name '", n->name, "' is used twice"));
    if (absl::Status s = CheckNodeAgainstDef(*n, *n->def); !s.ok()) return fail(absl::StrCat(n->Describe(), ": ", s.message()));
    for (const Value* in : n->inputs) {
      if (!in) continue;
      if (!available.count(in)) return fail(absl::StrCat(n->Describe(), " uses '", in->name, "' before it is defined"));
      if (std::find(in->users.begin(), in->users.end(), n) == in->users.end()) {
        return fail(absl::StrCat("'", in->name, "' does not list ", n->Describe(), " as a user"));
      }
    }
    for (const Value* out : n->outputs) {
      if (!out) continue;
      if (out->producer != n) return fail(absl::StrCat("'", out->name, "' does not name ", n->Describe(), " as producer"));
      available.insert(out);
    }
  }
  for (const Value* v : g.outputs()) {
    if (!available.count(v)) return fail(absl::StrCat("graph output '", v->name, "' is never produced"));
  }
  return absl::OkStatus();
}

}  // namespace gcomp
