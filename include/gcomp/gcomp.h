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
  std::vector<int64_t> per_batch;  // how much each dim grows per batch item (0 where it does not)

  // The dims at batch `batch` (dim = shape + per_batch * (batch - 1)).
  std::vector<int64_t> ShapeAt(int64_t batch) const {
    std::vector<int64_t> out = shape;
    for (size_t k = 0; k < out.size() && k < per_batch.size(); ++k) out[k] += per_batch[k] * (batch - 1);
    return out;
  }
};

class Plan {
 public:
  // Maps and validates a plan file (corrupt, truncated, newer-format or foreign-ISA files are refused).
  static Result<std::shared_ptr<const Plan>> Load(const std::string& path);
  // The same from a plan file's bytes in memory (copied).
  static Result<std::shared_ptr<const Plan>> LoadFromMemory(const void* data, size_t size);

  // The plan file's bytes (the same plan gives the same bytes), and writing them to `path`.
  Result<std::string> Serialize() const;
  Status Save(const std::string& path) const;

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

// In-process compilation, as `gcomp compile` does it (libgcomp.so; same options and messages).
struct CompileOptions {
  std::string target = "cpu";       // cpu, cuda (= cuda:sm_90), cuda:sm_80
  std::string precision = "fp32";   // fp32, tf32, fp16, bf16, fp8
  std::string level = "O3";         // O0..O3
  int64_t batch = 0;                // a dynamic-batch model's maximum batch (0: the default)
  std::string keep_fp32;            // --keep-fp32: regex of node names and ops kept in fp32
  std::string calibration;          // --calibration: folder of input_K.pb samples (fp8)
};
// An ONNX model file (external data beside it) compiled into a plan.
Result<std::shared_ptr<const Plan>> Compile(const std::string& model_path, const CompileOptions& options = {});
// A serialized ONNX model in memory (`name` labels it in messages and in the plan; no external data).
Result<std::shared_ptr<const Plan>> CompileBytes(const void* model, size_t size, const CompileOptions& options = {},
                                                 const std::string& name = "model.onnx");

// `gcomp inspect`: a model optimized for the options printed as text, dot, json or html, or a plan
// file's header, memory and steps as text or json (plan options do not apply).
struct InspectOptions {
  std::string target = "cpu";
  std::string level = "O3";
  std::string precision = "fp32";
  std::string format = "text";
  std::string calibration;  // fp8
};
Result<std::string> Inspect(const std::string& path, const InspectOptions& options = {});

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
  // Inputs and preallocated outputs in the backend's memory, by name (every plan input and output),
  // read and written in place. cuda plans: device memory, enqueued on the session's stream with no
  // copy and no synchronization (the outputs are ready when the caller's stream,
  // SessionOptions::stream, or a later Run has synchronized). cpu plans: host memory, run at once.
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
