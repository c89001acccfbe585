// The FusedConv -> cuDNN graph and im2col + cuBLASLt mappings (runtime/cuda/conv_desc.h), on the CPU:
// the NHWC/KRSC dims and strides for the ResNet-50 layer shapes, the KRSC packing, and the grouped
// im2col GEMM computed as the batched cuBLASLt call is parameterized equals a direct convolution.
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cuda/conv_desc.h"

namespace gcomp::cuda {
namespace {

runtime::ConvParams Conv(int64_t c, int64_t h, int64_t cout, int64_t k, int64_t s, int64_t pad, int64_t group,
                         DType t = DType::kF16) {
  runtime::ConvParams p;
  p.nhwc = true;
  p.n = 1;
  p.c = c;
  p.h = p.w = h;
  p.cout = cout;
  p.kh = p.kw = k;
  p.sh = p.sw = s;
  p.pt = p.pl = p.pb = p.pr = pad;
  p.ho = p.wo = (h + 2 * pad - k) / s + 1;
  p.group = group;
  p.dtype = p.wdtype = t;
  p.epi.has_bias = true;
  return p;
}

TEST(CudaConvDesc, ResNet50LayersMapOntoNhwcGraphs) {
  struct Layer {
    int64_t c, h, cout, k, s, pad;
  };
  // conv1, and the 3x3 convolutions of the four stages (first block: stride 2 from stage 2 on).
  for (const Layer& l : std::vector<Layer>{{3, 224, 64, 7, 2, 3},
                                           {64, 56, 64, 3, 1, 1},
                                           {128, 56, 128, 3, 2, 1},
                                           {256, 28, 256, 3, 2, 1},
                                           {512, 14, 512, 3, 2, 1},
                                           {512, 7, 512, 3, 1, 1}}) {
    runtime::ConvParams p = Conv(l.c, l.h, l.cout, l.k, l.s, l.pad, 1);
    p.epi.has_residual = l.k == 3 && l.s == 1;
    p.epi.act = Activation::kRelu;
    auto d = MapConvGraph(p, 32, /*tf32=*/false);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(d->x_dims, (std::vector<int64_t>{32, l.c, l.h, l.h}));
    EXPECT_EQ(d->x_strides, (std::vector<int64_t>{l.h * l.h * l.c, 1, l.h * l.c, l.c}));
    EXPECT_EQ(d->w_dims, (std::vector<int64_t>{l.cout, l.c, l.k, l.k}));
    EXPECT_EQ(d->w_strides, (std::vector<int64_t>{l.k * l.k * l.c, 1, l.k * l.c, l.c}));
    EXPECT_EQ(d->y_dims, (std::vector<int64_t>{32, l.cout, p.ho, p.wo}));
    EXPECT_EQ(d->y_strides, (std::vector<int64_t>{p.ho * p.wo * l.cout, 1, p.wo * l.cout, l.cout}));
    EXPECT_EQ(d->bias_dims, (std::vector<int64_t>{1, l.cout, 1, 1}));
    EXPECT_EQ(d->pre_pad, (std::vector<int64_t>{l.pad, l.pad}));
    EXPECT_EQ(d->stride, (std::vector<int64_t>{l.s, l.s}));
    EXPECT_EQ(d->graph_act, Activation::kRelu);
    EXPECT_EQ(d->residual, p.epi.has_residual);
    EXPECT_NE(d->Describe().find("fp16, fp32 compute + bias"), std::string::npos) << d->Describe();
  }
}

TEST(CudaConvDesc, GroupsTypesAndRefusals) {
  runtime::ConvParams p = Conv(128, 28, 128, 3, 1, 1, 32);  // ResNeXt-50 32x4d stage 2
  auto d = MapConvGraph(p, 8, false);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->w_dims, (std::vector<int64_t>{128, 4, 3, 3}));
  EXPECT_EQ(d->group, 32);
  p.epi.act = Activation::kGelu;
  d = MapConvGraph(p, 8, false);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->graph_act, Activation::kNone);
  EXPECT_EQ(d->after_act, Activation::kGelu);  // a generated kernel after the graph
  runtime::ConvParams nchw = p;
  nchw.nhwc = false;
  EXPECT_FALSE(MapConvGraph(nchw, 8, false).ok());
  EXPECT_FALSE(MapConvGraph(Conv(8, 8, 8, 3, 1, 1, 1, DType::kF16), 1, /*tf32=*/true).ok());
  runtime::ConvParams mixed = Conv(8, 8, 8, 3, 1, 1, 1);
  mixed.wdtype = DType::kF32;
  EXPECT_FALSE(MapConvGraph(mixed, 1, false).ok());
}

