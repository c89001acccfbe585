// The gcomp Python module (gcomp._gcomp, re-exported by gcomp/__init__.py): compile, load, inspect,
// Plan and Session over the C++ API of libgcomp.so, with NumPy arrays in and out.
//
// Session.run reads a C-contiguous input of the plan's dtype in place (no copy) and converts any
// other array once; cpu plans write their outputs straight into new NumPy arrays (the cpu backend's
// RunOnDevice on host memory), cuda plans hand over the host copy the session makes. The GIL is
// released while a plan compiles or runs. Errors raise gcomp.Error subclasses (set by
// gcomp/__init__.py) carrying the messages the CLI prints.
#include <gcomp/gcomp.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace nb = nanobind;

namespace {

// The exception types of gcomp/__init__.py: [Error, InvalidArgumentError, NotFoundError].
std::vector<nb::object> error_types;

[[noreturn]] void Raise(const gcomp::Status& s) {
  PyObject* type = PyExc_RuntimeError;
  if (error_types.size() == 3) {
    type = (s.code() == gcomp::StatusCode::kInvalidArgument ? error_types[1]
            : s.code() == gcomp::StatusCode::kNotFound      ? error_types[2]
                                                            : error_types[0])
               .ptr();
  }
  PyErr_SetString(type, s.message().c_str());
  throw nb::python_error();
}

[[noreturn]] void RaiseInvalid(const std::string& message) {
  Raise(gcomp::Status(gcomp::StatusCode::kInvalidArgument, message));
}

template <typename T>
T Take(gcomp::Result<T> r) {
  if (!r.ok()) Raise(r.status());
  return std::move(*r);
}

const char* NumpyName(gcomp::DataType t) {
  switch (t) {
    case gcomp::DataType::kFloat32: return "float32";
    case gcomp::DataType::kFloat16: return "float16";
    case gcomp::DataType::kBFloat16: return "bfloat16";
    case gcomp::DataType::kFloat8E4M3: return "float8_e4m3fn";
    case gcomp::DataType::kFloat64: return "float64";
    case gcomp::DataType::kInt64: return "int64";
    case gcomp::DataType::kInt32: return "int32";
    case gcomp::DataType::kInt8: return "int8";
    case gcomp::DataType::kUInt8: return "uint8";
    case gcomp::DataType::kBool: return "bool";
  }
  return "unknown";
}

nb::dlpack::dtype DlpackOf(gcomp::DataType t) {
  using nb::dlpack::dtype_code;
  switch (t) {
    case gcomp::DataType::kFloat32: return {static_cast<uint8_t>(dtype_code::Float), 32, 1};
    case gcomp::DataType::kFloat16: return {static_cast<uint8_t>(dtype_code::Float), 16, 1};
    case gcomp::DataType::kBFloat16: return {static_cast<uint8_t>(dtype_code::Bfloat), 16, 1};
    case gcomp::DataType::kFloat64: return {static_cast<uint8_t>(dtype_code::Float), 64, 1};
    case gcomp::DataType::kInt64: return {static_cast<uint8_t>(dtype_code::Int), 64, 1};
    case gcomp::DataType::kInt32: return {static_cast<uint8_t>(dtype_code::Int), 32, 1};
    case gcomp::DataType::kInt8: return {static_cast<uint8_t>(dtype_code::Int), 8, 1};
    case gcomp::DataType::kBool: return {static_cast<uint8_t>(dtype_code::Bool), 8, 1};
    case gcomp::DataType::kUInt8:
    case gcomp::DataType::kFloat8E4M3: return {static_cast<uint8_t>(dtype_code::UInt), 8, 1};
  }
  return {static_cast<uint8_t>(dtype_code::UInt), 8, 1};
}

struct PyPlan {
  std::shared_ptr<const gcomp::Plan> plan;
};

struct PyTensorInfo {
  std::string name, dtype;
  std::vector<int64_t> shape;
  std::vector<bool> batch_dims;
};

std::vector<PyTensorInfo> Infos(const std::vector<gcomp::TensorInfo>& list) {
  std::vector<PyTensorInfo> out;
  for (const gcomp::TensorInfo& t : list) out.push_back({t.name, NumpyName(t.dtype), t.shape, t.batch_dims});
  return out;
}

// The bytes of a dense tensor (negative dims count as 0).
size_t Bytes(gcomp::DataType t, const std::vector<int64_t>& shape) {
  size_t n = gcomp::DataTypeSize(t);
  for (int64_t d : shape) n *= static_cast<size_t>(std::max<int64_t>(d, 0));
  return n;
}

// A new NumPy array of `shape` and `t` owning `bytes` (moved in).
nb::object NewArray(std::vector<uint8_t> bytes, const std::vector<int64_t>& shape, gcomp::DataType t) {
  auto* owned = new std::vector<uint8_t>(std::move(bytes));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<uint8_t>*>(p); });
  std::vector<size_t> dims(shape.begin(), shape.end());
  return nb::ndarray<nb::numpy>(owned->data(), dims.size(), dims.data(), owner, nullptr, DlpackOf(t)).cast();
}

