// The Attention -> cuDNN SDPA mapping (runtime/cuda/sdpa_desc.h), checked on the CPU: ViT-B/16's
// attention in both layouts maps onto {B, H, S, D} dims whose strides address exactly the elements
// the plan's layout puts there; grouped K/V heads keep their own head count; what cuDNN's fused
// attention does not take is refused with the reason.
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cuda/sdpa_desc.h"

namespace gcomp::cuda {
namespace {

runtime::AttentionShape VitB16(bool packed, int64_t batch, DType t) {
  runtime::AttentionShape a;
  a.packed = packed;
  a.batch = batch;
  a.q_heads = a.kv_heads = 12;
  a.q_seq = a.kv_seq = 197;
  a.head = a.v_head = 64;
  a.scale = 0.125f;
  a.q_type = a.k_type = a.v_type = a.y_type = t;
  a.q = a.k = a.v = a.y = {768, 0};  // ONNX's 3-D form: rows of H*D
  return a;
}

int64_t Offset(const std::vector<int64_t>& strides, int64_t b, int64_t h, int64_t s, int64_t e) {
  return b * strides[0] + h * strides[1] + s * strides[2] + e * strides[3];
}

TEST(CudaSdpaDesc, VitB16StridesAddressThePlansLayouts) {
  for (bool packed : {true, false}) {
    for (int64_t batch : {1, 64, 256}) {
      absl::StatusOr<SdpaDesc> d = MapSdpa(VitB16(packed, batch, DType::kBF16));
      ASSERT_TRUE(d.ok()) << d.status();
      EXPECT_EQ(d->io_type, DType::kBF16);
      EXPECT_EQ(d->scale, 0.125f);
      for (const std::vector<int64_t>* dims : {&d->q_dims, &d->k_dims, &d->v_dims, &d->o_dims}) {
        EXPECT_EQ(*dims, (std::vector<int64_t>{batch, 12, 197, 64}));
      }
      // Packed [B, S, H*D]: (b, h, s, e) at ((b*S + s)*H + h)*D + e; [B, H, S, D]: ((b*H + h)*S + s)*D + e.
      for (int64_t b : {int64_t{0}, batch - 1}) {
        for (int64_t h : {0, 5, 11}) {
          for (int64_t s : {0, 1, 196}) {
            for (int64_t e : {0, 63}) {
              const int64_t want = packed ? ((b * 197 + s) * 12 + h) * 64 + e : ((b * 12 + h) * 197 + s) * 64 + e;
              EXPECT_EQ(Offset(d->q_strides, b, h, s, e), want);
              EXPECT_EQ(Offset(d->k_strides, b, h, s, e), want);
              EXPECT_EQ(Offset(d->v_strides, b, h, s, e), want);
              EXPECT_EQ(Offset(d->o_strides, b, h, s, e), want);
            }
          }
        }
      }
      EXPECT_NE(d->Describe().find(packed ? "[B,S,768] rows" : "[B,H,S,D]"), std::string::npos) << d->Describe();
    }
  }
}

// The strided form on torchvision's packed QKV projection output [S, B, 2304]: Q, K and V are
// columns 0, 768 and 1536 of the same rows, sequence first; Y is [S, B, 768].
TEST(CudaSdpaDesc, PackedQkvReadThroughStrides) {
  for (int64_t batch : {1, 64, 256}) {
    runtime::AttentionShape a = VitB16(true, batch, DType::kF16);
    a.seq_first = true;
    a.q = {2304, 0};
    a.k = {2304, 768};
    a.v = {2304, 1536};
    a.y = {768, 0};
    absl::StatusOr<SdpaDesc> d = MapSdpa(a);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(d->q_strides, (std::vector<int64_t>{2304, 64, batch * 2304, 1}));
    EXPECT_EQ(d->o_strides, (std::vector<int64_t>{768, 64, batch * 768, 1}));
    EXPECT_EQ(d->q_offset, 0);
    EXPECT_EQ(d->k_offset, 768);
    EXPECT_EQ(d->v_offset, 1536);
    for (int64_t b : {int64_t{0}, batch - 1}) {
      for (int64_t h : {0, 11}) {
        for (int64_t s : {0, 196}) {
          for (int64_t e : {0, 63}) {
            const int64_t row = s * batch + b;
            EXPECT_EQ(d->k_offset + Offset(d->k_strides, b, h, s, e), row * 2304 + 768 + h * 64 + e);
            EXPECT_EQ(d->v_offset + Offset(d->v_strides, b, h, s, e), row * 2304 + 1536 + h * 64 + e);
            EXPECT_EQ(Offset(d->o_strides, b, h, s, e), row * 768 + h * 64 + e);
            // The same element as the runtime's own addressing of the layout.
            EXPECT_EQ(d->q_offset + Offset(d->q_strides, b, h, s, e), a.Offset(a.q, b, h, s, 12, 197, 64) + e);
          }
        }
      }
    }
    EXPECT_NE(d->Describe().find("[S,B,2304] rows at columns 0/768/1536"), std::string::npos) << d->Describe();
  }
  runtime::AttentionShape odd = VitB16(true, 2, DType::kF16);
  odd.q = {2304, 4};
  absl::StatusOr<SdpaDesc> d = MapSdpa(odd);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("16-byte alignment"), std::string::npos) << d.status();
}

TEST(CudaSdpaDesc, GroupedHeadsAndCrossAttention) {
  runtime::AttentionShape a = VitB16(false, 2, DType::kF16);
  a.kv_heads = 4;
  a.kv_seq = 50;
  a.v_head = 32;
  absl::StatusOr<SdpaDesc> d = MapSdpa(a);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->k_dims, (std::vector<int64_t>{2, 4, 50, 64}));
  EXPECT_EQ(d->v_dims, (std::vector<int64_t>{2, 4, 50, 32}));
  EXPECT_EQ(d->v_strides, (std::vector<int64_t>{4 * 50 * 32, 50 * 32, 32, 1}));
  EXPECT_EQ(d->o_dims, (std::vector<int64_t>{2, 12, 197, 32}));
}

TEST(CudaSdpaDesc, RefusesWhatFusedAttentionDoesNotTake) {
  runtime::AttentionShape f32 = VitB16(true, 1, DType::kF32);
  EXPECT_FALSE(MapSdpa(f32).ok());
  runtime::AttentionShape odd = VitB16(true, 1, DType::kF16);
  odd.head = odd.v_head = 20;
  absl::StatusOr<SdpaDesc> d = MapSdpa(odd);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("multiples of 8"), std::string::npos) << d.status();
  runtime::AttentionShape wide = VitB16(true, 1, DType::kBF16);
  wide.head = wide.v_head = 256;
  EXPECT_FALSE(MapSdpa(wide).ok());
  runtime::AttentionShape groups = VitB16(true, 1, DType::kF16);
  groups.kv_heads = 5;
  EXPECT_FALSE(MapSdpa(groups).ok());
  runtime::AttentionShape mixed = VitB16(true, 1, DType::kF16);
  mixed.v_type = DType::kBF16;
  EXPECT_FALSE(MapSdpa(mixed).ok());
}

}  // namespace
}  // namespace gcomp::cuda
