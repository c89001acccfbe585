#include "driver/driver.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <regex>
#include <set>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "codegen/codegen.h"
#include "core/limits.h"
#include "frontend/onnx_import.h"
#include "graph/printer.h"
#include "frontend/tensor_proto.h"
#include "core/status_macros.h"
#include "passes/pass_manager.h"
#include "passes/target.h"
#include "plan/plan_file.h"
#include "runtime/backend.h"

namespace gcomp::driver {

std::string Args::Get(const std::string& name, const std::string& def) const {
  auto it = options.find(name);
  return it == options.end() || it->second.empty() ? def : it->second.back();
}

const std::vector<std::string>& Args::All(const std::string& name) const {
  static const std::vector<std::string> kEmpty;
  auto it = options.find(name);
  return it == options.end() ? kEmpty : it->second;
}

absl::StatusOr<Args> ParseArgs(int argc, char** argv, int first, const std::vector<std::string>& value_options,
                               const std::vector<std::string>& flags) {
  Args args;
  auto known = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a.size() < 2 || a[0] != '-') {
      args.positional.push_back(a);
      continue;
    }
    std::string name = a, value;
    bool has_value = false;
    if (auto eq = a.find('='); eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
      has_value = true;
    }
    if (known(flags, name)) {
      if (has_value) return absl::InvalidArgumentError(absl::StrCat("option ", name, " takes no value"));
      args.options[name].push_back("");
    } else if (known(value_options, name)) {
      if (!has_value) {
        if (i + 1 >= argc) return absl::InvalidArgumentError(absl::StrCat("option ", name, " needs a value"));
        value = argv[++i];
      }
      args.options[name].push_back(value);
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown option '", name, "'"));
    }
  }
  return args;
}

absl::StatusOr<std::unique_ptr<Graph>> LoadModel(const std::string& path) { return frontend::ImportOnnxFile(path); }

