// ONNX TensorProto <-> gcomp Tensor, including external data resolved inside a model folder.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "core/tensor.h"

namespace onnx {
class TensorProto;
}

namespace gcomp::frontend {

// Converts a TensorProto. Every declared size is validated against the data actually present
// before anything proportional to it is allocated. External data is read from `base_dir` only:
// absolute locations, `..` components and links that leave the folder are refused; an empty
// `base_dir` refuses external data altogether.
absl::StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& proto, const std::string& base_dir);

// Writes `t` into `proto` (raw_data form).
void TensorToProto(const Tensor& t, const std::string& name, onnx::TensorProto* proto);

// A TensorProto file as used by ONNX test data (input_0.pb ...). `name` receives the tensor name.
absl::StatusOr<Tensor> ReadTensorFile(const std::string& path, std::string* name = nullptr);
absl::Status WriteTensorFile(const std::string& path, const std::string& name, const Tensor& t);

// Reads a whole file, refusing files over `max_bytes`.
absl::StatusOr<std::string> ReadFileBytes(const std::string& path, int64_t max_bytes);

}  // namespace gcomp::frontend
