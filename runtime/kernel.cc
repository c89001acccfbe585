#include "runtime/kernel.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gcomp::runtime {

absl::StatusOr<Selection> SelectKernel(const KernelTable& table, const KernelSpec& spec) {
  std::vector<std::string> declined;
  for (const KernelEntry& e : table) {
    if (!RunsOp(e, spec.op)) continue;
    // The blob holds the parameters the entry declares, with the types it declares.
    Attributes params;
    if (spec.params) {
      for (const AttrSpec& p : e.params) {
        if (const AttrValue* v = spec.params->Find(p.name)) params.Set(p.name, *v);
      }
    }
    if (absl::Status s = CheckAttributes(params, e.params, /*allow_unknown=*/false); !s.ok()) {
      declined.push_back(absl::StrCat(e.id, ": ", s.message()));
      continue;
    }
    KernelSpec with_params = spec;
    with_params.params = &params;
    if (std::optional<std::string> why = e.accepts(with_params)) {
      return Selection{&e, *why, std::move(params), e.params_version};
    }
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