class PySession {
 public:
  PySession(const PyPlan& plan, int threads, int device) : plan_(plan.plan) {
    if (threads < 1 || threads > 1024) RaiseInvalid("threads " + std::to_string(threads) + ", expected 1..1024");
    gcomp::SessionOptions o;
    o.threads = threads;
    o.device = device;
    session_ = Take(gcomp::Session::Create(plan_, o));
    inputs_ = plan_->inputs();
    outputs_ = plan_->outputs();
    host_ = plan_->target() == "cpu";
  }

  nb::dict Run(nb::dict feeds) {
    nb::module_ np = nb::module_::import_("numpy");
    std::vector<nb::object> keep;  // converted arrays, alive until the run ends
    std::vector<gcomp::DeviceTensor> views;
    for (auto [key, value] : feeds) {
      if (!nb::isinstance<nb::str>(key)) RaiseInvalid("input names must be strings");
      const std::string name = nb::cast<std::string>(key);
      const gcomp::TensorInfo* info = nullptr;
      for (const gcomp::TensorInfo& t : inputs_) info = t.name == name ? &t : info;
      if (!info) RaiseInvalid("the plan has no input '" + name + "'");
      nb::object array = nb::borrow(value);
      nb::ndarray<nb::ro> a;  // read-only arrays too: inputs are only read
      const nb::dlpack::dtype want = DlpackOf(info->dtype);
      if (!nb::try_cast(array, a, false) || a.dtype() != want || !IsCContiguous(a)) {
        // One conversion (dtype and/or layout), from numbers only.
        if (info->dtype == gcomp::DataType::kBFloat16 || info->dtype == gcomp::DataType::kFloat8E4M3) {
          RaiseInvalid("input '" + name + "' must be a C-contiguous " + NumpyName(info->dtype) + " array");
        }
        array = np.attr("asarray")(array);
        nb::object dtype = array.attr("dtype");
        const std::string kind = nb::cast<std::string>(nb::str(dtype.attr("kind")));
        if (kind.size() != 1 || std::string("biuf").find(kind[0]) == std::string::npos) {
          RaiseInvalid("input '" + name + "' is an array of " + nb::cast<std::string>(nb::str(dtype)) +
                       ", expected numbers (the plan reads " + NumpyName(info->dtype) + ")");
        }
        array = np.attr("ascontiguousarray")(array, nb::arg("dtype") = NumpyName(info->dtype));
        keep.push_back(array);
        a = nb::cast<nb::ndarray<nb::ro>>(array);
      } else {
        keep.push_back(array);
      }
      gcomp::DeviceTensor v;
      v.name = name;
      v.dtype = info->dtype;
      for (size_t k = 0; k < a.ndim(); ++k) v.shape.push_back(static_cast<int64_t>(a.shape(k)));
      v.data = const_cast<void*>(a.data());
      views.push_back(std::move(v));
    }
    nb::dict result;
    if (host_) {
      const int64_t batch = BatchOf(views);
      std::vector<std::vector<uint8_t>> buffers;
      std::vector<gcomp::DeviceTensor> outs;
      for (const gcomp::TensorInfo& t : outputs_) {
        gcomp::DeviceTensor o{t.name, t.dtype, t.ShapeAt(batch), nullptr};
        buffers.emplace_back(std::max<size_t>(Bytes(t.dtype, o.shape), 1));
        o.data = buffers.back().data();
        outs.push_back(std::move(o));
      }
      gcomp::Status s;
      {
        nb::gil_scoped_release release;
        s = session_->RunOnDevice(views, outs);
      }
      if (!s.ok()) Raise(s);
      for (size_t k = 0; k < outs.size(); ++k) {
        result[outs[k].name.c_str()] = NewArray(std::move(buffers[k]), outs[k].shape, outs[k].dtype);
      }
      return result;
    }
    std::vector<gcomp::HostTensor> host;
    for (const gcomp::DeviceTensor& v : views) {
      gcomp::HostTensor h;
      h.name = v.name;
      h.dtype = v.dtype;
      h.shape = v.shape;
      const auto* p = static_cast<const uint8_t*>(v.data);
      h.data.assign(p, p + Bytes(v.dtype, v.shape));
      host.push_back(std::move(h));
    }
    gcomp::Result<std::vector<gcomp::HostTensor>> out = gcomp::Status(gcomp::StatusCode::kInternal, "not run");
    {
      nb::gil_scoped_release release;
      out = session_->Run(host);
    }
    for (gcomp::HostTensor& h : Take(std::move(out))) {
      const std::string name = h.name;
      result[name.c_str()] = NewArray(std::move(h.data), h.shape, h.dtype);
    }
    return result;
  }

