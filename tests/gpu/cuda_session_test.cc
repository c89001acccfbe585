// cuda sessions on a device (ctest label `gpu`; exits 77, skipped, where no device is present).
// Usage: cuda_session_tests PLAN.gplan ... (cuda plans of dynamic-batch ResNet fixtures).
//  - CUDA-graph replay gives the same bytes as the step-by-step run, at several batch sizes;
//  - the device-pointer path (RunOnDevice) gives the same bytes as host tensors;
//  - two sessions of one plan share its weights on the device (memory_info counts them once);
//  - every step reports the algorithm it chose;
//  - cuBLASLt applies its ReLU epilogue after beta * C (the residual), as the plan's FusedGemm
//    semantics require.
#include <cuda_runtime_api.h>

#include <cstring>
#include <random>

#include "gcomp/gcomp.h"
#include "gtest/gtest.h"
#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/gemm_desc.h"
#include "runtime/cuda/lt_matmul.h"

namespace {

std::vector<std::string> g_plans;

std::vector<gcomp::HostTensor> RandomInputs(const gcomp::Plan& plan, int64_t batch, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<gcomp::HostTensor> inputs;
  for (const gcomp::TensorInfo& t : plan.inputs()) {
    std::vector<int64_t> shape = t.shape;
    for (size_t k = 0; k < shape.size(); ++k)
      if (t.batch_dims[k]) shape[k] *= batch;
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    inputs.push_back(gcomp::HostTensor::Float32(t.name, shape, v));
  }
  return inputs;
}

TEST(CudaSession, GraphReplayEqualsStepByStepAtEveryBatch) {
  for (const std::string& path : g_plans) {
    auto plan = gcomp::Plan::Load(path);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    gcomp::SessionOptions graphs, eager;
    eager.cuda_graphs = false;
    auto a = gcomp::Session::Create(*plan, graphs);
    auto b = gcomp::Session::Create(*plan, eager);
    ASSERT_TRUE(a.ok() && b.ok()) << (a.ok() ? b.status().message() : a.status().message());
    for (int64_t batch : {int64_t{1}, int64_t{3}, (*plan)->max_batch(), int64_t{1}}) {
      auto in = RandomInputs(**plan, batch, static_cast<uint32_t>(batch));
      auto x = (*a)->Run(in);
      auto x2 = (*a)->Run(in);  // the replay of the graph captured by the first run
      auto y = (*b)->Run(in);
      ASSERT_TRUE(x.ok() && x2.ok() && y.ok())
          << path << " batch " << batch << ": "
          << (!x.ok() ? x.status().message() : !x2.ok() ? x2.status().message() : y.status().message());
      for (size_t k = 0; k < x->size(); ++k) {
        EXPECT_EQ((*x)[k].data, (*y)[k].data) << path << " batch " << batch << ": graph != step by step";
        EXPECT_EQ((*x)[k].data, (*x2)[k].data) << path << " batch " << batch << ": replay differs";
      }
    }
    for (const std::string& algo : (*a)->step_algorithms()) EXPECT_FALSE(algo.empty()) << path;
    std::cout << path << ": " << (*a)->memory_info() << "\n";
  }
}

TEST(CudaSession, DevicePointersEqualHostTensors) {
  for (const std::string& path : g_plans) {
    auto plan = gcomp::Plan::Load(path);
    ASSERT_TRUE(plan.ok());
    cudaStream_t stream = nullptr;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    gcomp::SessionOptions o;
    o.stream = stream;
    auto s = gcomp::Session::Create(*plan, o);
    ASSERT_TRUE(s.ok()) << s.status().message();
    const int64_t batch = 2;
    auto in = RandomInputs(**plan, batch, 42);
    auto want = (*s)->Run(in);
    ASSERT_TRUE(want.ok()) << want.status().message();
    std::vector<gcomp::DeviceTensor> din, dout;
    std::vector<void*> allocations;
    for (const gcomp::HostTensor& h : in) {
      void* p = nullptr;
      ASSERT_EQ(cudaMalloc(&p, h.data.size()), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(p, h.data.data(), h.data.size(), cudaMemcpyHostToDevice), cudaSuccess);
      allocations.push_back(p);
      din.push_back({h.name, h.dtype, h.shape, p});
    }
    for (const gcomp::HostTensor& h : *want) {
      void* p = nullptr;
      ASSERT_EQ(cudaMalloc(&p, h.data.size()), cudaSuccess);
      allocations.push_back(p);
      dout.push_back({h.name, h.dtype, h.shape, p});
    }
    for (int rep = 0; rep < 2; ++rep) {  // the second run replays the graph captured for these pointers
      gcomp::Status st = (*s)->RunOnDevice(din, dout);
      ASSERT_TRUE(st.ok()) << st.message();
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      for (size_t k = 0; k < want->size(); ++k) {
        std::vector<uint8_t> got((*want)[k].data.size());
        ASSERT_EQ(cudaMemcpy(got.data(), dout[k].data, got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
        EXPECT_EQ(got, (*want)[k].data) << path;
      }
    }
    for (void* p : allocations) cudaFree(p);
    s->reset();
    cudaStreamDestroy(stream);
  }
}

TEST(CudaSession, TwoSessionsShareTheWeights) {
  auto plan = gcomp::Plan::Load(g_plans.at(0));
  ASSERT_TRUE(plan.ok());
  size_t free0 = 0, free1 = 0, free2 = 0, total = 0;
  auto a = gcomp::Session::Create(*plan);
  ASSERT_TRUE(a.ok());
  cudaMemGetInfo(&free0, &total);
  auto b = gcomp::Session::Create(*plan);
  ASSERT_TRUE(b.ok());
  cudaMemGetInfo(&free1, &total);
  EXPECT_NE((*b)->memory_info().find("shared by 2 session(s)"), std::string::npos) << (*b)->memory_info();
  b->reset();
  cudaMemGetInfo(&free2, &total);
  std::cout << "second session took " << (free0 - free1) << " device bytes: " << (*a)->memory_info() << "\n";
}

// Z = relu(A W + bias + C) with A W + bias = -1 and C = +2 everywhere: 1 when the ReLU follows the
// residual (the plan's semantics), 2 when cuBLASLt applied it before adding beta * C.
TEST(CudaSession, CublasLtReluEpilogueFollowsTheResidual) {
  using namespace gcomp::cuda;
  RowMajorGemm g;
  g.m = 64, g.n = 64, g.k = 64;
  g.trans_b = true;
  g.bias = g.residual = true;
  g.act = gcomp::Activation::kRelu;
  auto lt = MapGemm(g);
  ASSERT_TRUE(lt.ok());
  cublasLtHandle_t handle = nullptr;
  ASSERT_EQ(cublasLtCreate(&handle), CUBLAS_STATUS_SUCCESS);
  std::vector<float> a(64 * 64, 0.0f), w(64 * 64, 0.0f), bias(64, -1.0f), c(64 * 64, 2.0f);
  float *da, *dw, *db, *dc, *dd;
  void* ws = nullptr;
  for (auto [p, v] : {std::pair{&da, &a}, {&dw, &w}, {&db, &bias}, {&dc, &c}}) {
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(p), v->size() * 4), cudaSuccess);
    cudaMemcpy(*p, v->data(), v->size() * 4, cudaMemcpyHostToDevice);
  }
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&dd), c.size() * 4), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&ws, 32 << 20), cudaSuccess);
  LtMatmul mm;
  ASSERT_TRUE(mm.Prepare(handle, *lt, 32 << 20).ok());
  ASSERT_TRUE(mm.Enqueue(handle, nullptr, dw, da, db, dc, dd, ws, 32 << 20).ok());
  std::vector<float> d(c.size());
  cudaMemcpy(d.data(), dd, d.size() * 4, cudaMemcpyDeviceToHost);
  EXPECT_EQ(d[0], 1.0f) << "cuBLASLt applied its ReLU before adding beta * C: residual GEMMs with an activation "
                           "need the activation as a separate kernel";
  for (void* p : std::initializer_list<void*>{da, dw, db, dc, dd, ws}) cudaFree(p);
  cublasLtDestroy(handle);
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (absl::Status s = gcomp::cuda::DevicePresent(); !s.ok()) {
    std::cout << "SKIPPED: " << s.message() << "\n";
    return 77;
  }
  for (int i = 1; i < argc; ++i) g_plans.push_back(argv[i]);
  if (g_plans.empty()) {
    std::cerr << "usage: cuda_session_tests PLAN.gplan ...\n";
    return 2;
  }
  return RUN_ALL_TESTS();
}
