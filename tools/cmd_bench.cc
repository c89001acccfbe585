// gcomp bench PLAN|MODEL.onnx [--target cpu] [--precision P] [--level L] [--batch N] [--threads N]
//             [--warmup N] [--iterations N] [--json] [--profile [--profile-top N]] [--batch-part N]
// Times Session::Run on seeded random inputs of the given batch (default 1): warm-up runs, then
// `iterations` timed runs. Prints latency percentiles, throughput (batch * runs / time), compile time
// (plan load time for a plan file), peak RSS and the kernels the executor launched (counted as they
// ran, over the timed runs). --profile adds the executor's per-step times (stderr): the total per kernel
// and the --profile-top (default 25) slowest steps. --batch-part N: a cpu plan runs the batch in
// parts of N images (0, the default: parts whose arena fits in the last-level cache).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "plan/plan_file.h"
#include "tools/executable.h"

namespace gcomp::cli {
namespace {

absl::StatusOr<int64_t> IntOption(const Args& args, const std::string& name, int64_t def, int64_t lo, int64_t hi) {
  if (!args.Has(name)) return def;
  int64_t v = 0;
  if (!absl::SimpleAtoi(args.Get(name), &v) || v < lo || v > hi) {
    return absl::InvalidArgumentError(absl::StrCat(name, " '", args.Get(name), "', expected ", lo, "..", hi));
  }
  return v;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += absl::StrFormat("\\u%04x", c);
      continue;
    }
    out += c;
  }
  return out + "\"";
}

}  // namespace

