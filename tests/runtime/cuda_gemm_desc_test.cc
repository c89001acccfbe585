// The FusedGemm -> cuBLASLt mapping (runtime/cuda/gemm_desc.h), checked on the CPU: a column-major
// GEMM computed exactly as the cuBLASLt call is parameterized (transposes, leading dimensions, beta,
// bias along D's rows, then the activation) must equal the plan's row-major GEMM, for both weight
// layouts and every epilogue; and the ResNet-50 GEMM shapes map onto the expected m, n, k, leading
// dimensions and 16-byte alignment.
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cuda/gemm_desc.h"

namespace gcomp::cuda {
namespace {

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// D = act(alpha * op(A') op(B') + beta * C + bias), column-major, as the LtGemm parameterizes it.
// (The order of bias, beta * C and the activation is the plan's FusedGemm semantics; the GPU test
// checks that cuBLASLt applies its epilogue after beta * C.)
std::vector<float> ColumnMajor(const LtGemm& lt, const std::vector<float>& a, const std::vector<float>& b,
                               const std::vector<float>& c, const std::vector<float>& bias) {
  std::vector<float> d(static_cast<size_t>(lt.ldd * lt.n), 0.0f);
  for (uint64_t j = 0; j < lt.n; ++j) {
    for (uint64_t i = 0; i < lt.m; ++i) {
      double acc = 0;
      for (uint64_t p = 0; p < lt.k; ++p) {
        const float av = lt.transa == CUBLAS_OP_N ? a[i + p * lt.lda] : a[p + i * lt.lda];
        const float bv = lt.transb == CUBLAS_OP_N ? b[p + j * lt.ldb] : b[j + p * lt.ldb];
        acc += static_cast<double>(av) * bv;
      }
      float x = lt.alpha * static_cast<float>(acc) + lt.beta * (c.empty() ? 0.0f : c[i + j * lt.ldc]);
      const bool has_bias = lt.epilogue == CUBLASLT_EPILOGUE_BIAS || lt.epilogue == CUBLASLT_EPILOGUE_RELU_BIAS ||
                            lt.epilogue == CUBLASLT_EPILOGUE_GELU_BIAS;
      if (has_bias) x += bias[i];
      if (lt.epilogue == CUBLASLT_EPILOGUE_RELU || lt.epilogue == CUBLASLT_EPILOGUE_RELU_BIAS) {
        x = ApplyActivation(Activation::kRelu, x, 0, 0);
      }
      if (lt.epilogue == CUBLASLT_EPILOGUE_GELU || lt.epilogue == CUBLASLT_EPILOGUE_GELU_BIAS) {
        x = ApplyActivation(Activation::kGeluTanh, x, 0, 0);
      }
      d[i + j * lt.ldd] = x;
    }
  }
  return d;
}

// The plan's row-major FusedGemm: Y[M,N] = act(alpha * A W + bias + Z).
std::vector<float> RowMajor(const RowMajorGemm& g, const std::vector<float>& a, const std::vector<float>& w,
                            const std::vector<float>& z, const std::vector<float>& bias) {
  std::vector<float> y(static_cast<size_t>(g.m * g.n));
  for (int64_t r = 0; r < g.m; ++r) {
    for (int64_t col = 0; col < g.n; ++col) {
      double acc = 0;
      for (int64_t p = 0; p < g.k; ++p) {
        const float wv = g.trans_b ? w[col * g.k + p] : w[p * g.n + col];
        acc += static_cast<double>(a[r * g.k + p]) * wv;
      }
      float x = g.alpha * static_cast<float>(acc);
      if (g.residual) x += z[r * g.n + col];
      if (g.bias) x += bias[col];
      y[r * g.n + col] = ApplyActivation(g.act, x, 0, 0);
    }
  }
  return y;
}

TEST(CudaGemmDesc, ColumnMajorCallComputesTheRowMajorGemm) {
  int cases = 0;
  for (bool trans_b : {false, true}) {
    for (bool bias : {false, true}) {
      for (bool residual : {false, true}) {
        for (Activation act : {Activation::kNone, Activation::kRelu, Activation::kGeluTanh}) {
          RowMajorGemm g;
          g.m = 5, g.n = 7, g.k = 3;
          g.trans_b = trans_b;
          g.alpha = 0.75f;
          g.bias = bias;
          g.residual = residual;
          g.act = act;
          absl::StatusOr<LtGemm> lt = MapGemm(g);
          ASSERT_TRUE(lt.ok()) << lt.status();
          const std::vector<float> a = Random(g.m * g.k, 1), w = Random(g.k * g.n, 2), z = Random(g.m * g.n, 3),
                                   b = Random(g.n, 4);
          const std::vector<float> want = RowMajor(g, a, w, z, b);
          // The same bytes, read column-major: A' = W, B' = A, C = D = Y.
          const std::vector<float> got = ColumnMajor(*lt, w, a, residual ? z : std::vector<float>{}, b);
          ASSERT_EQ(got.size(), want.size());
          for (size_t i = 0; i < want.size(); ++i) {
            EXPECT_NEAR(got[i], want[i], 1e-5f) << lt->Describe() << " element " << i;
          }
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(cases, 24);
}

// ResNet-50's GEMMs at O3 for cuda: the 1x1 convolutions on NHWC (M = N*H*W, K = Cin, N = Cout)
// and the classifier, at batch 1 and 8, fp16.
TEST(CudaGemmDesc, ResNet50ShapesMapOntoAlignedTensorCoreCalls) {
  struct Layer {
    int64_t hw, cin, cout, count;
  };
  const std::vector<Layer> layers = {{56 * 56, 64, 64, 1},    {56 * 56, 64, 256, 4},   {56 * 56, 256, 64, 2},
                                     {56 * 56, 256, 128, 1},  {28 * 28, 128, 512, 5},  {28 * 28, 512, 128, 3},
                                     {28 * 28, 512, 256, 1},  {14 * 14, 256, 1024, 7}, {14 * 14, 1024, 256, 5},
                                     {14 * 14, 1024, 512, 1}, {7 * 7, 512, 2048, 4},   {7 * 7, 2048, 512, 2},
                                     {1, 2048, 1000, 1}};
  int mapped = 0;
  for (int64_t batch : {1, 8}) {
    for (const Layer& l : layers) {
      for (bool trans_b : {false, true}) {
        RowMajorGemm g;
        g.m = batch * l.hw;
        g.n = l.cout;
        g.k = l.cin;
        g.trans_b = trans_b;
        g.a_type = g.w_type = DType::kF16;
        g.bias = true;
        g.residual = l.cout == 4 * l.cin;  // the expanding 1x1 of a bottleneck takes the residual
        g.act = Activation::kRelu;
        absl::StatusOr<LtGemm> lt = MapGemm(g);
        ASSERT_TRUE(lt.ok()) << lt.status();
        EXPECT_EQ(lt->m, static_cast<uint64_t>(l.cout));
        EXPECT_EQ(lt->n, static_cast<uint64_t>(batch * l.hw));
        EXPECT_EQ(lt->k, static_cast<uint64_t>(l.cin));
        EXPECT_EQ(lt->lda, trans_b ? l.cin : l.cout);
        EXPECT_EQ(lt->ldb, l.cin);
        EXPECT_EQ(lt->ldd, l.cout);
        EXPECT_EQ(lt->ldc, l.cout);
        EXPECT_EQ(lt->transa, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N);
        EXPECT_EQ(lt->transb, CUBLAS_OP_N);
        EXPECT_EQ(lt->a_type, CUDA_R_16F);
        EXPECT_EQ(lt->bias_type, CUDA_R_16F);
        EXPECT_EQ(lt->compute, CUBLAS_COMPUTE_32F);
        EXPECT_EQ(lt->scale_type, CUDA_R_32F);
        EXPECT_EQ(lt->epilogue, CUBLASLT_EPILOGUE_RELU_BIAS);
        EXPECT_EQ(lt->beta, g.residual ? 1.0f : 0.0f);
        EXPECT_TRUE(lt->aligned16) << lt->Describe();
        ++mapped;
      }
    }
  }
  EXPECT_EQ(mapped, 52);
}

// ViT-B/16's GEMMs (197 tokens per image, hidden 768, MLP 3072) at batch 1, 64 and 256, bf16: the
// packed QKV projection, the output projection and fc2 with the residual as beta*C, fc1 with the
// tanh GELU in cuBLASLt's epilogue (the erf form is refused there: it runs as a generated kernel
// after a BIAS-only GEMM), and the classifier on the class token.
TEST(CudaGemmDesc, VitB16ShapesMapOntoAlignedTensorCoreCalls) {
  struct Layer {
    const char* name;
    int64_t tokens_per_image, k, n;
    bool residual;
    Activation act;
  };
  const std::vector<Layer> layers = {{"qkv", 197, 768, 2304, false, Activation::kNone},
                                     {"out_proj", 197, 768, 768, true, Activation::kNone},
                                     {"fc1", 197, 768, 3072, false, Activation::kGeluTanh},
                                     {"fc2", 197, 3072, 768, true, Activation::kNone},
                                     {"head", 1, 768, 1000, false, Activation::kNone}};
  int mapped = 0;
  for (int64_t batch : {1, 64, 256}) {
    for (const Layer& l : layers) {
      SCOPED_TRACE(std::string(l.name) + " at batch " + std::to_string(batch));
      RowMajorGemm g;
      g.m = batch * l.tokens_per_image;
      g.n = l.n;
      g.k = l.k;
      g.trans_b = true;  // PyTorch's Linear weights [out, in]
      g.a_type = g.w_type = DType::kBF16;
      g.bias = true;
      g.residual = l.residual;
      g.act = l.act;
      absl::StatusOr<LtGemm> lt = MapGemm(g);
      ASSERT_TRUE(lt.ok()) << lt.status();
      EXPECT_EQ(lt->m, static_cast<uint64_t>(l.n));
      EXPECT_EQ(lt->n, static_cast<uint64_t>(batch * l.tokens_per_image));
      EXPECT_EQ(lt->k, static_cast<uint64_t>(l.k));
      EXPECT_EQ(lt->transa, CUBLAS_OP_T);
      EXPECT_EQ(lt->transb, CUBLAS_OP_N);
      EXPECT_EQ(lt->lda, l.k);
      EXPECT_EQ(lt->ldb, l.k);
      EXPECT_EQ(lt->ldd, l.n);
      EXPECT_EQ(lt->a_type, CUDA_R_16BF);
      EXPECT_EQ(lt->d_type, CUDA_R_16BF);
      EXPECT_EQ(lt->bias_type, CUDA_R_16BF);
      EXPECT_EQ(lt->compute, CUBLAS_COMPUTE_32F);
      EXPECT_EQ(lt->epilogue, l.act == Activation::kGeluTanh ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_BIAS);
      EXPECT_EQ(lt->beta, l.residual ? 1.0f : 0.0f);
      if (l.residual) EXPECT_EQ(lt->ldc, l.n);
      EXPECT_TRUE(lt->aligned16) << lt->Describe();
      if (l.act == Activation::kGeluTanh) {
        RowMajorGemm erf = g;
        erf.act = Activation::kGelu;
        EXPECT_FALSE(MapGemm(erf).ok()) << "erf GELU has no exact cuBLASLt epilogue";
      }
      ++mapped;
    }
  }
  EXPECT_EQ(mapped, 15);
}

TEST(CudaGemmDesc, TypesAndPrecisions) {
  RowMajorGemm g;
  g.m = 8, g.n = 16, g.k = 32;
  g.a_type = g.w_type = DType::kBF16;
  absl::StatusOr<LtGemm> lt = MapGemm(g);
  ASSERT_TRUE(lt.ok());
  EXPECT_EQ(lt->d_type, CUDA_R_16BF);
  EXPECT_EQ(lt->compute, CUBLAS_COMPUTE_32F);
  EXPECT_EQ(lt->epilogue, CUBLASLT_EPILOGUE_DEFAULT);
  EXPECT_EQ(lt->Describe(), "bf16, epilogue DEFAULT, D = W'·A' (m=16 n=8 k=32)");
  // fp32 is true fp32; TF32 only when asked.
  g.a_type = g.w_type = DType::kF32;
  lt = MapGemm(g);
  ASSERT_TRUE(lt.ok());
  EXPECT_EQ(lt->compute, CUBLAS_COMPUTE_32F);
  g.tf32 = true;
  lt = MapGemm(g);
  ASSERT_TRUE(lt.ok());
  EXPECT_EQ(lt->compute, CUBLAS_COMPUTE_32F_FAST_TF32);
  // An fp16 GEMM whose leading dimension is not a multiple of 8 elements is not 16-byte aligned.
  g.tf32 = false;
  g.a_type = g.w_type = DType::kF16;
  g.n = 1001;
  lt = MapGemm(g);
  ASSERT_TRUE(lt.ok());
  EXPECT_FALSE(lt->aligned16);
}

TEST(CudaGemmDesc, EpiloguesCuBlasLtCannotApplyExactlyAreRefused) {
  RowMajorGemm g;
  g.m = 4, g.n = 4, g.k = 4;
  g.bias = true;
  g.act = Activation::kGelu;
  absl::StatusOr<LtGemm> lt = MapGemm(g);
  ASSERT_FALSE(lt.ok());
  EXPECT_NE(std::string(lt.status().message()).find("tanh approximation"), std::string::npos);
  g.act = Activation::kClip;
  EXPECT_FALSE(MapGemm(g).ok());
  g.act = Activation::kGeluTanh;
  lt = MapGemm(g);
  ASSERT_TRUE(lt.ok());
  EXPECT_EQ(lt->epilogue, CUBLASLT_EPILOGUE_GELU_BIAS);
  g.w_type = DType::kF16;
  EXPECT_FALSE(MapGemm(g).ok());  // mixed operand types
  g.w_type = DType::kF32;
  g.a_type = DType::kI8;
  g.w_type = DType::kI8;
  EXPECT_FALSE(MapGemm(g).ok());
}

// fp8 (FusedGemm's fp8 form): e4m3 A' = W [N,K] transposed and B' = A, fp16 C/D/bias, fp32
// compute, outer-vector scales; the call with W's column factors as A's scale vector and ones as
// B's computes the plan's y = alpha * scale_b[col] * sum A W + bias + Z, on ViT-B/16's and
// ResNet-50's fp8 GEMM shapes; the layouts cuBLASLt's fp8 kernels refuse are refused here.
TEST(CudaGemmDesc, Fp8MapsOntoTransposedE4m3CallsWithOuterVectorScales) {
  struct Shape {
    int64_t m, k, n;
  };
  const std::vector<Shape> shapes = {{197, 768, 2304}, {64 * 197, 768, 768}, {256 * 197, 768, 3072},
                                     {256 * 197, 3072, 768}, {8 * 3136, 64, 256}, {8 * 49, 2048, 512}};
  for (const Shape& s : shapes) {
    RowMajorGemm g;
    g.m = s.m, g.k = s.k, g.n = s.n;
    g.trans_b = true;
    g.fp8 = true;
    g.a_type = g.w_type = DType::kF16;
    g.bias = true;
    g.residual = true;
    absl::StatusOr<LtGemm> lt = MapGemm(g);
    ASSERT_TRUE(lt.ok()) << lt.status();
    EXPECT_EQ(lt->a_type, CUDA_R_8F_E4M3);
    EXPECT_EQ(lt->b_type, CUDA_R_8F_E4M3);
    EXPECT_EQ(lt->c_type, CUDA_R_16F);
    EXPECT_EQ(lt->d_type, CUDA_R_16F);
    EXPECT_EQ(lt->bias_type, CUDA_R_16F);
    EXPECT_EQ(lt->compute, CUBLAS_COMPUTE_32F);
    EXPECT_EQ(lt->scale_type, CUDA_R_32F);
    EXPECT_EQ(lt->transa, CUBLAS_OP_T);
    EXPECT_EQ(lt->transb, CUBLAS_OP_N);
    EXPECT_EQ(lt->lda, s.k);
    EXPECT_EQ(lt->ldb, s.k);
    EXPECT_EQ(lt->ldd, s.n);
    EXPECT_TRUE(lt->outer_vector_scales);
    EXPECT_TRUE(lt->aligned16) << lt->Describe();
    EXPECT_NE(lt->Describe().find("fp8 e4m3 -> fp16"), std::string::npos) << lt->Describe();
  }
  // Numbers: integer-valued operands (exact in e4m3 and in the sums), column factors as A's scales.
  RowMajorGemm g;
  g.m = 6, g.n = 8, g.k = 16;
  g.trans_b = true, g.fp8 = true, g.a_type = g.w_type = DType::kF16, g.bias = true, g.alpha = 0.125f;
  absl::StatusOr<LtGemm> lt = MapGemm(g);
  ASSERT_TRUE(lt.ok()) << lt.status();
  std::vector<float> a(g.m * g.k), w(g.n * g.k), bias(g.n), scale_b(g.n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
  for (int64_t j = 0; j < g.n; ++j) bias[j] = 0.5f * static_cast<float>(j), scale_b[j] = 1.0f / static_cast<float>(j + 1);
  std::vector<float> want = RowMajor(g, a, w, {}, bias);
  for (int64_t r = 0; r < g.m; ++r) {
    for (int64_t j = 0; j < g.n; ++j) {
      want[r * g.n + j] = (want[r * g.n + j] - bias[j]) * scale_b[j] + bias[j];
    }
  }
  // cuBLASLt: D[i,j] = alpha * sA[i] * sB[j] * (op(A') op(B'))[i,j] + bias[i]; sA = scale_b, sB = 1.
  std::vector<float> scaled_w = w;
  for (int64_t j = 0; j < g.n; ++j) {
    for (int64_t p = 0; p < g.k; ++p) scaled_w[j * g.k + p] *= scale_b[j];
  }
  const std::vector<float> got = ColumnMajor(*lt, scaled_w, a, {}, bias);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f) << i;
  // Refused: W stored [K,N] (not the transposed layout), groups, TF32.
  RowMajorGemm bad = g;
  bad.trans_b = false;
  EXPECT_FALSE(MapGemm(bad).ok());
  bad = g;
  bad.groups = 2;
  EXPECT_FALSE(MapGemm(bad).ok());
  // The fallback where cuBLASLt offers no outer-vector-scale algorithm: e4m3 operands into an fp32
  // D with the default (unit) scalar scales and no epilogue; the generated epilogue does the rest.
  RowMajorGemm fallback = g;
  fallback.fp32_out = true;
  fallback.bias = false;
  absl::StatusOr<LtGemm> f32 = MapGemm(fallback);
  ASSERT_TRUE(f32.ok()) << f32.status();
  EXPECT_EQ(f32->a_type, CUDA_R_8F_E4M3);
  EXPECT_EQ(f32->d_type, CUDA_R_32F);
  EXPECT_EQ(f32->c_type, CUDA_R_32F);
  EXPECT_FALSE(f32->outer_vector_scales);
  EXPECT_EQ(f32->epilogue, CUBLASLT_EPILOGUE_DEFAULT);
  EXPECT_EQ(f32->alpha, g.alpha);
  EXPECT_TRUE(f32->aligned16);
  fallback.bias = true;
  EXPECT_FALSE(MapGemm(fallback).ok());
  // K = 24: e4m3 rows 24 bytes apart are not 16-byte aligned (the kernel table then declines).
  bad = g;
  bad.k = 24;
  absl::StatusOr<LtGemm> unaligned = MapGemm(bad);
  ASSERT_TRUE(unaligned.ok());
  EXPECT_FALSE(unaligned->aligned16);
}

}  // namespace
}  // namespace gcomp::cuda
