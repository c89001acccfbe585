// Executes a plan (codegen/plan.h) on the cpu backend: kernels created per batch size from the
// plan's steps (create -> reshape -> run), activations in the plan's arenas, launches counted.
// One plan is shared read-only by any number of sessions; a session is used by one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "plan/plan.h"
#include "core/tensor.h"
#include "runtime/cpu/kernel.h"

namespace gcomp::runtime {

struct SessionOptions {
  // Threads for the kernels (OpenMP and OpenBLAS thread pools are process-wide: the last session
  // to run sets them).
  int threads = 1;
  bool profile = false;  // time every step (step_times())
};

class Session {
 public:
  static absl::StatusOr<std::unique_ptr<Session>> Create(std::shared_ptr<const plan::Plan> plan,
                                                         const SessionOptions& options);
  ~Session();

  // Runs the plan on named inputs (every plan input, dtype and dims matching the plan for some
  // batch in [1, max_batch]); returns the outputs in plan order.
  absl::StatusOr<std::vector<Tensor>> Run(const std::map<std::string, Tensor>& inputs);

  const plan::Plan& plan() const { return *plan_; }
  // Kernel launches by kernel id since the session was created, counted as they ran.
  const std::map<std::string, int64_t>& launches() const { return launches_; }
  // With options.profile: accumulated seconds per step index.
  const std::vector<double>& step_seconds() const { return step_seconds_; }
  // The batch of the last run.
  int64_t batch() const { return batch_; }

 private:
  Session(std::shared_ptr<const plan::Plan> plan, const SessionOptions& options);
  absl::Status Reshape(int64_t batch);
  absl::Status CheckCapacities(int64_t batch) const;
  absl::StatusOr<int64_t> BatchOf(const std::map<std::string, Tensor>& inputs) const;
  std::vector<int64_t> DimsAt(const plan::Buffer& b, int64_t batch) const;
  int Root(int id) const;

  std::shared_ptr<const plan::Plan> plan_;
  SessionOptions options_;
  struct Prepared {
    std::vector<std::unique_ptr<cpu::Kernel>> kernels;
  };
  std::map<int64_t, Prepared> prepared_;
  int64_t batch_ = 0;
  uint8_t* batch_arena_ = nullptr;
  int64_t batch_arena_capacity_ = 0;
  uint8_t* fixed_arena_ = nullptr;
  std::map<std::string, int64_t> launches_;
  std::vector<double> step_seconds_;
};

}  // namespace gcomp::runtime
