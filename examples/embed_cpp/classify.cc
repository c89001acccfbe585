// classify_cpp PLAN IMAGE.f32 OUT.f32: loads a gcomp plan, runs it on one image (raw little-endian
// float32 in the plan input's shape at batch 1), prints the top-5 classes and writes the logits
// (raw float32) to OUT. Uses only the C++ API of libgcomp.so (gcomp/gcomp.h).
#include <gcomp/gcomp.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <numeric>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: classify_cpp PLAN IMAGE.f32 OUT.f32\n";
    return 2;
  }
  auto plan = gcomp::Plan::Load(argv[1]);
  if (!plan.ok()) {
    std::cerr << "classify_cpp: " << plan.status().message() << "\n";
    return 1;
  }
  const gcomp::TensorInfo input = (*plan)->inputs().at(0);
  const int64_t count = std::accumulate(input.shape.begin(), input.shape.end(), int64_t{1}, std::multiplies<>());
  std::vector<float> image(static_cast<size_t>(count));
  std::ifstream in(argv[2], std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(image.data()), count * static_cast<int64_t>(sizeof(float)))) {
    std::cerr << "classify_cpp: cannot read " << argv[2] << "\n";
    return 1;
  }
  auto session = gcomp::Session::Create(*plan, {.threads = 1});
  if (!session.ok()) {
    std::cerr << "classify_cpp: " << session.status().message() << "\n";
    return 1;
  }
  auto outputs = (*session)->Run({gcomp::HostTensor::Float32(input.name, input.shape, image)});
  if (!outputs.ok()) {
    std::cerr << "classify_cpp: " << outputs.status().message() << "\n";
    return 1;
  }
  const std::vector<float> logits = outputs->at(0).ToFloat32();
  std::vector<int> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  const size_t k = std::min<size_t>(5, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<long>(k), order.end(),
                    [&](int a, int b) { return logits[a] > logits[b]; });
  for (size_t r = 0; r < k; ++r) std::cout << "top-" << r + 1 << ": class " << order[r] << " (" << logits[order[r]] << ")\n";
  std::ofstream out(argv[3], std::ios::binary);
  out.write(reinterpret_cast<const char*>(logits.data()), static_cast<std::streamsize>(logits.size() * sizeof(float)));
  return out ? 0 : 1;
}
