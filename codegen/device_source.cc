#include "absl/strings/str_cat.h"
#include "codegen/device_compiler.h"

namespace gcomp::codegen {

std::string DeviceTranslationUnit(const std::vector<runtime::DeviceSource>& sources) {
  std::string tu = "// gcomp generated kernels: one module per plan and architecture.\n";
  for (const runtime::DeviceSource& s : sources) absl::StrAppend(&tu, "\n// ---- ", s.name, "\n", s.source);
  return tu;
}

}  // namespace gcomp::codegen
