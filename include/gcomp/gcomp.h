// gcomp runtime API: load a compiled plan (`gcomp compile MODEL.onnx -o MODEL.gplan`) and run it.
//
//   auto plan = gcomp::Plan::Load("resnet50.gplan");
//   if (!plan.ok()) { std::cerr << plan.status().message(); return 1; }
//   auto session = gcomp::Session::Create(*plan, {.threads = 2});
//   gcomp::HostTensor image = gcomp::HostTensor::Float32("input", {1, 3, 224, 224}, pixels);
//   auto outputs = (*session)->Run({image});   // outputs in the plan's order
//
// One plan is shared read-only by any number of sessions; a session is used by one thread at a
// time. The batch may vary from run to run up to the plan's maximum (compile --batch N).
// This header depends on the C++ standard library only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace gcomp {

enum class StatusCode { kOk = 0, kInvalidArgument = 1, kNotFound = 2, kResourceExhausted = 3, kUnimplemented = 4,
                        kInternal = 5 };

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// A value or the Status saying why there is none.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}           // NOLINT(google-explicit-constructor)
  // An OK status carries no value: it becomes an internal error rather than an empty success.
  Result(Status status)  // NOLINT(google-explicit-constructor)
      : v_(status.ok() ? Status(StatusCode::kInternal, "Result constructed from an OK status without a value")
                       : std::move(status)) {}
  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }
  T& value() { return std::get<T>(v_); }
  const T& value() const { return std::get<T>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

enum class DataType { kFloat32, kFloat16, kBFloat16, kFloat8E4M3, kFloat64, kInt64, kInt32, kInt8, kUInt8, kBool };
const char* DataTypeName(DataType t);
size_t DataTypeSize(DataType t);

// A named tensor in host memory, row-major.
struct HostTensor {
  std::string name;
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  static HostTensor Float32(std::string name, std::vector<int64_t> shape, const std::vector<float>& values);
  int64_t num_elements() const;
  // The data as floats (fp16/bf16 converted); empty for integer types.
  std::vector<float> ToFloat32() const;
};

// A plan input or output: its name, type, and dims at batch 1; batch_dims says which dims grow
// with the batch.
struct TensorInfo {
  std::string name;
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> shape;    // at batch 1
  std::vector<bool> batch_dims;  // which dims grow with the batch
};

class Plan {
 public:
  // Maps and validates a plan file (corrupt, truncated, newer-format or foreign-ISA files are refused).
  static Result<std::shared_ptr<const Plan>> Load(const std::string& path);

  std::string target() const;
  std::string precision() const;
  int64_t max_batch() const;
  std::vector<TensorInfo> inputs() const;
  std::vector<TensorInfo> outputs() const;

  struct Impl;
  explicit Plan(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  const Impl& impl() const { return *impl_; }

 private:
  std::shared_ptr<const Impl> impl_;
};

struct SessionOptions {
  // Kernel threads. Each run sets OpenMP's thread count on the calling thread and OpenBLAS's
  // process-wide count to this value; sessions with different counts running at the same time in
  // one process may see each other's OpenBLAS setting (the cpu kernels run OpenBLAS single-threaded
  // inside their own OpenMP tiles, so this only matters for the OpenBLAS fallback entries).
  int threads = 1;
  // cuda plans: the device, a cudaStream_t the caller owns (nullptr: the session creates one; runs
  // are enqueued on it), and whether runs replay one CUDA graph per batch size (false: step by step).
  int device = 0;
  void* stream = nullptr;
  bool cuda_graphs = true;
};

// A tensor in device memory, for cuda plans' zero-copy runs.
struct DeviceTensor {
  std::string name;
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> shape;
  void* data = nullptr;
};

class Session {
 public:
  static Result<std::unique_ptr<Session>> Create(std::shared_ptr<const Plan> plan, SessionOptions options = {});
  ~Session();

  // Inputs by name (every plan input); returns the outputs in the plan's order.
  Result<std::vector<HostTensor>> Run(const std::vector<HostTensor>& inputs);
  // cuda plans: inputs and preallocated outputs in device memory, by name (every plan input and
  // output). Enqueued on the session's stream with no copy and no synchronization: the outputs are
  // ready when the caller's stream (SessionOptions::stream) or a later Run has synchronized.
  Status RunOnDevice(const std::vector<DeviceTensor>& inputs, const std::vector<DeviceTensor>& outputs);
  // Kernel launches by kernel id, counted as they ran.
  std::map<std::string, int64_t> kernel_launches() const;
  // Per step, the algorithm its kernel chose for the last run's batch (cuda: cuBLASLt algorithm,
  // cuDNN engine or generated function; empty strings for backends without such choices).
  std::vector<std::string> step_algorithms() const;
  // The session's memory, one line (cuda: device bytes of weights, shared by the plan's sessions,
  // arenas, I/O buffers and workspace; empty for host backends).
  std::string memory_info() const;

  struct Impl;

 private:
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gcomp
