// absl::Status -> the public gcomp::Status (codes mapped, message kept), for the public API's
// implementations (runtime/api.cc, the library's compile entry point).
#pragma once

#include "absl/status/status.h"
#include "include/gcomp/gcomp.h"

namespace gcomp {

Status FromAbsl(const absl::Status& s);

}  // namespace gcomp