absl::Status CheckTargetAndLevel(const Args& args, bool level_allowed, bool any_target) {
  std::string target = args.Get("--target", "ref");
  ASSIGN_OR_RETURN(const passes::TargetDescription* t, passes::FindTarget(target));
  const bool reference = t->name == "ref";  // the interpreter, not a plan backend
  const runtime::BackendKernels* backend = runtime::FindBackendKernels(t->name);
  if (!reference && !backend && !any_target) {
    return absl::UnimplementedError(absl::StrCat(
        "target '", target, "' has no backend in this build yet: this command executes on the reference interpreter "
        "(--target ref) or a backend (", absl::StrJoin(runtime::BackendNames(), ", "), "); `gcomp inspect --target ",
        target, "` shows the graph lowered for it"));
  }
  if (!level_allowed && args.Has("--level")) return absl::InvalidArgumentError("--level is not an option of this command");
  if (absl::Status s = passes::PassesForLevel(args.Get("--level", "O0")).status(); !s.ok()) return s;
  if (args.Has("--batch") && !backend) {
    return absl::InvalidArgumentError(absl::StrCat("--batch sets a plan's maximum batch: it needs a target with a backend (",
                                                   absl::StrJoin(runtime::BackendNames(), ", "), ")"));
  }
  ASSIGN_OR_RETURN(passes::PassOptions po, PassOptionsFromArgs(args));
  if (po.precision != "fp32" && !args.Has("--passes")) {
    std::string level = args.Get("--level", "O0");
    if (level == "O0" || level == "O1") {
      return absl::InvalidArgumentError(absl::StrCat("--precision ", po.precision,
                                                     " is assigned by the assign-precision pass of levels O2 and O3, "
                                                     "after fusion; add --level O2 or O3 (this command runs level ",
                                                     level, ")"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<passes::PassOptions> PassOptionsFromArgs(const Args& args) {
  passes::PassOptions po;
  po.target = args.Get("--target", "ref");
  po.explain = args.Has("--explain");
  po.precision = args.Get("--precision", "fp32");
  po.keep_fp32 = args.Get("--keep-fp32");
  po.calibration_dir = args.Get("--calibration");
  ASSIGN_OR_RETURN(passes::PrecisionMode mode, passes::ParsePrecision(po.precision));
  RETURN_IF_ERROR(passes::ValidateKeepFp32(po.keep_fp32));
  if (mode == passes::PrecisionMode::kFp8) RETURN_IF_ERROR(passes::CheckFp8(po, /*loaded=*/false));
  return po;
}

void DefaultLevelForModel(Args& args, const std::string& path) {
  if (!args.Has("--level") && !args.Has("--passes") && !plan::LooksLikePlan(path)) args.options["--level"] = {"O3"};
}

int DefaultThreads() {
  unsigned n = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(n, 1u, 8u));
}

bool EmulatesStorage(const Args& args) { return PrecisionOf(args) != "fp32"; }

absl::StatusOr<std::vector<std::map<std::string, Tensor>>> LoadCalibration(const std::string& dir, const Graph& g) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::InvalidArgumentError(absl::StrCat("--calibration ", dir, ": not a directory"));
  }
  std::vector<fs::path> sets;
  bool direct = false;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && name.rfind("test_data_set_", 0) == 0) sets.push_back(entry.path());
    if (entry.is_regular_file() && std::regex_match(name, std::regex(R"(input_\d+\.pb)"))) direct = true;
  }
  std::sort(sets.begin(), sets.end());
  if (direct) sets.insert(sets.begin(), fs::path(dir));
  std::vector<std::map<std::string, Tensor>> samples;
  for (const fs::path& set : sets) {
    std::map<std::string, Tensor> feeds;
    for (const auto& entry : fs::directory_iterator(set, ec)) {
      std::smatch m;
      const std::string name = entry.path().filename().string();
      if (!entry.is_regular_file() || !std::regex_match(name, m, std::regex(R"(input_(\d+)\.pb)"))) continue;
      std::string tensor_name;
      ASSIGN_OR_RETURN(Tensor t, frontend::ReadTensorFile(entry.path().string(), &tensor_name));
      const Value* target = nullptr;
      for (const Value* in : g.inputs()) {
        if (in->name == tensor_name) target = in;
      }
      const size_t k = std::stoul(m[1].str());
      if (!target && k < g.inputs().size()) target = g.inputs()[k];
      if (!target) {
        return absl::InvalidArgumentError(absl::StrCat("--calibration ", entry.path().string(), ": tensor '",
                                                       tensor_name, "' is neither a graph input's name nor position ",
                                                       k, " of the ", g.inputs().size(), " graph inputs"));
      }
      feeds[target->name] = std::move(t);
    }
    if (feeds.empty()) continue;
    for (const Value* in : g.inputs()) {
      if (!feeds.count(in->name)) {
        return absl::InvalidArgumentError(absl::StrCat("--calibration ", set.string(), ": no tensor for graph input '",
                                                       in->name, "'"));
      }
    }
    samples.push_back(std::move(feeds));
  }
  if (samples.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--calibration ", dir,
                                                   ": no calibration inputs (expected input_K.pb TensorProto files or "
                                                   "test_data_set_*/input_K.pb)"));
  }
  return samples;
}

absl::StatusOr<OptimizedModel> LoadAndOptimize(const Args& args, const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, LoadModel(path));
  return Optimize(args, std::move(g));
}

absl::StatusOr<OptimizedModel> Optimize(const Args& args, std::unique_ptr<Graph> graph) {
  OptimizedModel m;
  m.graph = std::move(graph);
  for (const Node* n : m.graph->nodes()) ++m.ops_before[n->op];
  m.nodes_before = m.graph->num_nodes();
  ASSIGN_OR_RETURN(passes::PassOptions po, PassOptionsFromArgs(args));
  if (po.precision == "fp8") {
    ASSIGN_OR_RETURN(po.calibration, LoadCalibration(po.calibration_dir, *m.graph));
  }
  passes::PassContext ctx(po);
  if (args.Has("--passes")) {  // an explicit pass list instead of a level (pass tests use it)
    std::vector<std::string> names = absl::StrSplit(args.Get("--passes"), ',', absl::SkipEmpty());
    RETURN_IF_ERROR(passes::RunPasses(*m.graph, names, ctx));
  } else {
    RETURN_IF_ERROR(passes::RunPipeline(*m.graph, args.Get("--level", "O0"), ctx));
  }
  m.explanations = ctx.explanations();
  return m;
}

absl::StatusOr<std::string> CanonicalTarget(const Args& args, const std::string& def) {
  ASSIGN_OR_RETURN(const passes::TargetDescription* t, passes::FindTarget(args.Get("--target", def)));
  return t->name;
}

absl::StatusOr<std::unique_ptr<plan::Plan>> CompileModel(const Args& args, const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, LoadModel(path));
  return CompileGraph(args, std::move(g), std::filesystem::path(path).filename().string());
}

