// The registry: every backend this build has, in one list.
#include "runtime/backend.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/cpu/cpu_backend.h"

namespace gcomp::runtime {
namespace {

const std::vector<const Backend*>& Registry() {
  static const std::vector<const Backend*> kBackends = {&cpu::CpuBackend()};
  return kBackends;
}

}  // namespace

const Backend* FindBackend(std::string_view target) {
  for (const Backend* b : Registry()) {
    if (b->name() == target) return b;
  }
  return nullptr;
}

std::vector<std::string> BackendNames() {
  std::vector<std::string> names;
  for (const Backend* b : Registry()) names.push_back(b->name());
  return names;
}

absl::StatusOr<const Backend*> BackendFor(std::string_view target) {
  if (const Backend* b = FindBackend(target)) return b;
  return absl::UnimplementedError(
      absl::StrCat("target '", std::string(target),
                   "' has no backend in this build (backends: ", absl::StrJoin(BackendNames(), ", "), ")"));
}

}  // namespace gcomp::runtime
