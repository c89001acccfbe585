// Writes the test plan (plan_file_test_util.h) to the path given: plan_file_test runs it twice
// and compares the files byte for byte (determinism across processes).
#include <cstdio>

#include "plan/plan_file.h"
#include "tests/plan/plan_file_test_util.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_plan OUT.gplan\n");
    return 2;
  }
  absl::Status s = gcomp::plan::WritePlanFile(gcomp::plan::testing::MakeTestPlan(), argv[1]);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