absl::StatusOr<std::unique_ptr<plan::Plan>> CompileModelBytes(const Args& args, const std::string& bytes,
                                                              const std::string& name) {
  ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, frontend::ImportOnnxBytes(bytes, name, ""));
  return CompileGraph(args, std::move(g), name);
}

absl::StatusOr<std::unique_ptr<plan::Plan>> CompileGraph(const Args& args, std::unique_ptr<Graph> graph,
                                                         const std::string& model_name) {
  Args a = args;
  if (!a.Has("--level")) a.options["--level"] = {"O3"};
  ASSIGN_OR_RETURN(std::string target, CanonicalTarget(a, "cpu"));
  a.options["--target"] = {target};
  ASSIGN_OR_RETURN(OptimizedModel m, Optimize(a, std::move(graph)));
  codegen::CodegenOptions o;
  o.target = target;
  o.model = model_name;
  o.precision = PrecisionOf(a);
  o.level = a.Get("--level");
  if (a.Has("--exclude-kernels")) {
    o.exclude_kernels = absl::StrSplit(a.Get("--exclude-kernels"), ',', absl::SkipEmpty());
  }
  if (a.Has("--batch")) {
    int64_t b = 0;
    if (!absl::SimpleAtoi(a.Get("--batch"), &b) || b < 1 || b > kMaxPlanBatch) {
      return absl::InvalidArgumentError(
          absl::StrCat("--batch '", a.Get("--batch"), "', expected 1..", kMaxPlanBatch));
    }
    o.max_batch = b;
  }
  auto plan = codegen::GeneratePlan(*m.graph, o);
  if (!plan.ok()) return plan.status();
  return std::move(*plan);
}


absl::StatusOr<std::string> InspectModel(const Args& args, const std::string& path) {
  const std::string format = args.Get("--format", "text");
  RETURN_IF_ERROR(CheckTargetAndLevel(args, true, /*any_target=*/true));
  if (format != "text" && format != "dot" && format != "json" && format != "html") {
    return absl::InvalidArgumentError(absl::StrCat("unknown format '", format, "', expected text, dot, json or html"));
  }
  ASSIGN_OR_RETURN(OptimizedModel model, LoadAndOptimize(args, path));
  const Graph& graph = *model.graph;
  std::string out;
  if (args.Has("--summary")) {
    out = PrintSummary(graph);
    absl::StrAppend(&out, "  level ", args.Get("--level", "O0"), ": ", model.nodes_before, " nodes before, ",
                    graph.num_nodes(), " after\n");
    std::map<std::string, int> after;
    for (const Node* n : graph.nodes()) ++after[n->op];
    std::set<std::string> ops;
    for (const auto& [op, c] : model.ops_before) ops.insert(op);
    for (const auto& [op, c] : after) ops.insert(op);
    out += "  op counts (before -> after):\n";
    for (const std::string& op : ops) {
      int b = model.ops_before.count(op) ? model.ops_before.at(op) : 0;
      int a = after.count(op) ? after.at(op) : 0;
      if (a != b) absl::StrAppend(&out, absl::StrFormat("    %-20s %5d -> %d\n", op, b, a));
    }
  } else if (format == "dot") {
    out = GraphToDot(graph);
  } else if (format == "html") {
    // Title: the model file with its folder ("tv_vit_b_16/model.onnx at O2").
    size_t slash = path.find_last_of('/');
    size_t from = slash == std::string::npos || slash == 0 ? 0 : path.find_last_of('/', slash - 1);
    std::string name = path.substr(from == std::string::npos ? 0 : from + 1);
    out = GraphToHtml(graph, absl::StrCat(name, " at ", args.Get("--level", "O0")));
  } else if (format == "json") {
    out = GraphToJson(graph);
  } else {
    out = PrintGraph(graph);
  }
  if (args.Has("--explain") && format == "html" && !args.Has("--summary")) {
    out += "<!-- rules that did not fire:\n";
    for (const std::string& e : model.explanations) {
      absl::StrAppend(&out, absl::StrReplaceAll(e, {{"--", "- -"}}), "\n");
    }
    out += "-->\n";
  } else if (args.Has("--explain")) {
    out += "// ---- rules that did not fire ----\n";
    for (const std::string& e : model.explanations) absl::StrAppend(&out, "// ", e, "\n");
  }
  return out;
}

}  // namespace gcomp::driver
