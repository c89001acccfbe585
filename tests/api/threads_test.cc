// One plan shared by 8 threads, each with its own session and its own kernel thread count (1, 2 or
// 3), running different batch sizes for a while: every output must be bit-identical to a lone
// session's run of the same input at the same thread count, and, on a CPU with AVX-512, to the
// single-threaded run. Linked against the runtime alone (gcomp.h), so that the
// ThreadSanitizer tier (tools/test.sh --tsan) builds little; the plans come from the command line.
//   threads_tests PLAN [PLAN ...]   (GCOMP_THREADS_ITERATIONS: runs per thread, default 150;
//                                   GCOMP_THREADS_KERNEL_THREADS: one kernel thread count for all)
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "include/gcomp/gcomp.h"

namespace {

// A deterministic input of `batch` items for the plan's first input.
gcomp::HostTensor Input(const gcomp::TensorInfo& info, int64_t batch) {
  const std::vector<int64_t> shape = info.ShapeAt(batch);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = static_cast<float>((i * 7919 + batch * 31) % 2003) / 1001.0f - 1.0f;
  return gcomp::HostTensor::Float32(info.name, shape, v);
}

// Whether /proc/cpuinfo lists AVX-512 F (oneDNN's brgemm matmuls, which never split a reduction).
bool HasAvx512() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("flags", 0) == 0) return line.find(" avx512f") != std::string::npos;
  }
  return false;
}

int CheckPlan(const std::string& path, int iterations, int kernel_threads) {
  auto plan = gcomp::Plan::Load(path);
  if (!plan.ok()) {
    std::cerr << "FAIL " << plan.status().message() << "\n";
    return 1;
  }
  const gcomp::TensorInfo info = (*plan)->inputs().at(0);
  const int64_t max_batch = std::min<int64_t>((*plan)->max_batch(), 4);
  // The reference for every batch size and kernel thread count, from one session at a time. On
  // CPUs with AVX-512 the counts agree bit for bit; without it oneDNN 2.6's gemm:jit splits some
  // matmuls' reductions by the thread count, and they may differ in the last bits (reported).
  // Only the counts the threads below use (and 1): under ThreadSanitizer that is 1 alone, since
  // an OpenMP team's handoffs are invisible to it (tools/test.sh --tsan).
  std::vector<int> counts = {1};
  if (kernel_threads > 1) counts.push_back(kernel_threads);
  if (kernel_threads <= 0) counts.insert(counts.end(), {2, 3});
  std::map<std::pair<int64_t, int>, std::vector<uint8_t>> reference;
  for (int kt : counts) {
    auto s = gcomp::Session::Create(*plan, {.threads = kt});
    if (!s.ok()) {
      std::cerr << "FAIL " << s.status().message() << "\n";
      return 1;
    }
    for (int64_t b = 1; b <= max_batch; ++b) {
      auto out = (*s)->Run({Input(info, b)});
      if (!out.ok()) {
        std::cerr << "FAIL " << out.status().message() << "\n";
        return 1;
      }
      reference[{b, kt}] = out->at(0).data;
    }
  }
  int count_differs = 0;
  for (int64_t b = 1; b <= max_batch; ++b) {
    for (size_t i = 1; i < counts.size(); ++i) {
      count_differs += reference[{b, counts[i]}] != reference[{b, 1}];
    }
  }
  std::vector<gcomp::HostTensor> inputs;
  for (int64_t b = 1; b <= max_batch; ++b) inputs.push_back(Input(info, b));
  std::atomic<int> mismatches{0}, errors{0}, runs{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const int kt = kernel_threads > 0 ? kernel_threads : 1 + t % 3;
      auto s = gcomp::Session::Create(*plan, {.threads = kt});
      if (!s.ok()) {
        ++errors;
        return;
      }
      for (int i = 0; i < iterations; ++i) {
        const int64_t b = 1 + (t + i) % max_batch;
        auto out = (*s)->Run({inputs[static_cast<size_t>(b - 1)]});
        if (!out.ok()) {
          ++errors;
          continue;
        }
        ++runs;
        if (out->at(0).data != reference.at({b, kt})) ++mismatches;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  const bool ok = mismatches == 0 && errors == 0 && (count_differs == 0 || !HasAvx512());
  std::cout << (ok ? "PASS " : "FAIL ") << path << ": 8 threads (kernel threads "
            << (kernel_threads > 0 ? std::to_string(kernel_threads) : std::string("1/2/3")) << "), " << runs
            << " runs at batch 1.." << max_batch << ", " << mismatches
            << " differ from a lone session's run at their thread count, " << errors
            << " errors; the lone runs at more threads differ from 1 thread's at " << count_differs << " of "
            << (counts.size() - 1) * max_batch << " batch sizes\n";
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: threads_tests PLAN [PLAN ...]\n";
    return 2;
  }
  const char* env = std::getenv("GCOMP_THREADS_ITERATIONS");
  const int iterations = env ? std::atoi(env) : 150;
  const char* kt = std::getenv("GCOMP_THREADS_KERNEL_THREADS");
  const int kernel_threads = kt ? std::atoi(kt) : 0;
  int failed = 0;
  for (int i = 1; i < argc; ++i) failed += CheckPlan(argv[i], iterations, kernel_threads);
  return failed ? 1 : 0;
}
