// GraphToHtml: one self-contained page (inline SVG, CSS and JavaScript; nothing is fetched) that
// draws the graph in a layered top-to-bottom layout computed here, so the same graph always gives
// the same bytes:
//   1. layers: longest path from the graph inputs; a node without graph-value inputs sits just
//      above its first user; every edge spanning several layers gets one dummy vertex per layer;
//   2. order within a layer: barycenter sweeps (down, up), keeping the order with fewest crossings;
//   3. x: one longest path (the spine) stays on x = 0; every other vertex moves towards the mean x
//      of its real neighbours, then the layer is made non-overlapping again (weighted isotonic
//      regression with minimum separations; dummies give way), a few sweeps;
//   4. each long edge's dummies are lined up on one x where that fits, so a residual connection
//      runs as one straight line beside the chain.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "graph/printer.h"

namespace gcomp {
namespace {

struct KindInfo {
  const char* name;
  const char* fill;
};
// Index = node kind; the order is the legend's.
constexpr KindInfo kKinds[] = {
    {"conv", "#c5dbfb"},        {"gemm", "#d9ccf5"},          {"attention", "#f8c9c4"}, {"norm", "#c9ecd2"},
    {"elementwise", "#fbe8b0"}, {"data movement", "#e3e6ea"}, {"other", "#f3e1f0"},
};
constexpr int kInputKind = 7;  // graph inputs and outputs
constexpr const char* kIoFill = "#ffffff";

int KindOf(const std::string& op) {
  auto in = [&](std::initializer_list<const char*> ops) {
    for (const char* o : ops) {
      if (op == o) return true;
    }
    return false;
  };
  if (in({"Conv", "FusedConv", "ConvTranspose", "Im2Col"})) return 0;
  if (in({"MatMul", "Gemm", "FusedGemm"})) return 1;
  if (in({"Attention", "MultiHeadAttention"})) return 2;
  if (in({"LayerNorm", "LayerNormalization", "BatchNormalization", "InstanceNormalization", "GroupNormalization"})) {
    return 3;
  }
  if (in({"Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Reciprocal", "Neg", "Exp", "Erf", "Relu", "Gelu", "Sigmoid",
          "Tanh", "Clip", "Softmax", "Where", "Equal", "Cast"})) {
    return 4;
  }
  if (in({"Reshape", "Transpose", "Slice", "Concat", "Gather", "Expand", "Split", "Squeeze", "Unsqueeze", "Flatten",
          "Shape", "Pad", "Identity", "Dropout", "ConstantOfShape", "Range"})) {
    return 5;
  }
  return 6;
}

struct PrecisionInfo {
  const char* name;
  const char* color;
};
constexpr PrecisionInfo kPrecisions[] = {
    {"f32", "#5c6773"}, {"f16", "#e8590c"}, {"bf16", "#ae3ec9"}, {"f8e4m3", "#e03131"}, {"other", "#1971c2"}};

int PrecisionIndex(DType p) {
  switch (p) {
    case DType::kF32:
      return 0;
    case DType::kF16:
      return 1;
    case DType::kBF16:
      return 2;
    case DType::kF8E4M3:
      return 3;
    default:
      return 4;
  }
}

std::string Esc(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A JSON string that is also safe inside <script> (no "</script>", no "<!--").
std::string JsStr(const std::string& s) {
  std::string j = JsonString(s), out;
  out.reserve(j.size());
  for (char c : j) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

std::string TypeOf(const Value& v) { return absl::StrCat(DTypeName(v.dtype), ShapeToString(v.shape)); }

// Fits `s` into `max` characters by dropping leading path components, then cutting the front.
std::string ShortName(const std::string& s, size_t max) {
  std::string t = s;
  while (t.size() > max) {
    size_t slash = t.find('/', 1);
    if (slash == std::string::npos || slash + 1 >= t.size()) break;
    t = t.substr(slash + 1);
  }
  if (t.size() > max) t = absl::StrCat("\xE2\x80\xA6", t.substr(t.size() - (max - 1)));
  return t;
}

std::string Cut(const std::string& s, size_t max) {
  return s.size() <= max ? s : absl::StrCat(s.substr(0, max - 1), "\xE2\x80\xA6");
}

std::string F(double x) { return absl::StrFormat("%.1f", x); }

// ---- layout ----

constexpr double kNodeW = 210, kNodeH = 50, kIoW = 170, kIoH = 34, kDummyW = 8, kGapX = 22, kLayerH = 84;

enum class VKind { kNode, kInput, kOutput, kDummy };

struct Vertex {
  VKind kind = VKind::kNode;
  int ref = -1;  // index into nodes / inputs / outputs
  int layer = 0;
  double w = 0, h = 0, x = 0;
  std::vector<int> preds, succs;
};

Vertex MakeVertex(VKind kind, int ref, int layer, double w, double h) {
  Vertex x;
  x.kind = kind;
  x.ref = ref;
  x.layer = layer;
  x.w = w;
  x.h = h;
  return x;
}

struct LayoutEdge {
  std::vector<int> path;  // source, dummies..., target
  std::string value;      // the value it carries
};

struct Layout {
  std::vector<Vertex> v;
  std::vector<LayoutEdge> edges;
  std::vector<std::vector<int>> layers;
  double width = 0, height = 0;
};

int64_t Crossings(const Layout& L, const std::vector<int>& pos, int layer) {
  std::vector<std::pair<int, int>> e;
  for (int a : L.layers[layer]) {
    for (int b : L.v[a].succs) e.push_back({pos[a], pos[b]});
  }
  std::sort(e.begin(), e.end());
  // Inversions of the lower endpoints (Fenwick tree).
  size_t n = L.layers[layer + 1].size();
  std::vector<int> tree(n + 1, 0);
  int64_t count = 0, seen = 0;
  for (const auto& [a, b] : e) {
    int64_t le = 0;
    for (int i = b + 1; i > 0; i -= i & -i) le += tree[i];
    count += seen - le;
    for (int i = b + 1; i <= static_cast<int>(n); i += i & -i) ++tree[i];
    ++seen;
  }
  return count;
}

// Places xs[i] as close as possible (weighted least squares) to want[i], keeping the order and the
// minimum gaps (pool-adjacent-violators on want[i] - offset[i]).
void PlaceInOrder(const std::vector<double>& want, const std::vector<double>& weight,
                  const std::vector<double>& min_gap, std::vector<double>& xs) {
  size_t n = want.size();
  std::vector<double> offset(n, 0);
  for (size_t i = 1; i < n; ++i) offset[i] = offset[i - 1] + min_gap[i];
  struct Block {
    double sum, weight;
    size_t end;
    double mean() const { return sum / weight; }
  };
  std::vector<Block> blocks;
  for (size_t i = 0; i < n; ++i) {
    blocks.push_back({(want[i] - offset[i]) * weight[i], weight[i], i + 1});
    while (blocks.size() > 1 && blocks[blocks.size() - 2].mean() > blocks.back().mean()) {
      Block b = blocks.back();
      blocks.pop_back();
      blocks.back().sum += b.sum;
      blocks.back().weight += b.weight;
      blocks.back().end = b.end;
    }
  }
  xs.assign(n, 0);
  size_t i = 0;
  for (const Block& b : blocks) {
    for (; i < b.end; ++i) xs[i] = b.mean() + offset[i];
  }
}

Layout ComputeLayout(const Graph& g, const std::vector<const Node*>& nodes, const std::vector<const Value*>& inputs) {
  Layout L;
  std::map<const Node*, int> node_vertex;
  std::map<const Value*, int> input_vertex;
  for (size_t i = 0; i < inputs.size(); ++i) {
    input_vertex[inputs[i]] = static_cast<int>(L.v.size());
    L.v.push_back(MakeVertex(VKind::kInput, static_cast<int>(i), 0, kIoW, kIoH));
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    node_vertex[nodes[i]] = static_cast<int>(L.v.size());
    L.v.push_back(MakeVertex(VKind::kNode, static_cast<int>(i), 0, kNodeW, kNodeH));
  }
  std::vector<std::pair<std::pair<int, int>, std::string>> raw;  // (from, to), value
  auto source_of = [&](const Value* in) -> int {
    if (!in || in->is_constant()) return -1;
    if (in->producer) return node_vertex.count(in->producer) ? node_vertex[in->producer] : -1;
    return input_vertex.count(in) ? input_vertex[in] : -1;
  };
  for (const Node* n : nodes) {
    for (const Value* in : n->inputs) {
      int from = source_of(in);
      if (from >= 0) raw.push_back({{from, node_vertex[n]}, in->name});
    }
  }
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    int from = source_of(g.outputs()[i]);
    int to = static_cast<int>(L.v.size());
    L.v.push_back(MakeVertex(VKind::kOutput, static_cast<int>(i), 0, kIoW, kIoH));
    if (from >= 0) raw.push_back({{from, to}, g.outputs()[i]->name});
  }
  // One layout edge per (from, to) pair; the value names of parallel edges are joined.
  std::vector<std::pair<std::pair<int, int>, std::string>> uniq;
  std::map<std::pair<int, int>, size_t> seen;
  for (auto& r : raw) {
    auto [it, fresh] = seen.insert({r.first, uniq.size()});
    if (fresh) {
      uniq.push_back(r);
    } else if (uniq[it->second].second != r.second) {
      absl::StrAppend(&uniq[it->second].second, ", ", r.second);
    }
  }
  size_t real = L.v.size();
  for (const auto& [e, name] : uniq) {
    L.v[e.first].succs.push_back(e.second);
    L.v[e.second].preds.push_back(e.first);
  }
  // Vertices are in topological order (inputs, nodes, outputs): longest path in one pass.
  for (size_t i = 0; i < real; ++i) {
    for (int p : L.v[i].preds) L.v[i].layer = std::max(L.v[i].layer, L.v[p].layer + 1);
  }
  for (size_t i = real; i-- > 0;) {
    Vertex& x = L.v[i];
    if (!x.preds.empty() || x.succs.empty()) continue;
    int first_use = INT32_MAX;
    for (int s : x.succs) first_use = std::min(first_use, L.v[s].layer);
    x.layer = std::max(0, first_use - 1);
  }
  for (size_t i = 0; i < real; ++i) {
    L.v[i].preds.clear();
    L.v[i].succs.clear();
  }
  int num_layers = 0;
  for (size_t i = 0; i < real; ++i) num_layers = std::max(num_layers, L.v[i].layer + 1);
  L.layers.assign(num_layers, {});
  for (size_t i = 0; i < real; ++i) L.layers[L.v[i].layer].push_back(static_cast<int>(i));
  for (const auto& [e, name] : uniq) {
    LayoutEdge le{{e.first}, name};
    int prev = e.first;
    for (int l = L.v[e.first].layer + 1; l < L.v[e.second].layer; ++l) {
      int d = static_cast<int>(L.v.size());
      L.v.push_back(MakeVertex(VKind::kDummy, -1, l, kDummyW, 0));
      L.layers[l].push_back(d);
      L.v[prev].succs.push_back(d);
      L.v[d].preds.push_back(prev);
      le.path.push_back(d);
      prev = d;
    }
    L.v[prev].succs.push_back(e.second);
    L.v[e.second].preds.push_back(prev);
    le.path.push_back(e.second);
    L.edges.push_back(std::move(le));
  }

  // Order within layers.
  std::vector<int> pos(L.v.size(), 0);
  auto index_positions = [&]() {
    for (const auto& layer : L.layers) {
      for (size_t i = 0; i < layer.size(); ++i) pos[layer[i]] = static_cast<int>(i);
    }
  };
  auto total_crossings = [&]() {
    int64_t c = 0;
    for (int l = 0; l + 1 < num_layers; ++l) c += Crossings(L, pos, l);
    return c;
  };
  index_positions();
  auto best = L.layers;
  int64_t best_crossings = total_crossings();
  auto sweep_layer = [&](int l, bool use_preds) {
    std::vector<std::pair<double, int>> keyed;
    for (int x : L.layers[l]) {
      const auto& nb = use_preds ? L.v[x].preds : L.v[x].succs;
      double bary = pos[x];
      if (!nb.empty()) {
        double sum = 0;
        for (int y : nb) sum += pos[y];
        bary =
            sum / nb.size() *
            (static_cast<double>(L.layers[l].size()) / std::max<size_t>(1, L.layers[l + (use_preds ? -1 : 1)].size()));
      }
      keyed.push_back({bary, x});
    }
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < keyed.size(); ++i) {
      L.layers[l][i] = keyed[i].second;
      pos[keyed[i].second] = static_cast<int>(i);
    }
  };
  for (int iter = 0; iter < 6 && best_crossings > 0; ++iter) {
    for (int l = 1; l < num_layers; ++l) sweep_layer(l, true);
    for (int l = num_layers - 2; l >= 0; --l) sweep_layer(l, false);
    int64_t c = total_crossings();
    if (c < best_crossings) {
      best_crossings = c;
      best = L.layers;
    }
  }
  L.layers = best;
  index_positions();

  // x coordinates.
  for (const auto& layer : L.layers) {
    double x = 0;
    for (size_t i = 0; i < layer.size(); ++i) {
      if (i > 0) x += (L.v[layer[i - 1]].w + L.v[layer[i]].w) / 2 + kGapX;
      L.v[layer[i]].x = x;
    }
    double mid = x / 2;
    for (int i : layer) L.v[i].x -= mid;
  }
  // The spine: one longest path, back from the last layer through the middle real predecessor;
  // it stays on x = 0, so a long chain with side branches does not drift sideways.
  std::vector<char> spine(L.v.size(), 0);
  if (num_layers > 0 && !L.layers.back().empty()) {
    int cur = L.layers.back()[L.layers.back().size() / 2];
    while (cur >= 0) {
      spine[cur] = 1;
      std::vector<int> real_preds, any_preds = L.v[cur].preds;
      for (int p : any_preds) {
        if (L.v[p].kind != VKind::kDummy) real_preds.push_back(p);
      }
      const auto& from = real_preds.empty() ? any_preds : real_preds;
      if (from.empty()) break;
      std::vector<int> sorted = from;
      std::sort(sorted.begin(), sorted.end(), [&](int a, int b) { return pos[a] < pos[b]; });
      cur = sorted[(sorted.size() - 1) / 2];
    }
  }
  // Real vertices follow real neighbours (a chain stays straight); dummies follow anything and
  // give way to real vertices.
  auto place_layer = [&](int l, int dir) {  // dir -1: towards preds, +1: succs, 0: both
    const auto& layer = L.layers[l];
    std::vector<double> want(layer.size()), weight(layer.size()), gap(layer.size(), 0), xs;
    for (size_t i = 0; i < layer.size(); ++i) {
      const Vertex& x = L.v[layer[i]];
      bool dummy = x.kind == VKind::kDummy;
      double sum = 0;
      int n = 0;
      for (int pass = 0; pass < 2 && n == 0; ++pass) {
        bool take_dummies = dummy || pass == 1;
        auto add = [&](int y) {
          if (take_dummies || L.v[y].kind != VKind::kDummy) sum += L.v[y].x, ++n;
        };
        if (dir <= 0) std::for_each(x.preds.begin(), x.preds.end(), add);
        if (dir >= 0) std::for_each(x.succs.begin(), x.succs.end(), add);
      }
      want[i] = spine[layer[i]] ? 0.0 : n ? sum / n : x.x;
      weight[i] = spine[layer[i]] ? 1e4 : dummy ? 1e-3 : 1.0;
      if (i > 0) gap[i] = (L.v[layer[i - 1]].w + x.w) / 2 + kGapX;
    }
    PlaceInOrder(want, weight, gap, xs);
    for (size_t i = 0; i < layer.size(); ++i) L.v[layer[i]].x = xs[i];
  };
  for (int iter = 0; iter < 8; ++iter) {
    if (iter % 2 == 0) {
      for (int l = 1; l < num_layers; ++l) place_layer(l, -1);
    } else {
      for (int l = num_layers - 2; l >= 0; --l) place_layer(l, 1);
    }
  }
  for (int l = 0; l < num_layers; ++l) place_layer(l, 0);

  // Straighten each long edge: move all its dummies to the outermost x among them where that
  // keeps every layer's order and gaps (a residual edge then runs as one line beside the chain).
  std::vector<int> where(L.v.size(), 0);
  for (const auto& layer : L.layers) {
    for (size_t i = 0; i < layer.size(); ++i) where[layer[i]] = static_cast<int>(i);
  }
  auto fits = [&](const std::vector<int>& dummies, double x) {
    for (int d : dummies) {
      const auto& layer = L.layers[L.v[d].layer];
      int i = where[d];
      if (i > 0 && L.v[layer[i - 1]].x + L.v[layer[i - 1]].w / 2 + kGapX + kDummyW / 2 > x + 0.01) return false;
      if (i + 1 < static_cast<int>(layer.size()) &&
          L.v[layer[i + 1]].x - L.v[layer[i + 1]].w / 2 - kGapX - kDummyW / 2 < x - 0.01) {
        return false;
      }
    }
    return true;
  };
  for (const LayoutEdge& e : L.edges) {
    if (e.path.size() < 3) continue;
    std::vector<int> dummies(e.path.begin() + 1, e.path.end() - 1);
    double lo = L.v[dummies[0]].x, hi = lo;
    for (int d : dummies) lo = std::min(lo, L.v[d].x), hi = std::max(hi, L.v[d].x);
    double mid = (L.v[e.path.front()].x + L.v[e.path.back()].x) / 2;
    // Prefer the side away from the edge's own endpoints.
    double first = std::abs(hi - mid) >= std::abs(lo - mid) ? hi : lo, second = first == hi ? lo : hi;
    for (double x : {first, second}) {
      if (fits(dummies, x)) {
        for (int d : dummies) L.v[d].x = x;
        break;
      }
    }
  }

  double min_x = 0, max_x = 0;
  bool first = true;
  for (const Vertex& x : L.v) {
    if (first || x.x - x.w / 2 < min_x) min_x = x.x - x.w / 2;
    if (first || x.x + x.w / 2 > max_x) max_x = x.x + x.w / 2;
    first = false;
  }
  constexpr double kMargin = 30;
  for (Vertex& x : L.v) x.x = std::round((x.x - min_x + kMargin) * 10) / 10;
  L.width = max_x - min_x + 2 * kMargin;
  L.height = num_layers * kLayerH + 2 * kMargin;
  return L;
}

double Y(const Vertex& x) { return 30 + x.layer * kLayerH + kNodeH / 2; }

std::string EdgePath(const Layout& L, const LayoutEdge& e) {
  // Points: bottom of the source, top and bottom of each dummy, top of the target.
  std::vector<std::pair<double, double>> pts;
  const Vertex& s = L.v[e.path.front()];
  pts.push_back({s.x, Y(s) + s.h / 2});
  for (size_t i = 1; i + 1 < e.path.size(); ++i) {
    const Vertex& d = L.v[e.path[i]];
    pts.push_back({d.x, Y(d) - kNodeH / 2});
    pts.push_back({d.x, Y(d) + kNodeH / 2});
  }
  const Vertex& t = L.v[e.path.back()];
  pts.push_back({t.x, Y(t) - t.h / 2 - 3});
  std::string d = absl::StrCat("M", F(pts[0].first), ",", F(pts[0].second));
  for (size_t i = 1; i < pts.size(); ++i) {
    const auto& [x0, y0] = pts[i - 1];
    const auto& [x1, y1] = pts[i];
    if (x0 == x1) {
      absl::StrAppend(&d, "V", F(y1));
    } else {
      double my = (y0 + y1) / 2;
      absl::StrAppend(&d, "C", F(x0), ",", F(my), " ", F(x1), ",", F(my), " ", F(x1), ",", F(y1));
    }
  }
  return d;
}

constexpr const char* kStyle = R"(
*{box-sizing:border-box}
html,body{margin:0;height:100%;font:13px/1.35 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#1f2328}
#top{display:flex;flex-wrap:wrap;align-items:center;gap:6px 14px;padding:6px 10px;border-bottom:1px solid #d0d7de;background:#f6f8fa}
#top h1{font-size:15px;margin:0;white-space:nowrap}
#top .meta{color:#57606a}
#search{width:220px;padding:3px 6px;border:1px solid #afb8c1;border-radius:4px;font:inherit}
#hits{color:#57606a;min-width:60px}
button{font:inherit;padding:2px 8px;border:1px solid #afb8c1;border-radius:4px;background:#fff;cursor:pointer}
#legend{display:flex;flex-wrap:wrap;gap:4px 10px;align-items:center;font-size:12px}
#legend .sw{display:inline-block;width:12px;height:12px;border:1px solid #8c959f;border-radius:3px;vertical-align:-2px;margin-right:3px}
#legend .pb{display:inline-block;width:14px;height:10px;border:3px solid;border-radius:3px;vertical-align:-1px;margin-right:3px;background:#fff}
#main{display:flex;height:calc(100% - 42px)}
#canvas{flex:1;overflow:hidden;cursor:grab;background:#fcfcfd;position:relative}
#canvas.drag{cursor:grabbing}
svg#graph{width:100%;height:100%;display:block;user-select:none}
#panel{width:380px;overflow:auto;border-left:1px solid #d0d7de;padding:8px 12px;background:#fff;font-size:12.5px}
#panel h2{font-size:14px;margin:2px 0 6px;word-break:break-all}
#panel h3{font-size:12px;margin:10px 0 3px;color:#57606a;text-transform:uppercase;letter-spacing:.04em}
#panel ul{margin:0;padding-left:16px}
#panel li{word-break:break-all;margin:1px 0}
#panel .k{color:#57606a}
#panel .dec li{word-break:normal;overflow-wrap:anywhere}
#panel .dec b{color:#0550ae}
#panel .hint{color:#57606a}
.e{fill:none;stroke:#8c959f;stroke-width:1.3;marker-end:url(#arrow)}
.e.hl{stroke:#0969da;stroke-width:2.4}
.n{cursor:pointer}
.n rect.box{stroke-width:2}
.n text{font-size:10.5px;fill:#1f2328;pointer-events:none}
.n text.op{font-size:12.5px;font-weight:600}
.n text.ty{fill:#57606a;font-size:10px}
.n text.badge{font-size:9.5px;font-weight:600}
.n.hit rect.box{stroke:#bf8700!important;stroke-width:4}
.n.sel rect.box{stroke:#0969da!important;stroke-width:4}
.n:hover rect.box{filter:brightness(.95)}
)";

constexpr const char* kScript = R"(
(function(){
const svg=document.getElementById('graph'),vp=document.getElementById('vp'),canvas=document.getElementById('canvas');
const panel=document.getElementById('panel'),search=document.getElementById('search'),hits=document.getElementById('hits');
const els=Array.from(vp.querySelectorAll('.n')),edges=Array.from(vp.querySelectorAll('.e'));
let s=1,tx=0,ty=0,pinned=-1,matches=[],mi=-1;
function apply(){vp.setAttribute('transform','translate('+tx+','+ty+') scale('+s+')');}
function esc(t){return String(t).replace(/[&<>"]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));}
function list(items,f){return items.length?'<ul>'+items.map(f).join('')+'</ul>':'<div class="hint">none</div>';}
function show(i){
  if(i<0){panel.innerHTML=HINT;return;}
  const n=G[i];let h='<h2>'+esc(n.name)+'</h2><div><span class="k">op</span> <b>'+esc(n.op)+'</b> &nbsp;<span class="k">kind</span> '+esc(KINDS[n.kind])+
    (n.prec?' &nbsp;<span class="k">precision</span> '+esc(n.prec):'')+'</div>';
  if(n.origin)h+='<h3>origin (ONNX nodes)</h3>'+list(n.origin,o=>'<li>'+esc(o)+'</li>');
  if(n.attrs)h+='<h3>attributes</h3>'+list(n.attrs,a=>'<li><span class="k">'+esc(a[0])+'</span> = '+esc(a[1])+'</li>');
  if(n.ins)h+='<h3>inputs</h3>'+list(n.ins,a=>'<li>'+esc(a[0])+' <span class="k">'+esc(a[1])+'</span></li>');
  if(n.outs)h+='<h3>outputs</h3>'+list(n.outs,a=>'<li>'+esc(a[0])+' <span class="k">'+esc(a[1])+'</span></li>');
  if(n.dec)h+='<h3>decisions</h3><div class="dec">'+list(n.dec,d=>'<li><b>'+esc(d[0])+'</b> = '+esc(d[1])+': '+esc(d[2])+'</li>')+'</div>';
  panel.innerHTML=h;
}
function highlight(i,on){
  if(i<0)return;const key=String(i);
  for(const e of edges){const ends=e.getAttribute('data-v').split(' ');if(ends[0]===key||ends[1]===key)e.classList.toggle('hl',on);}
}
function select(i){
  if(pinned>=0){els[pinned].classList.remove('sel');highlight(pinned,false);}
  pinned=i;if(i>=0){els[i].classList.add('sel');highlight(i,true);}show(i);
}
function center(i){const r=canvas.getBoundingClientRect();if(s<0.5)s=1;tx=r.width/2-G[i].x*s;ty=r.height/3-G[i].y*s;apply();}
function fit(){const r=canvas.getBoundingClientRect();s=Math.min(r.width/W,r.height/H,1);tx=(r.width-W*s)/2;ty=Math.max(0,(r.height-H*s)/2);apply();}
function top1(z){const r=canvas.getBoundingClientRect();s=z||1;tx=(r.width-W*s)/2;if(W*s>r.width){tx=r.width/2-G[0].x*s;}ty=0;apply();}
for(const el of els){
  const i=+el.getAttribute('data-i');
  el.addEventListener('mouseenter',()=>{if(pinned<0)show(i);highlight(i,true);});
  el.addEventListener('mouseleave',()=>{if(i!==pinned)highlight(i,false);if(pinned<0)show(-1);else show(pinned);});
}
let drag=null;
canvas.addEventListener('mousedown',e=>{drag={x:e.clientX,y:e.clientY,tx:tx,ty:ty,moved:false};canvas.classList.add('drag');});
window.addEventListener('mousemove',e=>{if(!drag)return;const dx=e.clientX-drag.x,dy=e.clientY-drag.y;
  if(Math.abs(dx)+Math.abs(dy)>3)drag.moved=true;tx=drag.tx+dx;ty=drag.ty+dy;apply();});
window.addEventListener('mouseup',e=>{if(!drag)return;const moved=drag.moved;drag=null;canvas.classList.remove('drag');
  if(moved)return;const n=e.target.closest?e.target.closest('.n'):null;select(n?+n.getAttribute('data-i'):-1);});
canvas.addEventListener('wheel',e=>{e.preventDefault();const r=canvas.getBoundingClientRect(),mx=e.clientX-r.left,my=e.clientY-r.top;
  const f=Math.exp(-e.deltaY*(e.deltaMode?0.05:0.0015)),ns=Math.min(4,Math.max(0.02,s*f));
  tx=mx-(mx-tx)*ns/s;ty=my-(my-ty)*ns/s;s=ns;apply();},{passive:false});
function find(){
  for(const i of matches)els[i].classList.remove('hit');
  const q=search.value.trim().toLowerCase();matches=[];mi=-1;
  if(q)G.forEach((n,i)=>{if(n.name.toLowerCase().includes(q)||n.op.toLowerCase().includes(q))matches.push(i);});
  for(const i of matches)els[i].classList.add('hit');
  hits.textContent=q?matches.length+' found':'';
}
function next(step){if(!matches.length)return;mi=(mi+step+matches.length)%matches.length;
  hits.textContent=(mi+1)+' of '+matches.length;select(matches[mi]);center(matches[mi]);}
search.addEventListener('input',find);
search.addEventListener('keydown',e=>{if(e.key==='Enter'){next(e.shiftKey?-1:1);e.preventDefault();}});
document.getElementById('fit').onclick=fit;document.getElementById('one').onclick=()=>top1(1);
window.addEventListener('keydown',e=>{if(e.target===search)return;if(e.key==='f')fit();if(e.key==='/'){search.focus();e.preventDefault();}});
const HINT=panel.innerHTML;
const q=new URLSearchParams(location.hash.slice(1)),want=q.get('node'),z=parseFloat(q.get('zoom'))||0;
const at=want===null?-1:G.findIndex(n=>n.name===want);
if(z>0)s=z;
if(at>=0){select(at);center(at);}else{top1(z);}
})();
)";

std::string JsList(const std::vector<std::string>& xs) {
  return absl::StrCat("[", absl::StrJoin(xs, ",", [](std::string* o, const std::string& s) { o->append(JsStr(s)); }),
                      "]");
}

std::string JsPairs(const std::vector<std::pair<std::string, std::string>>& xs) {
  return absl::StrCat("[",
                      absl::StrJoin(xs, ",",
                                    [](std::string* o, const auto& p) {
                                      absl::StrAppend(o, "[", JsStr(p.first), ",", JsStr(p.second), "]");
                                    }),
                      "]");
}

}  // namespace

std::string GraphToHtml(const Graph& g, const std::string& title) {
  const std::vector<Node*> all_nodes = g.nodes();
  std::vector<const Node*> nodes(all_nodes.begin(), all_nodes.end());
  std::vector<const Value*> inputs;
  for (const Value* v : g.inputs()) {
    if (!v->is_constant()) inputs.push_back(v);
  }
  Layout L = ComputeLayout(g, nodes, inputs);

  // Clickable vertices in drawing order: inputs, nodes, outputs (the layout's real vertices).
  std::string svg_nodes, data;
  int index = 0;
  for (const Vertex& x : L.v) {
    if (x.kind == VKind::kDummy) continue;
    double cx = x.x, cy = Y(x);
    std::string name, op, type, fill, stroke = "#57606a", entry;
    int kind = kInputKind;
    if (x.kind == VKind::kNode) {
      const Node& n = *nodes[x.ref];
      kind = KindOf(n.op);
      name = n.name;
      op = n.op;
      fill = kKinds[kind].fill;
      int p = PrecisionIndex(n.precision);
      stroke = kPrecisions[p].color;
      const Value* out0 = n.outputs.empty() ? nullptr : n.outputs[0];
      type = out0 ? TypeOf(*out0) : "";
      std::vector<std::pair<std::string, std::string>> attrs, ins, outs;
      for (const auto& [k, v] : n.attrs.all()) attrs.push_back({k, Cut(AttrValueToString(v), 2000)});
      for (const Value* in : n.inputs) {
        if (in) ins.push_back({in->name, absl::StrCat(TypeOf(*in), in->is_constant() ? " (constant)" : "")});
      }
      for (const Value* o : n.outputs) {
        if (o) outs.push_back({o->name, TypeOf(*o)});
      }
      std::string decisions = absl::StrJoin(n.decisions, ",", [](std::string* o, const Decision& d) {
        absl::StrAppend(o, "[", JsStr(d.kind), ",", JsStr(d.choice), ",", JsStr(d.reason), "]");
      });
      entry =
          absl::StrCat("{name:", JsStr(n.name), ",op:", JsStr(n.op), ",kind:", kind,
                       ",prec:", JsStr(DTypeName(n.precision)), ",origin:", JsList(n.origin), ",attrs:", JsPairs(attrs),
                       ",ins:", JsPairs(ins), ",outs:", JsPairs(outs), ",dec:[", decisions, "]");
      std::string badge = DTypeName(n.precision);
      double bw = 7 + 6.2 * badge.size();
      absl::StrAppend(&svg_nodes, "<g class=\"n\" data-i=\"", index, "\" transform=\"translate(", F(cx - x.w / 2), ",",
                      F(cy - x.h / 2), ")\"><rect class=\"box\" width=\"", F(x.w), "\" height=\"", F(x.h),
                      "\" rx=\"6\" fill=\"", fill, "\" stroke=\"", stroke, "\"/><text class=\"op\" x=\"8\" y=\"15\">",
                      Esc(Cut(op, 24)), "</text><rect x=\"", F(x.w - bw - 5), "\" y=\"4\" width=\"", F(bw),
                      "\" height=\"14\" rx=\"3\" fill=\"", kPrecisions[p].color, "\"/><text class=\"badge\" x=\"",
                      F(x.w - bw / 2 - 5), "\" y=\"14.5\" text-anchor=\"middle\" fill=\"#fff\">", badge,
                      "</text><text x=\"8\" y=\"30\">", Esc(ShortName(name, 34)),
                      "</text><text class=\"ty\" x=\"8\" y=\"43\">", Esc(Cut(type, 36)), "</text></g>\n");
    } else {
      const Value* v = x.kind == VKind::kInput ? inputs[x.ref] : g.outputs()[x.ref];
      name = v->name;
      op = x.kind == VKind::kInput ? "input" : "output";
      type = TypeOf(*v);
      fill = kIoFill;
      entry = absl::StrCat("{name:", JsStr(name), ",op:", JsStr(op), ",kind:", kInputKind,
                           ",outs:", JsPairs({{name, type}}));
      absl::StrAppend(&svg_nodes, "<g class=\"n\" data-i=\"", index, "\" transform=\"translate(", F(cx - x.w / 2), ",",
                      F(cy - x.h / 2), ")\"><rect class=\"box\" width=\"", F(x.w), "\" height=\"", F(x.h),
                      "\" rx=\"17\" fill=\"", fill, "\" stroke=\"#57606a\"/><text class=\"op\" x=\"", F(x.w / 2),
                      "\" y=\"14\" text-anchor=\"middle\">", op, ": ", Esc(Cut(name, 16)),
                      "</text><text class=\"ty\" x=\"", F(x.w / 2), "\" y=\"27\" text-anchor=\"middle\">",
                      Esc(Cut(type, 30)), "</text></g>\n");
    }
    absl::StrAppend(&data, index ? ",\n" : "", entry, ",x:", F(cx), ",y:", F(cy), "}");
    ++index;
  }
  // Vertex index -> clickable index, for the edges' data-v.
  std::vector<int> click(L.v.size(), -1);
  for (size_t i = 0, k = 0; i < L.v.size(); ++i) {
    if (L.v[i].kind != VKind::kDummy) click[i] = static_cast<int>(k++);
  }
  std::string svg_edges;
  for (const LayoutEdge& e : L.edges) {
    absl::StrAppend(&svg_edges, "<path class=\"e\" data-v=\"", click[e.path.front()], " ", click[e.path.back()],
                    "\" d=\"", EdgePath(L, e), "\"><title>", Esc(e.value), "</title></path>\n");
  }

  std::string legend;
  for (int k = 0; k < 7; ++k) {
    absl::StrAppend(&legend, "<span><i class=\"sw\" style=\"background:", kKinds[k].fill, "\"></i>", kKinds[k].name,
                    "</span>");
  }
  absl::StrAppend(&legend, "<span class=\"k\">&nbsp;precision:</span>");
  for (const PrecisionInfo& p : kPrecisions) {
    absl::StrAppend(&legend, "<span><i class=\"pb\" style=\"border-color:", p.color, "\"></i>", p.name, "</span>");
  }
  std::string kinds_js = "[";
  for (const KindInfo& k : kKinds) absl::StrAppend(&kinds_js, JsStr(k.name), ",");
  kinds_js += "\"graph input/output\"]";

  std::string out = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", Esc(title), "</title>\n<style>",
      kStyle, "</style>\n</head>\n<body>\n<div id=\"top\"><h1>", Esc(title), "</h1><span class=\"meta\">", nodes.size(),
      " nodes, opset ", g.opset,
      "</span><input id=\"search\" type=\"search\" placeholder=\"find node by name or op (Enter: next)\">"
      "<span id=\"hits\"></span><button id=\"fit\" title=\"whole graph (f)\">fit</button>"
      "<button id=\"one\" title=\"top of the graph at 100%\">1:1</button><div id=\"legend\">",
      legend, "</div></div>\n<div id=\"main\"><div id=\"canvas\"><svg id=\"graph\">",
      "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
      "orient=\"auto-start-reverse\"><path d=\"M0,0L10,5L0,10z\" fill=\"#8c959f\"/></marker></defs>\n<g id=\"vp\">\n",
      svg_edges, svg_nodes,
      "</g></svg></div>\n<div id=\"panel\"><p class=\"hint\">Hover over a node to see its origin "
      "ONNX nodes, attributes, inputs, outputs and decisions; click to keep it. Drag to pan, wheel to zoom, "
      "<b>/</b> to search, <b>f</b> to fit.</p></div></div>\n<script>\nconst W=",
      F(L.width), ",H=", F(L.height), ",KINDS=", kinds_js, ";\nconst G=[\n", data, "];\n", kScript,
      "</script>\n</body>\n</html>\n");
  return out;
}

}  // namespace gcomp