int Bench(int argc, char** argv) {
  auto args = ParseArgs(argc, argv, 2,
                        {"--target", "--precision", "--level", "--batch", "--threads", "--warmup", "--iterations",
                         "--keep-fp32", "--profile-top", "--batch-part"},
                        {"--json", "--profile"});
  if (!args.ok()) return Report(args.status());
  if (args->positional.size() != 1) return Report(absl::InvalidArgumentError("bench takes one PLAN or MODEL.onnx"));
  // A model runs on the cpu backend unless --target says otherwise; a plan on its own backend.
  if (!args->Has("--target") && !plan::LooksLikePlan(args->positional[0])) args->options["--target"] = {"cpu"};
  DefaultLevelForModel(*args, args->positional[0]);
  {
    Args checked = *args;
    checked.options.erase("--batch");  // bench's --batch is the measured batch, not a plan's maximum
    if (absl::Status s = CheckTargetAndLevel(checked, true); !s.ok()) return Report(s);
  }
  auto batch = IntOption(*args, "--batch", 1, 1, 4096);
  auto threads = IntOption(*args, "--threads", 1, 1, 256);
  auto warmup = IntOption(*args, "--warmup", 3, 0, 100000);
  auto iterations = IntOption(*args, "--iterations", 10, 1, 1000000);
  auto top = IntOption(*args, "--profile-top", 25, 0, 1000000);
  auto part = IntOption(*args, "--batch-part", 0, 0, 4096);
  for (const auto* v : {&batch, &threads, &warmup, &iterations, &top, &part}) {
    if (!v->ok()) return Report(v->status());
  }
  // The plan's maximum batch: at least the benchmarked batch.
  Args open_args = *args;
  open_args.options.erase("--batch");
  const std::string& path = args->positional[0];
  if (!plan::LooksLikePlan(path)) open_args.options["--batch"] = {absl::StrCat(std::max<int64_t>(*batch, 1))};
  auto exe = Executable::Open(open_args, path, static_cast<int>(*threads), args->Has("--profile"));
  if (!exe.ok()) return Report(exe.status());
  if (*batch > (*exe)->max_batch()) {
    return Report(absl::InvalidArgumentError(
        absl::StrCat("--batch ", *batch, " is over the plan's maximum ", (*exe)->max_batch())));
  }
  std::mt19937 rng(1234);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::map<std::string, Tensor> feeds;
  for (const ValueSpec& in : (*exe)->inputs()) {
    std::vector<int64_t> dims = in.At(*batch);
    auto t = Tensor::Zeros(in.dtype, dims);
    if (!t.ok()) return Report(t.status());
    if (IsFloat(in.dtype)) {
      for (int64_t i = 0; i < t->numel(); ++i) t->SetF32(i, dist(rng));
    }
    feeds[in.name] = std::move(*t);
  }
  for (int64_t i = 0; i < *warmup; ++i) {
    if (auto r = (*exe)->Run(feeds); !r.ok()) return Report(r.status());
  }
  std::map<std::string, int64_t> before;
  before = (*exe)->executor().launches();
  std::vector<double> ms;
  for (int64_t i = 0; i < *iterations; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    if (auto r = (*exe)->Run(feeds); !r.ok()) return Report(r.status());
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::map<std::string, int64_t> kernels;
  for (const auto& [id, n] : (*exe)->executor().launches()) {
    int64_t d = n - (before.count(id) ? before.at(id) : 0);
    if (d) kernels[id] = d;
  }
  double total = 0;
  for (double v : ms) total += v;
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  auto pct = [&](double p) {
    size_t i = static_cast<size_t>(std::min<double>(sorted.size() - 1, std::ceil(p * sorted.size()) - 1));
    return sorted[i];
  };
  const double throughput = static_cast<double>(*batch) * ms.size() / (total / 1000.0);
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  const double rss_mb = ru.ru_maxrss / 1024.0;
  if (args->Has("--json")) {
    std::vector<std::string> ks;
    for (const auto& [id, n] : kernels) ks.push_back(absl::StrCat(JsonString(id), ": ", n));
    // Device backends: each step's chosen algorithm and the session's memory.
    std::vector<std::string> algos;
    const std::vector<std::string> chosen = (*exe)->executor().step_algorithms();
    for (size_t i = 0; i < chosen.size() && (*exe)->plan() && i < (*exe)->plan()->steps.size(); ++i) {
      algos.push_back(absl::StrCat("{\"step\": ", JsonString((*exe)->plan()->steps[i].name),
                                   ", \"algorithm\": ", JsonString(chosen[i]), "}"));
    }
    const std::string device_json =
        algos.empty() ? ""
                      : absl::StrCat(", \"memory\": ", JsonString((*exe)->executor().memory_info()),
                                     ", \"algorithms\": [", absl::StrJoin(algos, ", "), "]");
    std::cout << absl::StrFormat(
        "{\"schema_version\": 1, \"model\": %s, \"target\": %s, \"precision\": %s, \"batch\": %d, \"threads\": %d, "
        "\"iterations\": %d, \"latency_ms\": {\"p50\": %.4f, \"p90\": %.4f, \"p99\": %.4f, \"min\": %.4f}, "
        "\"throughput_per_s\": %.4f, \"compile_s\": %.4f, \"peak_rss_mb\": %.1f, \"kernels\": {%s}%s}\n",
        JsonString(path), JsonString((*exe)->target()),
        JsonString((*exe)->precision()), *batch, *threads, *iterations, pct(0.5), pct(0.9), pct(0.99), sorted[0],
        throughput, (*exe)->compile_seconds(), rss_mb, absl::StrJoin(ks, ", "), device_json);
  } else {
    std::cout << absl::StrFormat(
        "%s: target %s, %s, batch %d, %d threads, %d runs\n  latency ms: p50 %.3f  p90 %.3f  p99 %.3f  min %.3f\n"
        "  throughput %.2f /s   compile %.3f s   peak RSS %.1f MB\n  kernels (launches over the timed runs):\n",
        path, (*exe)->target(), (*exe)->precision(), *batch, *threads,
        *iterations, pct(0.5), pct(0.9), pct(0.99), sorted[0], throughput, (*exe)->compile_seconds(), rss_mb);
    for (const auto& [id, n] : kernels) std::cout << absl::StrFormat("    %-28s %d\n", id, n);
    const std::string memory = (*exe)->executor().memory_info();
    if (!memory.empty()) std::cout << "  memory: " << memory << "\n";
  }
  if (args->Has("--profile") && (*exe)->plan()) {
    // Per-step time over warm-up and timed runs, largest first, and the total per kernel.
    const auto& secs = (*exe)->executor().step_seconds();
    const auto& steps = (*exe)->plan()->steps;
    const double runs = static_cast<double>(*warmup + *iterations);
    std::vector<size_t> order(secs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return secs[a] > secs[b]; });
    std::map<std::string, double> per_kernel;
    double all = 0;
    for (size_t i = 0; i < secs.size(); ++i) {
      per_kernel[steps[i].kernel] += secs[i];
      all += secs[i];
    }
    std::cerr << absl::StrFormat("profile: %.3f ms per run in steps\n", all * 1000 / runs);
    for (const auto& [k, v] : per_kernel) std::cerr << absl::StrFormat("  %-28s %9.3f ms\n", k, v * 1000 / runs);
    for (size_t j = 0; j < std::min<size_t>(order.size(), static_cast<size_t>(*top)); ++j) {
      const size_t i = order[j];
      std::cerr << absl::StrFormat("  #%-4d %8.3f ms  %-16s %-24s %s\n", i, secs[i] * 1000 / runs, steps[i].op,
                                   steps[i].kernel, steps[i].reason.substr(0, 90));
    }
  }
  return kOk;
}

}  // namespace gcomp::cli
