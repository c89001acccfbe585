#include "runtime/cuda/sdpa_desc.h"

#include "absl/strings/str_cat.h"

namespace gcomp::cuda {
namespace {

// Dims {B, H, S, D} and their strides for one operand of `a`'s layout.
void Layout(const runtime::AttentionShape& a, int64_t heads, int64_t seq, int64_t width, std::vector<int64_t>* dims,
            std::vector<int64_t>* strides) {
  *dims = {a.batch, heads, seq, width};
  if (a.packed) {
    *strides = {seq * heads * width, width, heads * width, 1};
  } else {
    *strides = {heads * seq * width, seq * width, width, 1};
  }
}

}  // namespace

std::string SdpaDesc::Describe() const {
  const bool packed = q_strides[1] < q_strides[2];
  return absl::StrCat("cuDNN SDPA ", DTypeName(io_type), ": ", q_dims[1], " heads (", k_dims[1], " K/V heads), ",
                      q_dims[2], "x", k_dims[2], " positions, head ", q_dims[3], "/", v_dims[3], ", ",
                      packed ? "packed [B,S,H*D]" : "[B,H,S,D]", ", scale ", scale, ", fp32 softmax");
}

absl::StatusOr<SdpaDesc> MapSdpa(const runtime::AttentionShape& a) {
  if ((a.y_type != DType::kF16 && a.y_type != DType::kBF16) || a.q_type != a.y_type || a.k_type != a.y_type ||
      a.v_type != a.y_type) {
    return absl::InvalidArgumentError("cuDNN's fused attention takes fp16 or bf16 Q, K, V and O of one type");
  }
  if (a.head % 8 != 0 || a.v_head % 8 != 0 || a.head > 128 || a.v_head > 128) {
    return absl::InvalidArgumentError(
        absl::StrCat("head sizes ", a.head, "/", a.v_head, ": cuDNN's fused attention takes multiples of 8 up to 128"));
  }
  if (a.kv_heads < 1 || a.q_heads % a.kv_heads != 0) {
    return absl::InvalidArgumentError("query heads do not group over the K/V heads");
  }
  SdpaDesc d;
  d.io_type = a.y_type;
  d.scale = a.scale;
  Layout(a, a.q_heads, a.q_seq, a.head, &d.q_dims, &d.q_strides);
  Layout(a, a.kv_heads, a.kv_seq, a.head, &d.k_dims, &d.k_strides);
  Layout(a, a.kv_heads, a.kv_seq, a.v_head, &d.v_dims, &d.v_strides);
  Layout(a, a.q_heads, a.q_seq, a.v_head, &d.o_dims, &d.o_strides);
  return d;
}

}  // namespace gcomp::cuda
