// What every executor does with a plan before and around running its kernels, independent of
// where the memory lives: the entries of the plan's steps (checked against the backend's table),
// the batch size of a run's inputs, the buffers' capacities at a batch (a crafted plan could give
// a buffer fewer bytes than its dims need), and each step's KernelSpec at a batch.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "plan/plan.h"
#include "runtime/backend_kernels.h"

namespace gcomp::runtime {

// A run's input as the batch check sees it (a host tensor or a device pointer's declaration).
struct InputDecl {
  DType dtype = DType::kF32;
  std::vector<int64_t> dims;
};

// The plan checked against `backend` (CheckPlanForBackend), every step's parameter blob against its
// entry and its in-place pairs against those the entry allows; the entries, per step.
absl::StatusOr<std::vector<const KernelEntry*>> CheckedEntries(const plan::Plan& plan, const BackendKernels& backend);

// The batch size of a run: every plan input present with its dtype and dims for one batch in
// [1, max_batch]; no unknown input.
absl::StatusOr<int64_t> BatchOf(const plan::Plan& plan, const std::map<std::string, InputDecl>& inputs);

// Every buffer's bytes at `batch` fit the memory it resolves to; steps write only arena or output
// memory; a step's outputs share no bytes with each other or with its inputs, except an input it
// writes over in place from the same address.
absl::Status CheckCapacities(const plan::Plan& plan, int64_t batch);

std::vector<int64_t> DimsAt(const plan::Buffer& b, int64_t batch);
// The buffer whose memory `id` uses (through aliases).
int RootBuffer(const plan::Plan& plan, int id);
// Step `s` as its kernel sees it at `batch` (constants point into the plan's host weights).
KernelSpec SpecAt(const plan::Plan& plan, const plan::Step& s, int64_t batch, int threads);

// Where buffer `id`'s memory is at `batch`, aliases resolved to their roots: which memory (its
// root's kind: the batch arena, the fixed arena, the weights, a run input or output), the byte
// offset in it (batch-arena offsets scaled by the batch; 0 in a caller's tensor) and the caller
// tensor's io_index (-1 elsewhere). BufferAddresses and CheckCapacities' overlap rule both use it.
struct BufferPlace {
  plan::BufferKind kind = plan::BufferKind::kAlias;
  int64_t offset = 0;
  int64_t io_index = -1;
};
BufferPlace PlaceAt(const plan::Plan& plan, int id, int64_t batch);

// Every buffer's memory at `batch` (PlaceAt's), as addresses.
std::vector<uint8_t*> BufferAddresses(const plan::Plan& plan, int64_t batch, uint8_t* batch_arena, uint8_t* fixed_arena,
                                      const uint8_t* weights, const std::vector<uint8_t*>& inputs,
                                      const std::vector<uint8_t*>& outputs);

// "step 'NAME' (OP, kernel ID): message" with the status's code.
absl::Status StepError(const plan::Step& s, const absl::Status& st);

}  // namespace gcomp::runtime
