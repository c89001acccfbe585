#include "tools/cli.h"

#include <iostream>

namespace gcomp::cli {

int ExitCodeFor(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kOk: return kOk;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kUnimplemented:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kAlreadyExists: return kBadInput;
    default: return kInternal;
  }
}

int Report(const absl::Status& s) {
  int code = ExitCodeFor(s);
  std::cerr << "gcomp: " << (code == kInternal ? "internal error: " : "") << s.message() << "\n";
  return code;
}

}  // namespace gcomp::cli
