#include "frontend/tensor_proto.h"

#include <sys/stat.h>

#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/dim.h"
#include "core/status_macros.h"
#include "core/limits.h"
#include "onnx/onnx_pb.h"

namespace gcomp::frontend {
namespace {

namespace fs = std::filesystem;

std::string TensorLabel(const onnx::TensorProto& p) {
  return p.name().empty() ? std::string("tensor") : absl::StrCat("tensor '", p.name(), "'");
}

absl::Status Invalid(const onnx::TensorProto& p, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(TensorLabel(p), ": ", what));
}

// Resolves an external-data location inside `base_dir`, refusing anything that leaves it.
absl::StatusOr<std::string> ResolveExternalPath(const onnx::TensorProto& p, const std::string& location,
                                                const std::string& base_dir) {
  if (base_dir.empty()) return Invalid(p, "external data needs a model file folder (model loaded from memory)");
  fs::path loc(location);
  if (location.empty()) return Invalid(p, "external data has an empty location");
  if (loc.is_absolute()) return Invalid(p, absl::StrCat("external data location '", location, "' is absolute, expected a path inside the model folder"));
  for (const auto& part : loc) {
    if (part == "..") {
      return Invalid(p, absl::StrCat("external data location '", location, "' contains '..', expected a path inside the model folder"));
    }
  }
  std::error_code ec;
  fs::path base = fs::canonical(base_dir, ec);
  if (ec) return Invalid(p, absl::StrCat("model folder '", base_dir, "' cannot be resolved"));
  fs::path full = fs::canonical(base / loc, ec);
  if (ec) return Invalid(p, absl::StrCat("external data file '", location, "' not found in '", base_dir, "'"));
  auto rel = full.lexically_relative(base);
  if (rel.empty() || *rel.begin() == "..") {
    return Invalid(p, absl::StrCat("external data location '", location, "' resolves to '", full.string(),
                                   "', outside the model folder"));
  }
  return full.string();
}

absl::StatusOr<std::string> ReadExternal(const onnx::TensorProto& p, const std::string& base_dir,
                                         int64_t expected_bytes) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : p.external_data()) {
    auto parse = [&](int64_t* out) -> absl::Status {
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(kv.value().c_str(), &end, 10);
      if (kv.value().empty() || *end != '\0' || errno != 0 || v < 0) {
        return Invalid(p, absl::StrCat("external data ", kv.key(), " '", kv.value(), "' is not a non-negative integer"));
      }
      *out = v;
      return absl::OkStatus();
    };
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset") {
      RETURN_IF_ERROR(parse(&offset));
    } else if (kv.key() == "length") {
      RETURN_IF_ERROR(parse(&length));
    }
  }
  ASSIGN_OR_RETURN(std::string path, ResolveExternalPath(p, location, base_dir));
  if (length >= 0 && length != expected_bytes) {
    return Invalid(p, absl::StrCat("external data length is ", length, " bytes, expected ", expected_bytes,
                                   " for its dims and dtype"));
  }
  std::error_code ec;
  auto size = fs::file_size(path, ec);
  if (ec) return Invalid(p, absl::StrCat("cannot stat external data file '", location, "'"));
  if (offset > static_cast<int64_t>(size) || static_cast<int64_t>(size) - offset < expected_bytes) {
    return Invalid(p, absl::StrCat("external data file '", location, "' has ", size, " bytes, expected at least ",
                                   expected_bytes, " from offset ", offset));
  }
  std::ifstream f(path, std::ios::binary);
  f.seekg(offset);
  std::string bytes(static_cast<size_t>(expected_bytes), '\0');
  f.read(bytes.data(), expected_bytes);
  if (!f) return Invalid(p, absl::StrCat("reading external data file '", location, "' failed"));
  return bytes;
}

}  // namespace

