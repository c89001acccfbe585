// libFuzzer target: model bytes -> ONNX import -> graph verifier. Any input may be refused with a
// status; none may crash, hang, read out of bounds or allocate without bound (libFuzzer's
// -rss_limit_mb and -malloc_limit_mb catch the last), and an accepted graph must verify.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "frontend/onnx_import.h"
#include "graph/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::unique_ptr<gcomp::Graph>> g = gcomp::frontend::ImportOnnxBytes(bytes, "fuzz.onnx", "");
  if (!g.ok()) return 0;
  if (absl::Status s = gcomp::VerifyGraph(**g); !s.ok()) {
    std::fprintf(stderr, "an imported graph does not verify: %s\n", std::string(s.message()).c_str());
    std::abort();
  }
  return 0;
}
