#include "runtime/kernel.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gcomp::runtime {

absl::StatusOr<Selection> SelectKernel(const KernelTable& table, const KernelSpec& spec,
                                       const std::vector<std::string>& exclude) {
  static const Attributes kNoAttributes;
  const Attributes& attrs = spec.params ? *spec.params : kNoAttributes;
  std::vector<std::string> declined;
  for (const KernelEntry& e : table) {
    if (!RunsOp(e, spec.op)) continue;
    if (std::find(exclude.begin(), exclude.end(), e.id) != exclude.end()) {
      declined.push_back(absl::StrCat(e.id, ": excluded"));
      continue;
    }
    // The blob is the node's attributes, every one of which the entry must declare with its type:
    // an attribute it does not know could change what the op computes.
    if (absl::Status s = CheckAttributes(attrs, e.params, /*allow_unknown=*/false); !s.ok()) {
      declined.push_back(absl::StrCat(e.id, ": ", s.message()));
      continue;
    }
    if (std::optional<std::string> why = e.accepts(spec)) return Selection{&e, *why, attrs, e.params_version};
  }
  return absl::NotFoundError(
      absl::StrCat("node '", spec.name, "' (", spec.op, "): no kernel of the table runs it",
                   declined.empty() ? "" : absl::StrCat(" (", absl::StrJoin(declined, "; "), ")")));
}

bool RunsOp(const KernelEntry& entry, const std::string& op) {
  return std::find(entry.ops.begin(), entry.ops.end(), op) != entry.ops.end();
}

const KernelEntry* FindKernel(const KernelTable& table, const std::string& id) {
  for (const KernelEntry& e : table) {
    if (e.id == id) return &e;
  }
  return nullptr;
}

absl::Status CheckParams(const KernelEntry& entry, const Attributes& params, uint32_t version) {
  if (version != entry.params_version) {
    return absl::InvalidArgumentError(absl::StrCat("kernel '", entry.id, "' has parameter version ", version,
                                                   ", this build's is ", entry.params_version));
  }
  if (absl::Status s = CheckAttributes(params, entry.params, /*allow_unknown=*/false); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("kernel '", entry.id, "': ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace gcomp::runtime