absl::StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& p, const std::string& base_dir) {
  auto dtype = DTypeFromOnnx(p.data_type());
  if (!dtype) {
    return Invalid(p, absl::StrCat("has data type ", OnnxTypeName(p.data_type()),
                                   ", expected one of FLOAT, FLOAT16, BFLOAT16, FLOAT8E4M3FN, DOUBLE, INT64, INT32, INT8, UINT8, BOOL"));
  }
  if (p.has_segment()) return Invalid(p, "segmented tensors are not supported");
  std::vector<int64_t> dims(p.dims().begin(), p.dims().end());
  for (int64_t d : dims) {
    if (d < 0) return Invalid(p, absl::StrCat("has negative dimension ", d, " in [", absl::StrJoin(dims, ","), "]"));
  }
  if (absl::Status s = CheckRankAndDims(dims); !s.ok()) {
    return Invalid(p, absl::StrCat("dims [", absl::StrJoin(dims, ","), "]: ", s.message()));
  }
  auto numel = CheckedNumElements(dims);
  if (!numel.ok()) return Invalid(p, absl::StrCat("dims [", absl::StrJoin(dims, ","), "]: ", numel.status().message()));
  int64_t expected_bytes;
  if (__builtin_mul_overflow(*numel, static_cast<int64_t>(DTypeSize(*dtype)), &expected_bytes) ||
      expected_bytes > kMaxTensorBytes) {
    return Invalid(p, absl::StrCat("declares ", *numel, " elements [", absl::StrJoin(dims, ","),
                                   "], over the ", kMaxTensorBytes >> 30, " GiB tensor limit"));
  }
  const bool external = p.data_location() == onnx::TensorProto::EXTERNAL;
  // Validate the data's size before allocating anything of the declared size.
  int64_t present = -1;
  const char* field = "";
  if (external) {
    present = expected_bytes;  // checked against the file in ReadExternal
  } else if (p.has_raw_data()) {
    present = static_cast<int64_t>(p.raw_data().size());
    field = "raw_data";
    if (present != expected_bytes) {
      return Invalid(p, absl::StrCat("raw_data has ", present, " bytes, expected ", expected_bytes, " for dims [",
                                     absl::StrJoin(dims, ","), "] of ", DTypeName(*dtype)));
    }
  } else {
    switch (*dtype) {
      case DType::kF32: present = p.float_data_size(); field = "float_data"; break;
      case DType::kF64: present = p.double_data_size(); field = "double_data"; break;
      case DType::kI64: present = p.int64_data_size(); field = "int64_data"; break;
      default: present = p.int32_data_size(); field = "int32_data"; break;
    }
    if (present != *numel) {
      return Invalid(p, absl::StrCat(field, " has ", present, " elements, expected ", *numel, " for dims [",
                                     absl::StrJoin(dims, ","), "]"));
    }
  }
  // External data is read (after its file size is checked) before the tensor is allocated.
  std::string external_bytes;
  if (external) {
    ASSIGN_OR_RETURN(external_bytes, ReadExternal(p, base_dir, expected_bytes));
  }
  ASSIGN_OR_RETURN(Tensor t, Tensor::Zeros(*dtype, dims));
  if (external) {
    if (expected_bytes) std::memcpy(t.mutable_data(), external_bytes.data(), expected_bytes);
  } else if (p.has_raw_data()) {
    if (expected_bytes) std::memcpy(t.mutable_data(), p.raw_data().data(), expected_bytes);
  } else {
    for (int64_t i = 0; i < *numel; ++i) {
      switch (*dtype) {
        case DType::kF32: t.mutable_data_as<float>()[i] = p.float_data(i); break;
        case DType::kF64: t.mutable_data_as<double>()[i] = p.double_data(i); break;
        case DType::kI64: t.mutable_data_as<int64_t>()[i] = p.int64_data(i); break;
        case DType::kF16:
        case DType::kBF16: t.mutable_data_as<uint16_t>()[i] = static_cast<uint16_t>(p.int32_data(i)); break;
        case DType::kF8E4M3:
        case DType::kU8:
        case DType::kBool: t.mutable_data()[i] = static_cast<uint8_t>(p.int32_data(i)); break;
        case DType::kI8: t.mutable_data_as<int8_t>()[i] = static_cast<int8_t>(p.int32_data(i)); break;
        case DType::kI32: t.mutable_data_as<int32_t>()[i] = p.int32_data(i); break;
      }
    }
  }
  return t;
}

void TensorToProto(const Tensor& t, const std::string& name, onnx::TensorProto* proto) {
  proto->Clear();
  proto->set_name(name);
  proto->set_data_type(DTypeToOnnx(t.dtype()));
  for (int64_t d : t.dims()) proto->add_dims(d);
  proto->set_raw_data(std::string(reinterpret_cast<const char*>(t.data()), t.nbytes()));
}

absl::StatusOr<std::string> ReadFileBytes(const std::string& path, int64_t max_bytes) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return absl::NotFoundError(absl::StrCat(path, ": cannot open file"));
  if (!S_ISREG(st.st_mode)) return absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file"));
  if (st.st_size > max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": file has ", st.st_size, " bytes, over the limit of ", max_bytes));
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) return absl::NotFoundError(absl::StrCat(path, ": cannot open file"));
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  f.read(bytes.data(), st.st_size);
  if (!f) return absl::DataLossError(absl::StrCat(path, ": read failed"));
  return bytes;
}

absl::StatusOr<Tensor> ReadTensorFile(const std::string& path, std::string* name) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path, INT_MAX));
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a TensorProto file"));
  }
  auto t = TensorFromProto(proto, "");
  if (!t.ok()) return absl::Status(t.status().code(), absl::StrCat(path, ": ", t.status().message()));
  if (name) *name = proto.name();
  return t;
}

absl::Status WriteTensorFile(const std::string& path, const std::string& name, const Tensor& t) {
  onnx::TensorProto proto;
  TensorToProto(t, name, &proto);
  std::ofstream f(path, std::ios::binary);
  if (!f || !proto.SerializeToOstream(&f)) {
    return absl::PermissionDeniedError(absl::StrCat(path, ": cannot write file"));
  }
  return absl::OkStatus();
}

}  // namespace gcomp::frontend
