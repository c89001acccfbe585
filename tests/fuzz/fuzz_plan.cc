// libFuzzer target: plan-file bytes -> load (container, hashes, program validation) -> a run on
// generated inputs within the per-input budget (tests/fuzz/plan_run.h). The mutator splits the
// file into its sections and changes the program's and the kernels' protobuf fields
// (tests/fuzz/proto_mutator.h), the header's fields, the weight bytes, or the section list, then
// reassembles the file with fresh hashes, so changes reach the validation behind the hashes; a
// fifth of the mutations are plain byte changes, which the hashes must catch.
// Findings: a crash or sanitizer report, an internal error, or a run past the budget.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "graph/op_def.h"
#include "plan/plan.pb.h"
#include "plan/plan_file.h"
#include "tests/fuzz/plan_run.h"
#include "tests/fuzz/proto_mutator.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

const gcomp::fuzz::ProtoMutator& Mutator() {
  static const gcomp::fuzz::ProtoMutator* m = new gcomp::fuzz::ProtoMutator(gcomp::AllOpNames());
  return *m;
}

// Mutates one serialized message of type T in place; false when it does not parse.
template <typename T>
bool MutateMessage(std::string* bytes, std::mt19937_64& rng) {
  T message;
  if (!message.ParseFromString(*bytes)) return false;
  for (uint64_t n = 1 + rng() % 3; n > 0; --n) Mutator().Mutate(&message, rng);
  return message.SerializeToString(bytes);
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::mt19937_64 rng(seed);
  gcomp::planfile::PlanHeader header;
  gcomp::plan::PlanSections sections;
  const std::string in(reinterpret_cast<const char*>(data), size);
  if (rng() % 5 == 0 || !gcomp::plan::SplitPlanFile(in, &header, &sections).ok() || sections.empty()) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  auto find = [&](const char* name) -> std::string* {
    for (auto& [n, b] : sections) {
      if (n == name) return &b;
    }
    return nullptr;
  };
  bool changed = false;
  switch (rng() % 10) {
    case 0: {  // the header's fields (its section list is rewritten on assembly)
      Mutator().Mutate(&header, rng);
      changed = true;
      break;
    }
    case 1: {
      if (std::string* k = find("kernels")) changed = MutateMessage<gcomp::planfile::PlanKernels>(k, rng);
      break;
    }
    case 2: {  // the weight bytes
      if (std::string* w = find("weights"); w != nullptr && !w->empty()) {
        const size_t at = rng() % w->size();
        const size_t n = std::min<size_t>(w->size() - at, 1 + rng() % 8);
        for (size_t i = at; i < at + n; ++i) (*w)[i] = static_cast<char>(rng());
        if (rng() % 4 == 0) w->resize(rng() % (w->size() + 1));
        changed = true;
      }
      break;
    }
    case 3: {  // the section list: one dropped, duplicated or moved
      const size_t i = rng() % sections.size(), j = rng() % sections.size();
      const uint64_t how = rng() % 3;
      if (how == 0) {
        sections.erase(sections.begin() + static_cast<std::ptrdiff_t>(i));
      } else if (how == 1) {
        sections.push_back(sections[i]);
      } else {
        std::swap(sections[i], sections[j]);
      }
      changed = true;
      break;
    }
    default: {
      if (std::string* p = find("program")) changed = MutateMessage<gcomp::planfile::PlanProgram>(p, rng);
      break;
    }
  }
  if (!changed) return LLVMFuzzerMutate(data, size, max_size);
  absl::StatusOr<std::string> out = gcomp::plan::AssemblePlanFile(header, sections);
  if (!out.ok() || out->size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out->data(), out->size());
  return out->size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto plan = gcomp::plan::ReadPlanBytes(data, size, "fuzz.gplan");
  gcomp::fuzz::Trace("fuzz_plan", "load", plan.status());
  if (!plan.ok()) return 0;
  const absl::Status s = gcomp::fuzz::RunOnGeneratedInputs(*plan);
  gcomp::fuzz::Trace("fuzz_plan", "run", s);
  if (s.code() == absl::StatusCode::kInternal) {
    std::fprintf(stderr, "a loaded plan's run failed with an internal error: %s\n", s.ToString().c_str());
    std::abort();
  }
  return 0;
}
