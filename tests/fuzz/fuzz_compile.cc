// libFuzzer target: model bytes -> ONNX import -> the O3 pipeline for cuda:sm_90 (passes only:
// this build has no device compiler) and for cpu -> cpu codegen -> the plan written, loaded back
// and run on generated inputs within the per-input budget (tests/fuzz/plan_run.h).
// Inputs are mutated structurally (tests/fuzz/proto_mutator.h: dims, attributes, dtypes,
// initializer sizes, edges, op types, opsets) as well as byte by byte.
// Findings: a crash or sanitizer report, a graph that no longer verifies after import or after
// the passes, an internal error, a plan codegen wrote that does not load or that the runtime calls
// invalid, or a run past the budget.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>

#include "absl/strings/match.h"
#include "driver/driver.h"
#include "frontend/onnx_import.h"
#include "graph/op_def.h"
#include "graph/printer.h"
#include "onnx/onnx_pb.h"
#include "plan/plan_file.h"
#include "tests/fuzz/plan_run.h"
#include "tests/fuzz/proto_mutator.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

void Trace(const char* stage, const absl::Status& s) { gcomp::fuzz::Trace("fuzz_compile", stage, s); }

void Finding(const char* what, const absl::Status& s) {
  std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
  std::abort();
}

// Refusals are InvalidArgument, Unimplemented, ResourceExhausted, ...; Internal means a broken
// invariant.
void CheckRefusal(const char* stage, const absl::Status& s) {
  if (s.code() == absl::StatusCode::kInternal) Finding(stage, s);
}

gcomp::driver::Args ArgsFor(const std::string& target) {
  gcomp::driver::Args a;
  a.options["--target"] = {target};
  a.options["--level"] = {"O3"};
  return a;
}

const gcomp::fuzz::ProtoMutator& Mutator() {
  static const gcomp::fuzz::ProtoMutator* m = new gcomp::fuzz::ProtoMutator(gcomp::AllOpNames());
  return *m;
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::mt19937_64 rng(seed);
  onnx::ModelProto model;
  if (rng() % 8 == 0 || !model.ParseFromArray(data, static_cast<int>(size))) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  for (uint64_t n = 1 + rng() % 3; n > 0; --n) Mutator().Mutate(&model, rng);
  std::string out;
  if (!model.SerializeToString(&out) || out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  auto graph = gcomp::frontend::ImportOnnxBytes(bytes, "fuzz.onnx", "");
  Trace("import", graph.status());
  if (!graph.ok()) return 0;
  if (absl::Status s = gcomp::VerifyGraph(**graph); !s.ok()) Finding("an imported graph does not verify", s);

  {  // The cuda pipeline on its own copy of the graph.
    auto copy = gcomp::frontend::ImportOnnxBytes(bytes, "fuzz.onnx", "");
    if (!copy.ok()) Finding("the same bytes imported twice gave different results", copy.status());
    auto optimized = gcomp::driver::Optimize(ArgsFor("cuda:sm_90"), std::move(*copy));
    if (!optimized.ok()) {
      CheckRefusal("cuda:sm_90 O3", optimized.status());
    } else if (absl::Status s = gcomp::VerifyGraph(*optimized->graph); !s.ok()) {
      Finding("the cuda:sm_90 O3 graph does not verify", s);
    }
  }

  auto plan = gcomp::driver::CompileGraph(ArgsFor("cpu"), std::move(*graph), "fuzz.onnx");
  Trace("cpu O3 codegen", plan.status());
  if (!plan.ok()) {
    CheckRefusal("cpu O3 codegen", plan.status());
    return 0;
  }
  auto file = gcomp::plan::SerializePlan(**plan);
  if (!file.ok()) Finding("a compiled plan does not serialize", file.status());
  auto loaded = gcomp::plan::ReadPlanBytes(file->data(), file->size(), "fuzz.gplan");
  if (!loaded.ok()) Finding("a compiled plan does not load", loaded.status());
  const absl::Status run = gcomp::fuzz::RunOnGeneratedInputs(*loaded);
  Trace("cpu run", run);
  CheckRefusal("cpu run", run);
  // A run may fail on its data (an index out of range); a plan codegen just wrote must not be one
  // the runtime calls invalid.
  if (absl::StrContains(run.message(), "invalid plan")) Finding("the runtime refuses a compiled plan", run);
  return 0;
}
