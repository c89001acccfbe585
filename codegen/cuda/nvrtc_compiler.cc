// NVRTC: the plan's generated kernels as one translation unit, compiled per architecture into a
// cubin (with ptxas's per-function report) and into PTX for newer architectures. The
// architectures compile in parallel; nothing here needs a GPU.
#include <nvrtc.h>

#include <algorithm>
#include <future>
#include <memory>
#include <regex>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "codegen/device_compiler.h"
#include "core/status_macros.h"

namespace gcomp::codegen {
namespace {

struct ProgramDeleter {
  void operator()(nvrtcProgram p) const { nvrtcDestroyProgram(&p); }
};
using Program = std::unique_ptr<_nvrtcProgram, ProgramDeleter>;

std::string Log(nvrtcProgram p) {
  size_t n = 0;
  if (nvrtcGetProgramLogSize(p, &n) != NVRTC_SUCCESS || n == 0) return "";
  std::string log(n, '\0');
  if (nvrtcGetProgramLog(p, log.data()) != NVRTC_SUCCESS) return "";
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

// The function whose source holds `line` of the translation unit (for compile errors).
std::string FunctionAtLine(const std::string& tu, int line) {
  std::istringstream in(tu);
  std::string text, current = "(preamble)";
  for (int i = 1; std::getline(in, text) && i <= line; ++i) {
    if (text.rfind("// ---- ", 0) == 0) current = text.substr(8);
  }
  return current;
}

absl::StatusOr<std::string> Compile(const std::string& tu, const std::string& arch, bool ptx, std::string* log) {
  nvrtcProgram raw = nullptr;
  if (nvrtcResult r = nvrtcCreateProgram(&raw, tu.c_str(), "gcomp_kernels.cu", 0, nullptr, nullptr);
      r != NVRTC_SUCCESS) {
    return absl::InternalError(absl::StrCat("NVRTC: cannot create a program: ", nvrtcGetErrorString(r)));
  }
  Program prog(raw);
  const std::string arch_opt = ptx ? "-arch=compute_" + arch.substr(3) : "-arch=" + arch;
  std::vector<const char*> opts = {arch_opt.c_str(), "-std=c++17", "-default-device"};
  if (!ptx) {
    // ptxas's per-function report is read below; NVRTC's compile cache (CUDA 12.9+, on machines with a
    // driver) answers a repeated translation unit from the cache without running ptxas, so without a
    // report: the cubin is always compiled afresh.
    opts.push_back("--ptxas-options=-v");
    opts.push_back("--no-cache");
  }
  const nvrtcResult r = nvrtcCompileProgram(raw, static_cast<int>(opts.size()), opts.data());
  *log = Log(raw);
  if (r != NVRTC_SUCCESS) {
    std::smatch m;
    std::string where;
    if (std::regex_search(*log, m, std::regex(R"(gcomp_kernels\.cu\((\d+)\))"))) {
      where = absl::StrCat(" in '", FunctionAtLine(tu, std::stoi(m[1])), "'");
    }
    return absl::InternalError(absl::StrCat("NVRTC could not compile the generated kernels", where, " for ", arch,
                                            ": ", nvrtcGetErrorString(r), "\n", *log));
  }
  size_t n = 0;
  std::string out;
  if (ptx) {
    if (nvrtcGetPTXSize(raw, &n) != NVRTC_SUCCESS) return absl::InternalError("NVRTC: no PTX");
    out.resize(n);
    if (nvrtcGetPTX(raw, out.data()) != NVRTC_SUCCESS) return absl::InternalError("NVRTC: no PTX");
    while (!out.empty() && out.back() == '\0') out.pop_back();
  } else {
    if (nvrtcGetCUBINSize(raw, &n) != NVRTC_SUCCESS) return absl::InternalError("NVRTC: no cubin");
    out.resize(n);
    if (nvrtcGetCUBIN(raw, out.data()) != NVRTC_SUCCESS) return absl::InternalError("NVRTC: no cubin");
  }
  return out;
}

// ptxas -v, per entry function:
//   ptxas info    : Compiling entry function 'NAME' for 'sm_90'
//   ptxas info    : Function properties for NAME
//       S bytes stack frame, SS bytes spill stores, SL bytes spill loads
//   ptxas info    : Used R registers, ...
absl::StatusOr<std::vector<plan::DeviceFunction>> ParsePtxasLog(const std::string& log,
                                                                const std::vector<runtime::DeviceSource>& sources) {
  std::vector<plan::DeviceFunction> fns;
  for (const runtime::DeviceSource& s : sources) fns.push_back({s.name});
  auto find = [&](const std::string& name) -> plan::DeviceFunction* {
    for (plan::DeviceFunction& f : fns) {
      if (f.name == name) return &f;
    }
    return nullptr;
  };
  static const std::regex kEntry(R"(Compiling entry function '([^']+)')");
  static const std::regex kProps(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex kRegs(R"(Used (\d+) registers)");
  std::istringstream in(log);
  std::string line;
  plan::DeviceFunction* current = nullptr;
  std::vector<bool> seen(fns.size(), false);
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, kEntry)) {
      current = find(m[1]);
      if (current) seen[current - fns.data()] = true;
    } else if (current && std::regex_search(line, m, kProps)) {
      current->stack_bytes = std::stoi(m[1]);
      current->spill_store_bytes = std::stoi(m[2]);
      current->spill_load_bytes = std::stoi(m[3]);
    } else if (current && std::regex_search(line, m, kRegs)) {
      current->registers = std::stoi(m[1]);
    }
  }
  for (size_t i = 0; i < fns.size(); ++i) {
    if (!seen[i]) {
      return absl::InternalError(absl::StrCat("ptxas reported nothing for generated function '", fns[i].name,
                                              "' (is it extern \"C\" __global__?)"));
    }
  }
  return fns;
}

}  // namespace

absl::StatusOr<std::vector<plan::DeviceCode>> CompileDeviceCode(const std::vector<runtime::DeviceSource>& sources,
                                                                const std::vector<std::string>& archs) {
  if (archs.empty()) return absl::InvalidArgumentError("generated device code, and the backend names no architecture");
  const std::string tu = DeviceTranslationUnit(sources);
  struct Result {
    absl::StatusOr<std::string> cubin = std::string(), ptx = std::string();
    std::string log;
  };
  std::vector<std::future<Result>> jobs;
  for (const std::string& arch : archs) {
    jobs.push_back(std::async(std::launch::async, [&tu, arch] {
      Result r;
      std::string ptx_log;
      r.cubin = Compile(tu, arch, /*ptx=*/false, &r.log);
      if (r.cubin.ok()) r.ptx = Compile(tu, arch, /*ptx=*/true, &ptx_log);
      return r;
    }));
  }
  std::vector<plan::DeviceCode> modules;
  for (size_t i = 0; i < archs.size(); ++i) {
    Result r = jobs[i].get();
    RETURN_IF_ERROR(r.cubin.status());
    RETURN_IF_ERROR(r.ptx.status());
    plan::DeviceCode code;
    code.name = absl::StrCat("gcomp_kernels_", archs[i]);
    code.arch = archs[i];
    code.cubin = *std::move(r.cubin);
    code.ptx = *std::move(r.ptx);
    ASSIGN_OR_RETURN(code.functions, ParsePtxasLog(r.log, sources));
    modules.push_back(std::move(code));
  }
  return modules;
}

}  // namespace gcomp::codegen
