// cuda_bench PLAN [--batches 1,32,256] [--warmup N] [--iterations N]: a cuda plan's latency and
// throughput on the device, timed with CUDA events around each run on device-resident inputs and
// outputs (RunOnDevice: no host copies, one CUDA graph per batch size). One JSON object per batch
// on stdout: batch, median/p90/min milliseconds, images per second, and the session's memory and
// per-step algorithms.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gcomp/gcomp.h"

namespace {

std::string Json(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + "\"";
}

int Fail(const std::string& what) {
  std::cerr << "cuda_bench: " << what << "\n";
  return 1;
}

#define CHECK_CUDA(call)                                                          \
  do {                                                                            \
    cudaError_t e_ = (call);                                                      \
    if (e_ != cudaSuccess) return Fail(std::string(#call) + ": " + cudaGetErrorString(e_)); \
  } while (0)

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Fail("usage: cuda_bench PLAN [--batches 1,32,256] [--warmup N] [--iterations N]");
  std::vector<int64_t> batches = {1, 32, 256};
  int warmup = 20, iterations = 100;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string opt = argv[i], val = argv[i + 1];
    if (opt == "--batches") {
      batches.clear();
      std::stringstream ss(val);
      for (std::string b; std::getline(ss, b, ',');) batches.push_back(std::stoll(b));
    } else if (opt == "--warmup") {
      warmup = std::stoi(val);
    } else if (opt == "--iterations") {
      iterations = std::stoi(val);
    } else {
      return Fail("unknown option " + opt);
    }
  }
  auto plan = gcomp::Plan::Load(argv[1]);
  if (!plan.ok()) return Fail(plan.status().message());
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  gcomp::SessionOptions options;
  options.stream = stream;
  auto session = gcomp::Session::Create(*plan, options);
  if (!session.ok()) return Fail(session.status().message());
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  for (int64_t batch : batches) {
    if (batch > (*plan)->max_batch()) return Fail("batch " + std::to_string(batch) + " is over the plan's maximum");
    std::vector<gcomp::DeviceTensor> ins, outs;
    std::vector<void*> allocations;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (int side = 0; side < 2; ++side) {
      for (const gcomp::TensorInfo& t : side == 0 ? (*plan)->inputs() : (*plan)->outputs()) {
        std::vector<int64_t> shape = t.shape;
        int64_t n = 1;
        for (size_t k = 0; k < shape.size(); ++k) {
          if (t.batch_dims[k]) shape[k] *= batch;
          n *= shape[k];
        }
        const size_t bytes = static_cast<size_t>(n) * gcomp::DataTypeSize(t.dtype);
        void* p = nullptr;
        CHECK_CUDA(cudaMalloc(&p, std::max<size_t>(bytes, 1)));
        allocations.push_back(p);
        if (side == 0) {
          std::vector<float> v(static_cast<size_t>(n));
          for (float& x : v) x = u(rng);
          if (t.dtype != gcomp::DataType::kFloat32) return Fail("inputs other than float32");
          CHECK_CUDA(cudaMemcpy(p, v.data(), bytes, cudaMemcpyHostToDevice));
          ins.push_back({t.name, t.dtype, shape, p});
        } else {
          outs.push_back({t.name, t.dtype, shape, p});
        }
      }
    }
    for (int i = 0; i < warmup; ++i) {
      gcomp::Status s = (*session)->RunOnDevice(ins, outs);
      if (!s.ok()) return Fail(s.message());
    }
    CHECK_CUDA(cudaStreamSynchronize(stream));
    std::vector<double> ms;
    for (int i = 0; i < iterations; ++i) {
      CHECK_CUDA(cudaEventRecord(start, stream));
      gcomp::Status s = (*session)->RunOnDevice(ins, outs);
      if (!s.ok()) return Fail(s.message());
      CHECK_CUDA(cudaEventRecord(stop, stream));
      CHECK_CUDA(cudaEventSynchronize(stop));
      float t = 0;
      CHECK_CUDA(cudaEventElapsedTime(&t, start, stop));
      ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2];
    std::vector<std::string> algos;
    for (const std::string& a : (*session)->step_algorithms()) algos.push_back(Json(a));
    std::string joined;
    for (size_t i = 0; i < algos.size(); ++i) joined += (i ? ", " : "") + algos[i];
    std::printf(
        "{\"batch\": %lld, \"median_ms\": %.4f, \"p90_ms\": %.4f, \"min_ms\": %.4f, \"images_per_s\": %.1f, "
        "\"memory\": %s, \"algorithms\": [%s]}\n",
        static_cast<long long>(batch), median, ms[ms.size() * 9 / 10], ms[0], batch * 1000.0 / median,
        Json((*session)->memory_info()).c_str(), joined.c_str());
    std::fflush(stdout);
    for (void* p : allocations) cudaFree(p);
  }
  session->reset();
  cudaStreamDestroy(stream);
  return 0;
}
