// gcomp check CASE_DIR [--target ref|cpu] [--level L] [--precision P] [--keep-fp32 REGEX] [--calibration DIR]
//             [--batch N] [--reference] [--rtol R] [--atol A]
//
// --target ref (default): the reference interpreter; --target cpu: the model compiled (O3 unless
// --level) and run on the cpu runtime.
// Runs every test_data_set_* of an ONNX test-case folder and compares each output with
// output_K.pb. An element passes when |actual - expected| <= atol + rtol * |expected|; the
// default atol is 1e-5 * max|expected| (DESIGN.md's fp32 tolerance). With --precision tf32, fp16
// or bf16 (storage emulated) and neither --rtol nor --atol, an output passes when its cosine
// similarity is >= 0.999 and its max abs error <= 5e-2 * max|expected| (fp8: cosine >= 0.99).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "frontend/tensor_proto.h"
#include "tools/executable.h"

namespace gcomp::cli {
namespace {

namespace fs = std::filesystem;

// DESIGN.md's default tolerances by precision when neither --rtol nor --atol is given.
struct ReducedTolerance {
  double min_cosine = 0;  // 0: element-wise rtol/atol instead
  double max_abs_of_ref = 0;
};

ReducedTolerance ToleranceFor(const std::string& precision) {
  if (precision == "tf32" || precision == "fp16" || precision == "bf16") return {0.999, 5e-2};
  if (precision == "fp8") return {0.99, INFINITY};
  return {};
}

struct Comparison {
  double max_abs = 0, max_rel = 0, cosine = 1, max_ref = 0;
  int64_t top1_agree = -1, rows = 0;  // for 2-D outputs
  bool pass = true;
  std::string problem;
};

Comparison Compare(const Tensor& actual, const Tensor& expected, double rtol, double atol_arg,
                   const ReducedTolerance& reduced) {
  Comparison c;
  if (actual.dims() != expected.dims()) {
    c.pass = false;
    c.problem = absl::StrCat("shape [", absl::StrJoin(actual.dims(), ","), "], expected [",
                             absl::StrJoin(expected.dims(), ","), "]");
    return c;
  }
  if (!IsFloat(expected.dtype())) {
    for (int64_t i = 0; i < expected.numel(); ++i) {
      double d = std::fabs(static_cast<double>(actual.GetI64(i)) - static_cast<double>(expected.GetI64(i)));
      c.max_abs = std::max(c.max_abs, d);
    }
    c.pass = c.max_abs == 0;
    return c;
  }
  std::vector<float> a = actual.ToF32(), e = expected.ToF32();
  double max_ref = 0;
  for (float v : e) max_ref = std::max(max_ref, static_cast<double>(std::fabs(v)));
  double atol = atol_arg >= 0 ? atol_arg : 1e-5 * max_ref;
  double dot = 0, na = 0, ne = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    double x = a[i], y = e[i];
    if (std::isnan(x) != std::isnan(y) || (std::isinf(y) && x != y)) {
      c.pass = false;
      c.max_abs = INFINITY;
      continue;
    }
    if (std::isnan(y) || std::isinf(y)) continue;
    double d = std::fabs(x - y);
    c.max_abs = std::max(c.max_abs, d);
    // Relative error over elements that are not tiny compared with the output's scale.
    if (std::fabs(y) > 1e-3 * max_ref) c.max_rel = std::max(c.max_rel, d / std::fabs(y));
    if (d > atol + rtol * std::fabs(y)) c.pass = false;
    dot += x * y;
    na += x * x;
    ne += y * y;
  }
  c.cosine = (na > 0 && ne > 0) ? dot / std::sqrt(na * ne) : (na == ne ? 1.0 : 0.0);
  c.max_ref = max_ref;
  if (reduced.min_cosine > 0 && c.max_abs != INFINITY) {
    c.pass = c.cosine >= reduced.min_cosine && c.max_abs <= reduced.max_abs_of_ref * max_ref;
  }
  if (expected.rank() == 2 && expected.dims()[1] > 1) {
    int64_t rows = expected.dims()[0], cols = expected.dims()[1];
    c.rows = rows;
    c.top1_agree = 0;
    for (int64_t r = 0; r < rows; ++r) {
      auto ra = std::max_element(a.begin() + r * cols, a.begin() + (r + 1) * cols) - (a.begin() + r * cols);
      auto re = std::max_element(e.begin() + r * cols, e.begin() + (r + 1) * cols) - (e.begin() + r * cols);
      c.top1_agree += ra == re;
    }
  }
  return c;
}

absl::StatusOr<double> ParseDouble(const std::string& name, const std::string& s) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !(v >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(name, " '", s, "' is not a non-negative number"));
  }
  return v;
}

}  // namespace