 private:
  static bool IsCContiguous(const nb::ndarray<nb::ro>& a) {
    int64_t expect = 1;
    for (size_t k = a.ndim(); k-- > 0;) {
      if (a.shape(k) != 1 && a.stride(k) != expect) return false;
      expect *= static_cast<int64_t>(a.shape(k));
    }
    return true;
  }

  // The batch the inputs' dims say (the session checks every dim against it).
  int64_t BatchOf(const std::vector<gcomp::DeviceTensor>& views) const {
    for (const gcomp::DeviceTensor& v : views) {
      for (const gcomp::TensorInfo& t : inputs_) {
        if (t.name != v.name) continue;
        for (size_t k = 0; k < t.shape.size() && k < v.shape.size(); ++k) {
          if (t.per_batch[k] > 0) {
            const int64_t fixed = t.shape[k] - t.per_batch[k];
            if (v.shape[k] > fixed && (v.shape[k] - fixed) % t.per_batch[k] == 0) {
              return (v.shape[k] - fixed) / t.per_batch[k];
            }
            RaiseInvalid("input '" + v.name + "' dim " + std::to_string(k) + " is " + std::to_string(v.shape[k]) +
                         ", which no batch size gives");
          }
        }
      }
    }
    return 1;
  }

  std::shared_ptr<const gcomp::Plan> plan_;
  std::unique_ptr<gcomp::Session> session_;
  std::vector<gcomp::TensorInfo> inputs_, outputs_;
  bool host_ = false;
};

gcomp::CompileOptions CompileOptionsOf(const std::string& target, const std::string& precision,
                                       const std::string& level, int64_t batch,
                                       const std::optional<std::string>& keep_fp32,
                                       const std::optional<std::string>& calibration) {
  gcomp::CompileOptions o;
  o.target = target;
  o.precision = precision;
  o.level = level;
  o.batch = batch;
  if (keep_fp32) o.keep_fp32 = *keep_fp32;
  if (calibration) o.calibration = *calibration;
  return o;
}

}  // namespace

