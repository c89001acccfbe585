#include "passes/pass_manager.h"

#include <chrono>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "graph/printer.h"
#include "core/status_macros.h"

namespace gcomp::passes {

namespace {
constexpr int kMaxRounds = 8;
}

void PassContext::Explain(const std::string& rule, const Node& at, const std::string& why) const {
  if (!options_.explain) return;
  std::string line = absl::StrCat(rule, " at ", at.name, ": ", why);
  if (explained_.insert(line).second) explanations_.push_back(std::move(line));
}

const PassInfo* FindPass(const std::string& name) {
  for (const PassInfo& p : AllPasses()) {
    if (name == p.name) return &p;
  }
  return nullptr;
}

absl::Status RunPasses(Graph& g, const std::vector<std::string>& names, const PassContext& ctx,
                       const RunOptions& options) {
  std::vector<const PassInfo*> passes;
  for (const std::string& n : names) {
    const PassInfo* p = FindPass(n);
    if (!p) return absl::InvalidArgumentError(absl::StrCat("unknown pass '", n, "'"));
    passes.push_back(p);
  }
  std::map<std::string, double> seconds;
  for (int round = 0; round < kMaxRounds; ++round) {
    bool changed_any = false;
    for (const PassInfo* p : passes) {
      auto start = std::chrono::steady_clock::now();
      absl::StatusOr<bool> changed = p->run(g, ctx);
      seconds[p->name] += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!changed.ok()) {
        return absl::Status(changed.status().code(), absl::StrCat("pass '", p->name, "': ", changed.status().message()));
      }
      changed_any |= *changed;
      if (options.verify_each) {
        if (absl::Status s = VerifyGraph(g); !s.ok()) {
          return absl::InternalError(absl::StrCat("pass '", p->name, "' left an invalid graph: ", s.message()));
        }
      }
      if (options.log && (options.print_after_all || options.print_after == p->name)) {
        *options.log << "// ---- IR after " << p->name << " (round " << round + 1 << ") ----\n" << PrintGraph(g);
      }
    }
    if (!changed_any) break;
  }
  if (options.time_passes && options.log) {
    double total = 0;
    for (const auto& [name, s] : seconds) total += s;
    *options.log << "// ---- pass timing ----\n";
    for (const std::string& n : names) *options.log << absl::StrFormat("// %-20s %9.3f ms\n", n, 1e3 * seconds[n]);
    *options.log << absl::StrFormat("// %-20s %9.3f ms\n", "total", 1e3 * total);
  }
  return absl::OkStatus();
}

absl::Status RunPipeline(Graph& g, const std::string& level, const PassContext& ctx, const RunOptions& options) {
  ASSIGN_OR_RETURN(std::vector<std::string> names, PassesForLevel(level));
  if (names.empty()) return absl::OkStatus();
  return RunPasses(g, names, ctx, options);
}

}  // namespace gcomp::passes
