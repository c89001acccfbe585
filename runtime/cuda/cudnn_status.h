// cudnn-frontend results as absl::Status for the cuDNN steps (cudnn_conv.cc, cudnn_sdpa.cc).
#pragma once

#include <cudnn_frontend.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace gcomp::cuda {

// Building a graph: a failure means this graph does not run here (the step falls back).
inline absl::Status FeOk(cudnn_frontend::error_t e, const char* what) {
  if (e.is_good()) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat("cuDNN ", what, ": ", e.get_message()));
}

// An execute that fails at run time is an internal error: during CUDA-graph capture the executor
// then runs the batch step by step instead of failing it.
inline absl::Status FeExecuted(cudnn_frontend::error_t e) {
  if (e.is_good()) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("cuDNN execute: ", e.get_message()));
}

}  // namespace gcomp::cuda