NB_MODULE(_gcomp, m) {
  m.doc() = "gcomp: an ONNX model compiler for ResNet and ViT models (compile, load, inspect, run)";
  m.def("_set_error_types", [](nb::object base, nb::object invalid, nb::object not_found) {
    error_types = {base, invalid, not_found};
  });
  m.attr("__version__") = "0.1.0";

  nb::class_<PyTensorInfo>(m, "TensorInfo", "A plan input or output: dims at batch 1 and which grow with the batch")
      .def_ro("name", &PyTensorInfo::name)
      .def_ro("dtype", &PyTensorInfo::dtype)
      .def_ro("shape", &PyTensorInfo::shape)
      .def_ro("batch_dims", &PyTensorInfo::batch_dims)
      .def("__repr__", [](const PyTensorInfo& t) {
        std::string dims;
        for (size_t k = 0; k < t.shape.size(); ++k) {
          dims += (k ? "," : "") + (t.batch_dims[k] ? std::string("batch") : std::to_string(t.shape[k]));
        }
        return "TensorInfo(" + t.name + ": " + t.dtype + "[" + dims + "])";
      });

  nb::class_<PyPlan>(m, "Plan", "A compiled plan (immutable; shared by any number of sessions)")
      .def_prop_ro("target", [](const PyPlan& p) { return p.plan->target(); })
      .def_prop_ro("precision", [](const PyPlan& p) { return p.plan->precision(); })
      .def_prop_ro("max_batch", [](const PyPlan& p) { return p.plan->max_batch(); })
      .def_prop_ro("inputs", [](const PyPlan& p) { return Infos(p.plan->inputs()); })
      .def_prop_ro("outputs", [](const PyPlan& p) { return Infos(p.plan->outputs()); })
      .def("save", [](const PyPlan& p, const std::string& path) {
        gcomp::Status s = p.plan->Save(path);
        if (!s.ok()) Raise(s);
      }, nb::arg("path"), "Writes the plan file.")
      .def("to_bytes", [](const PyPlan& p) {
        std::string b = Take(p.plan->Serialize());
        return nb::bytes(b.data(), b.size());
      }, "The plan file's bytes.")
      .def("__repr__", [](const PyPlan& p) {
        return "Plan(target=" + p.plan->target() + ", precision=" + p.plan->precision() +
               ", max_batch=" + std::to_string(p.plan->max_batch()) + ")";
      });

  nb::class_<PySession>(m, "Session", "Runs a plan; one thread at a time per session")
      .def(nb::init<const PyPlan&, int, int>(), nb::arg("plan"), nb::arg("threads") = 1, nb::arg("device") = 0)
      .def("run", &PySession::Run, nb::arg("inputs"),
           "Runs the plan on {name: array}; returns {name: array} in the plan's output order.");

  m.def("load", [](const std::string& path) { return PyPlan{Take(gcomp::Plan::Load(path))}; }, nb::arg("path"),
        "Loads a plan file.");
  m.def("load_bytes", [](nb::bytes data) {
    return PyPlan{Take(gcomp::Plan::LoadFromMemory(data.c_str(), data.size()))};
  }, nb::arg("data"), "A plan from a plan file's bytes.");

  m.def("compile", [](nb::object model, const std::string& target, const std::string& precision,
                      const std::string& level, std::optional<int64_t> batch, std::optional<std::string> keep_fp32,
                      std::optional<std::string> calibration) {
    const gcomp::CompileOptions o = CompileOptionsOf(target, precision, level, batch.value_or(0), keep_fp32,
                                                     calibration);
    gcomp::Result<std::shared_ptr<const gcomp::Plan>> r = gcomp::Status(gcomp::StatusCode::kInternal, "not compiled");
    if (nb::isinstance<nb::bytes>(model)) {
      const std::string bytes(nb::cast<nb::bytes>(model).c_str(), nb::cast<nb::bytes>(model).size());
      nb::gil_scoped_release release;
      r = gcomp::CompileBytes(bytes.data(), bytes.size(), o);
    } else {
      const std::string path = nb::cast<std::string>(nb::str(model));
      nb::gil_scoped_release release;
      r = gcomp::Compile(path, o);
    }
    return PyPlan{Take(std::move(r))};
  }, nb::arg("model"), nb::arg("target") = "cpu", nb::arg("precision") = "fp32", nb::arg("level") = "O3",
     nb::arg("batch") = nb::none(), nb::arg("keep_fp32") = nb::none(), nb::arg("calibration") = nb::none(),
     "Compiles an ONNX model (a path or its bytes) into a Plan, as `gcomp compile` does.");

  m.def("inspect", [](const std::string& path, const std::string& level, const std::string& target,
                      const std::string& format, const std::string& precision,
                      std::optional<std::string> calibration) {
    gcomp::InspectOptions o;
    o.level = level;
    o.target = target;
    o.format = format;
    o.precision = precision;
    if (calibration) o.calibration = *calibration;
    gcomp::Result<std::string> r = gcomp::Status(gcomp::StatusCode::kInternal, "not inspected");
    {
      nb::gil_scoped_release release;
      r = gcomp::Inspect(path, o);
    }
    return Take(std::move(r));
  }, nb::arg("model"), nb::arg("level") = "O3", nb::arg("target") = "cpu", nb::arg("format") = "text",
     nb::arg("precision") = "fp32", nb::arg("calibration") = nb::none(),
     "`gcomp inspect`: the model optimized for the target as text, dot, json or html (a plan: text or json).");
}
