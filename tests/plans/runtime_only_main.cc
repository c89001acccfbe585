// A program linked with the runtime library alone (gcomp_runtime: no IR, passes, frontend or
// codegen), as an application embedding gcomp is: loads a plan, runs it on a raw float32 input
// file and writes the first output as raw float32. Usage: runtime_only PLAN INPUT.bin OUTPUT.bin
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>

#include "gcomp/gcomp.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: runtime_only PLAN INPUT.bin OUTPUT.bin\n";
    return 2;
  }
  auto plan = gcomp::Plan::Load(argv[1]);
  if (!plan.ok()) {
    std::cerr << plan.status().message() << "\n";
    return 2;
  }
  std::ifstream in(argv[2], std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const gcomp::TensorInfo info = (*plan)->inputs().at(0);
  int64_t per_item = sizeof(float);
  for (size_t d = 0; d < info.shape.size(); ++d) per_item *= info.shape[d];
  if (bytes.empty() || bytes.size() % per_item != 0) {
    std::cerr << "input has " << bytes.size() << " bytes, not a multiple of one item's " << per_item << "\n";
    return 2;
  }
  gcomp::HostTensor x;
  x.name = info.name;
  x.dtype = gcomp::DataType::kFloat32;
  x.shape = info.shape;
  for (size_t d = 0; d < info.shape.size(); ++d) {
    if (info.batch_dims[d]) x.shape[d] *= static_cast<int64_t>(bytes.size() / per_item);
  }
  x.data = std::move(bytes);
  gcomp::SessionOptions options;
  options.threads = 2;
  auto session = gcomp::Session::Create(*plan, options);
  if (!session.ok()) {
    std::cerr << session.status().message() << "\n";
    return 2;
  }
  auto out = (*session)->Run({x});
  if (!out.ok()) {
    std::cerr << out.status().message() << "\n";
    return 2;
  }
  std::ofstream o(argv[3], std::ios::binary);
  o.write(reinterpret_cast<const char*>(out->at(0).data.data()), static_cast<std::streamsize>(out->at(0).data.size()));
  int64_t launches = 0;
  for (const auto& [id, n] : (*session)->kernel_launches()) launches += n;
  std::cout << (*plan)->target() << " plan, output '" << out->at(0).name << "', " << launches << " kernel launches\n";
  return 0;
}
