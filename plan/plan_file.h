// The plan file (DESIGN.md "File format"):
//   bytes 0..7    magic "GCPLAN\0\n"
//   bytes 8..11   header length H (little-endian u32)
//   bytes 12..    PlanHeader (protobuf, deterministic serialization): format version, target, ISA,
//                 gcomp and library versions, and per section: name, offset, size, XXH64 hash
//   then sections, each at a 64-byte aligned offset: "program" (PlanProgram protobuf: buffers,
//   steps, inputs/outputs, memory figures) and "weights" (raw packed bytes).
// Loading maps the file (mmap), checks magic, version, sizes and every section's hash, and
// validates the program (indices, offsets and sizes in range) before anything uses it.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "plan/plan.h"

namespace gcomp::planfile {
class PlanHeader;  // plan/plan.pb.h
}  // namespace gcomp::planfile

namespace gcomp::plan {

// The file's bytes. The same plan gives the same bytes (no map iteration order or pointers leak in).
absl::StatusOr<std::string> SerializePlan(const Plan& plan);
absl::Status WritePlanFile(const Plan& plan, const std::string& path);

// Loads and validates a plan file; errors are InvalidArgument naming the file and what is wrong
// (truncated, bad magic, newer format version, hash mismatch of section S, invalid program).
// The returned plan's weights point into the mapping it keeps alive.
absl::StatusOr<std::shared_ptr<const Plan>> ReadPlanFile(const std::string& path);
// The same from bytes in memory (copied; `label` names them in errors, as the path does for a file).
absl::StatusOr<std::shared_ptr<const Plan>> ReadPlanBytes(const void* data, size_t size, const std::string& label);

// The checks ReadPlanFile makes on the program once the hashes match (buffer and step indices,
// dims, dtypes, alias chains, offsets within the weights and arenas, inputs/outputs); errors are
// InvalidArgument "invalid plan: ...". Codegen may call it before writing.
absl::Status ValidatePlan(const Plan& plan);

// The container alone, for tools that rewrite a plan's sections on purpose (the plan fuzzer's
// mutator, plan-damage tests): SplitPlanFile reads the header's fields and every section's name
// and bytes in file order, checking only the framing (no hash, no program); AssemblePlanFile
// writes `header`'s fields and `sections` in that order at aligned offsets, with sizes and hashes
// computed as SerializePlan computes them (so an unchanged split assembles to the same bytes).
using PlanSections = std::vector<std::pair<std::string, std::string>>;
absl::Status SplitPlanFile(const std::string& bytes, planfile::PlanHeader* header, PlanSections* sections);
absl::StatusOr<std::string> AssemblePlanFile(const planfile::PlanHeader& header, const PlanSections& sections);

// Whether `bytes` start with the plan magic (the CLI uses it to tell a plan from an ONNX model).
bool LooksLikePlan(const std::string& path);

}  // namespace gcomp::plan