int Check(int argc, char** argv) {
  auto args = ParseArgs(argc, argv, 2, {"--target", "--rtol", "--atol", "--precision", "--keep-fp32", "--level", "--passes", "--calibration", "--batch", "--exclude-kernels"}, {"--reference"});
  if (!args.ok()) return Report(args.status());
  if (args->positional.size() != 1) return Report(absl::InvalidArgumentError("check takes one CASE_DIR"));
  fs::path dir = args->positional[0];
  DefaultLevelForModel(*args, (dir / "model.onnx").string());
  // --reference: the graph lowered for --target runs on the reference interpreter (as `run`).
  if (absl::Status s = CheckTargetAndLevel(*args, true, args->Has("--reference")); !s.ok()) return Report(s);
  double rtol = 1e-4, atol = -1;
  ReducedTolerance reduced;
  if (!args->Has("--rtol") && !args->Has("--atol")) reduced = ToleranceFor(PrecisionOf(*args));
  if (args->Has("--rtol")) {
    auto v = ParseDouble("--rtol", args->Get("--rtol"));
    if (!v.ok()) return Report(v.status());
    rtol = *v;
  }
  if (args->Has("--atol")) {
    auto v = ParseDouble("--atol", args->Get("--atol"));
    if (!v.ok()) return Report(v.status());
    atol = *v;
  }
  auto exe = Executable::Open(*args, (dir / "model.onnx").string(), DefaultThreads());
  if (!exe.ok()) return Report(exe.status());
  const std::vector<ValueSpec>& graph_inputs = (*exe)->inputs();
  const std::vector<ValueSpec>& graph_outputs = (*exe)->outputs();

  std::vector<fs::path> sets;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(entry.path());
  }
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return Report(absl::InvalidArgumentError(absl::StrCat(dir.string(), ": no test_data_set_* folders")));

  bool all_pass = true;
  int compared = 0;
  for (const fs::path& set : sets) {
    std::map<std::string, Tensor> feeds;
    for (size_t k = 0; k < graph_inputs.size(); ++k) {
      fs::path p = set / absl::StrCat("input_", k, ".pb");
      if (!fs::exists(p)) continue;  // optional inputs may be omitted
      auto t = frontend::ReadTensorFile(p.string());
      if (!t.ok()) return Report(t.status());
      feeds[graph_inputs[k].name] = std::move(*t);
    }
    auto outputs = (*exe)->Run(feeds);
    if (!outputs.ok()) return Report(outputs.status());
    for (size_t k = 0; k < graph_outputs.size(); ++k) {
      fs::path p = set / absl::StrCat("output_", k, ".pb");
      if (!fs::exists(p)) continue;
      auto expected = frontend::ReadTensorFile(p.string());
      if (!expected.ok()) return Report(expected.status());
      const Tensor& actual = (*outputs)[k];
      Comparison c = Compare(actual, *expected, rtol, atol, reduced);
      ++compared;
      all_pass &= c.pass;
      std::string line = absl::StrFormat("%s output '%s' %s[%s]: ", set.filename().string(), graph_outputs[k].name,
                                         DTypeName(actual.dtype()), absl::StrJoin(actual.dims(), ","));
      if (!c.problem.empty()) {
        line += c.problem;
      } else {
        line += absl::StrFormat("max_abs %.3g  max_rel %.3g  cosine %.6f", c.max_abs, c.max_rel, c.cosine);
        if (reduced.min_cosine > 0) {
          line += absl::StrFormat("  max_abs/max|ref| %.3g (%s: cosine >= %g, max_abs <= %g*max|ref|)",
                                  c.max_ref > 0 ? c.max_abs / c.max_ref : 0.0, PrecisionOf(*args), reduced.min_cosine,
                                  reduced.max_abs_of_ref);
        }
        if (c.top1_agree >= 0) line += absl::StrFormat("  top1 %d/%d", c.top1_agree, c.rows);
      }
      std::cout << line << "  " << (c.pass ? "PASS" : "FAIL") << "\n";
    }
  }
  if (compared == 0) return Report(absl::InvalidArgumentError(absl::StrCat(dir.string(), ": no output_K.pb files to compare")));
  std::cout << (all_pass ? "PASS" : "FAIL") << ": " << compared << " outputs in " << sets.size() << " data sets\n";
  return all_pass ? kOk : kMismatch;
}

}  // namespace gcomp::cli
