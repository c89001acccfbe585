// libFuzzer target: TensorProto bytes as `gcomp run --input` and `gcomp check` read them
// (frontend::TensorFromProto, no folder for external data). Refusals are statuses; an accepted
// tensor holds exactly as many bytes as its dims and dtype say, and all of them are readable.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "core/tensor.h"
#include "frontend/tensor_proto.h"
#include "onnx/onnx_pb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  onnx::TensorProto proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size))) return 0;
  absl::StatusOr<gcomp::Tensor> t = gcomp::frontend::TensorFromProto(proto, "");
  if (!t.ok()) return 0;
  if (t->nbytes() != static_cast<size_t>(t->numel()) * gcomp::DTypeSize(t->dtype())) {
    std::fprintf(stderr, "a tensor of %lld elements holds %zu bytes\n", static_cast<long long>(t->numel()),
                 t->nbytes());
    std::abort();
  }
  uint8_t sum = 0;
  for (size_t i = 0; i < t->nbytes(); ++i) sum = static_cast<uint8_t>(sum ^ t->data()[i]);
  volatile uint8_t sink = sum;
  (void)sink;
  return 0;
}
