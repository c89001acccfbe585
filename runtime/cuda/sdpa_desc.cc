#include "runtime/cuda/sdpa_desc.h"

#include "absl/strings/str_cat.h"

namespace gcomp::cuda {
namespace {

// Dims {B, H, S, D}, their strides and the element offset of (0, 0, 0, 0) for one operand of `a`'s
// layout (rows of `rows.width` from column `rows.offset`, batch or sequence first, when packed).
int64_t Layout(const runtime::AttentionShape& a, const runtime::AttentionShape::Rows& rows, int64_t heads,
               int64_t seq, int64_t width, std::vector<int64_t>* dims, std::vector<int64_t>* strides) {
  *dims = {a.batch, heads, seq, width};
  if (!a.packed) {
    *strides = {heads * seq * width, seq * width, width, 1};
    return 0;
  }
  if (a.seq_first) {
    *strides = {rows.width, width, a.batch * rows.width, 1};
  } else {
    *strides = {seq * rows.width, width, rows.width, 1};
  }
  return rows.offset;
}

}  // namespace

std::string SdpaDesc::Describe() const {
  const std::string layout = !packed    ? "[B,H,S,D]"
                             : seq_first ? absl::StrCat("[S,B,", q_strides[0], "] rows")
                                         : absl::StrCat("[B,S,", q_strides[2], "] rows");
  return absl::StrCat("cuDNN SDPA ", DTypeName(io_type), ": ", q_dims[1], " heads (", k_dims[1], " K/V heads), ",
                      q_dims[2], "x", k_dims[2], " positions, head ", q_dims[3], "/", v_dims[3], ", Q/K/V ", layout,
                      q_offset || k_offset || v_offset ? absl::StrCat(" at columns ", q_offset, "/", k_offset, "/", v_offset)
                                                       : "",
                      ", scale ", scale, ", fp32 softmax");
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
  d.packed = a.packed;
  d.seq_first = a.seq_first;
  d.q_offset = Layout(a, a.q, a.q_heads, a.q_seq, a.head, &d.q_dims, &d.q_strides);
  d.k_offset = Layout(a, a.k, a.kv_heads, a.kv_seq, a.head, &d.k_dims, &d.k_strides);
  d.v_offset = Layout(a, a.v, a.kv_heads, a.kv_seq, a.v_head, &d.v_dims, &d.v_strides);
  Layout(a, a.y, a.q_heads, a.q_seq, a.v_head, &d.o_dims, &d.o_strides);
  // cuDNN wants 16-byte aligned operands: the heads' first columns must keep the buffers' alignment.
  for (int64_t offset : {d.q_offset, d.k_offset, d.v_offset}) {
    if (offset * static_cast<int64_t>(DTypeSize(d.io_type)) % 16 != 0) {
      return absl::InvalidArgumentError(absl::StrCat("a head column offset of ", offset,
                                                     " elements breaks cuDNN's 16-byte alignment"));
    }
  }
  return d;
}

}  // namespace gcomp::cuda