TEST(CudaConvDesc, PackKrscMovesInputChannelsInnermost) {
  const int64_t o = 3, i = 2, kh = 2, kw = 3;
  std::vector<float> w(o * i * kh * kw);
  for (size_t n = 0; n < w.size(); ++n) w[n] = static_cast<float>(n);
  std::vector<uint8_t> packed = PackKrsc(reinterpret_cast<const uint8_t*>(w.data()), o, i, kh, kw, 4);
  const float* k = reinterpret_cast<const float*>(packed.data());
  for (int64_t a = 0; a < o; ++a)
    for (int64_t b = 0; b < i; ++b)
      for (int64_t r = 0; r < kh; ++r)
        for (int64_t s = 0; s < kw; ++s)
          EXPECT_EQ(k[((a * kh + r) * kw + s) * i + b], w[((a * i + b) * kh + r) * kw + s]);
}

// The im2col fallback: columns [M][group][kh*kw*C/g], then for each group g the column-major call
// D_g = op(A'_g) B'_g with the batched strides of the LtGemm.
TEST(CudaConvDesc, GroupedIm2ColGemmEqualsDirectConvolution) {
  for (int64_t group : {1, 4}) {
    runtime::ConvParams p = Conv(8, 6, 12, 3, 2, 1, group, DType::kF32);
    p.n = 2;
    p.epi.act = Activation::kRelu;
    auto rg = ConvAsGemm(p, p.n, false);
    ASSERT_TRUE(rg.ok());
    auto lt = MapGemm(*rg);
    ASSERT_TRUE(lt.ok()) << lt.status();
    EXPECT_EQ(lt->batch_count, group);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-1, 1);
    const int64_t cg = p.c / group, kk = p.kh * p.kw * cg, m = p.n * p.ho * p.wo;
    std::vector<float> x(p.n * p.h * p.w * p.c), w(p.cout * cg * p.kh * p.kw), bias(p.cout);
    for (float& v : x) v = u(rng);
    for (float& v : w) v = u(rng);
    for (float& v : bias) v = u(rng);
    std::vector<uint8_t> krsc_bytes = PackKrsc(reinterpret_cast<const uint8_t*>(w.data()), p.cout, cg, p.kh, p.kw, 4);
    const float* krsc = reinterpret_cast<const float*>(krsc_bytes.data());
    std::vector<float> cols(m * group * kk, 0.0f);
    for (int64_t b = 0; b < p.n; ++b)
      for (int64_t oh = 0; oh < p.ho; ++oh)
        for (int64_t ow = 0; ow < p.wo; ++ow)
          for (int64_t g = 0; g < group; ++g)
            for (int64_t r = 0; r < p.kh; ++r)
              for (int64_t s = 0; s < p.kw; ++s)
                for (int64_t c = 0; c < cg; ++c) {
                  const int64_t h = oh * p.sh - p.pt + r, ww = ow * p.sw - p.pl + s;
                  const int64_t row = (b * p.ho + oh) * p.wo + ow;
                  if (h >= 0 && h < p.h && ww >= 0 && ww < p.w)
                    cols[(row * group + g) * kk + (r * p.kw + s) * cg + c] = x[((b * p.h + h) * p.w + ww) * p.c + g * cg + c];
                }
    // The batched column-major call.
    std::vector<float> d(lt->ldd * lt->n, 0.0f);
    for (int32_t g = 0; g < lt->batch_count; ++g) {
      const float* A = krsc + g * lt->stride_a;
      const float* B = cols.data() + g * lt->stride_b;
      float* D = d.data() + g * lt->stride_d;
      for (uint64_t j = 0; j < lt->n; ++j)
        for (uint64_t i = 0; i < lt->m; ++i) {
          double acc = 0;
          for (uint64_t q = 0; q < lt->k; ++q) {
            const float av = lt->transa == CUBLAS_OP_T ? A[q + i * lt->lda] : A[i + q * lt->lda];
            acc += av * B[q + j * lt->ldb];
          }
          const float v = static_cast<float>(acc) + bias[g * lt->stride_bias + i];
          D[i + j * lt->ldd] = v > 0 ? v : 0;
        }
    }
    // Direct convolution, NHWC output.
    for (int64_t b = 0; b < p.n; ++b)
      for (int64_t oh = 0; oh < p.ho; ++oh)
        for (int64_t ow = 0; ow < p.wo; ++ow)
          for (int64_t o = 0; o < p.cout; ++o) {
            const int64_t g = o / (p.cout / group);
            double acc = bias[o];
            for (int64_t c = 0; c < cg; ++c)
              for (int64_t r = 0; r < p.kh; ++r)
                for (int64_t s = 0; s < p.kw; ++s) {
                  const int64_t h = oh * p.sh - p.pt + r, ww = ow * p.sw - p.pl + s;
                  if (h < 0 || h >= p.h || ww < 0 || ww >= p.w) continue;
                  acc += x[((b * p.h + h) * p.w + ww) * p.c + g * cg + c] * w[((o * cg + c) * p.kh + r) * p.kw + s];
                }
            const float want = acc > 0 ? static_cast<float>(acc) : 0.0f;
            const int64_t row = (b * p.ho + oh) * p.wo + ow;
            ASSERT_NEAR(d[row * p.cout + o], want, 1e-4) << "group " << group << " row " << row << " o " << o;
          }
  }
}

}  // namespace
}  // namespace gcomp::cuda
