#include "core/limits.h"

#include "absl/strings/str_cat.h"

namespace gcomp {

absl::Status CheckRank(int64_t rank) {
  if (rank > kMaxRank) return absl::InvalidArgumentError(absl::StrCat("rank ", rank, ", over the limit of ", kMaxRank));
  return absl::OkStatus();
}

absl::Status CheckRankAndDims(const std::vector<int64_t>& dims) {
  if (absl::Status s = CheckRank(static_cast<int64_t>(dims.size())); !s.ok()) return s;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] > kMaxDim) {
      return absl::InvalidArgumentError(absl::StrCat("dim ", d, " is ", dims[d], ", over the limit of ", kMaxDim));
    }
  }
  return absl::OkStatus();
}

}  // namespace gcomp
