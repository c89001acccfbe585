// The C API of libgcomp.so (include/gcomp/gcomp_c.h), linked as an application links it: a plan
// compiled in process and loaded from a file and from memory, its inputs and outputs, runs into
// caller-allocated and library-allocated outputs (equal to the C++ API's), and every error path
// returning a status with the message on the handle.
#include "include/gcomp/gcomp_c.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "include/gcomp/gcomp.h"

namespace {

std::string ModelPath() { return std::string(GCOMP_MODELS_DIR) + "/tv_small_resnet_op17_dynamic/model.onnx"; }

std::vector<float> Image(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1.0f;
  return v;
}

class CApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gcomp_compile_options o = gcomp_compile_options_default();
    o.batch = 4;
    ASSERT_EQ(gcomp_compile(ModelPath().c_str(), &o, &plan_), GCOMP_OK) << gcomp_plan_error(plan_);
  }
  void TearDown() override { gcomp_plan_free(plan_); }
  gcomp_plan* plan_ = nullptr;
};

TEST_F(CApiTest, PlanDescribesItsInputsAndOutputs) {
  const char* target = nullptr;
  ASSERT_EQ(gcomp_plan_target(plan_, &target), GCOMP_OK);
  EXPECT_STREQ(target, "cpu");
  int64_t max_batch = 0;
  ASSERT_EQ(gcomp_plan_max_batch(plan_, &max_batch), GCOMP_OK);
  EXPECT_EQ(max_batch, 4);
  size_t n_in = 0, n_out = 0;
  ASSERT_EQ(gcomp_plan_num_inputs(plan_, &n_in), GCOMP_OK);
  ASSERT_EQ(gcomp_plan_num_outputs(plan_, &n_out), GCOMP_OK);
  EXPECT_EQ(n_in, 1u);
  EXPECT_EQ(n_out, 1u);
  gcomp_tensor_info in;
  ASSERT_EQ(gcomp_plan_input(plan_, 0, &in), GCOMP_OK);
  EXPECT_STREQ(in.name, "input");
  EXPECT_EQ(in.dtype, GCOMP_FLOAT32);
  ASSERT_EQ(in.rank, 4u);
  EXPECT_EQ(in.shape[0], 1);
  EXPECT_EQ(in.batch_dims[0], 1);
  EXPECT_EQ(in.batch_dims[1], 0);
  EXPECT_EQ(gcomp_plan_input(plan_, 1, &in), GCOMP_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gcomp_plan_error(plan_)).find("input 1 of a plan with 1"), std::string::npos);
  EXPECT_STREQ(gcomp_dtype_name(GCOMP_BFLOAT16), "bf16");
}

TEST_F(CApiTest, RunsEqualTheCppApiIntoCallerAndLibraryMemory) {
  gcomp_tensor_info info;
  ASSERT_EQ(gcomp_plan_input(plan_, 0, &info), GCOMP_OK);
  const int64_t batch = 3;
  size_t per = 1;
  for (size_t k = 1; k < info.rank; ++k) per *= static_cast<size_t>(info.shape[k]);
  std::vector<float> image = Image(per * batch);
  gcomp_tensor input{info.name, GCOMP_FLOAT32, info.rank, {}, image.data(), image.size() * sizeof(float)};
  for (size_t k = 0; k < info.rank; ++k) input.shape[k] = info.shape[k];
  input.shape[0] = batch;

  gcomp_session_options so = gcomp_session_options_default();
  so.threads = 2;
  gcomp_session* session = nullptr;
  ASSERT_EQ(gcomp_session_create(plan_, &so, &session), GCOMP_OK) << gcomp_session_error(session);

  gcomp_tensor* alloc = nullptr;
  size_t n = 0;
  ASSERT_EQ(gcomp_session_run_alloc(session, &input, 1, &alloc, &n), GCOMP_OK) << gcomp_session_error(session);
  ASSERT_EQ(n, 1u);
  EXPECT_EQ(alloc[0].rank, 2u);
  EXPECT_EQ(alloc[0].shape[0], batch);
  EXPECT_EQ(alloc[0].dtype, GCOMP_FLOAT32);

  // Caller memory: too small first (the needed size comes back), then enough.
  std::vector<float> out(alloc[0].bytes / sizeof(float));
  gcomp_tensor caller{};
  caller.data = out.data();
  caller.bytes = 8;
  EXPECT_EQ(gcomp_session_run(session, &input, 1, &caller, 1), GCOMP_RESOURCE_EXHAUSTED);
  EXPECT_EQ(caller.bytes, alloc[0].bytes);
  EXPECT_NE(std::string(gcomp_session_error(session)).find("needs"), std::string::npos);
  caller.bytes = out.size() * sizeof(float);
  ASSERT_EQ(gcomp_session_run(session, &input, 1, &caller, 1), GCOMP_OK) << gcomp_session_error(session);
  EXPECT_STREQ(gcomp_session_error(session), "");
  EXPECT_EQ(std::memcmp(out.data(), alloc[0].data, alloc[0].bytes), 0);

  // The C++ API on the same plan bytes: the same numbers.
  const char* path = "c_api_test_plan.gplan";
  ASSERT_EQ(gcomp_plan_save(plan_, path), GCOMP_OK) << gcomp_plan_error(plan_);
  auto cpp_plan = gcomp::Plan::Load(path);
  ASSERT_TRUE(cpp_plan.ok()) << cpp_plan.status().message();
  auto cpp_session = gcomp::Session::Create(*cpp_plan, {.threads = 2});
  ASSERT_TRUE(cpp_session.ok());
  auto cpp_out = (*cpp_session)->Run(
      {gcomp::HostTensor::Float32(info.name, std::vector<int64_t>(input.shape, input.shape + input.rank), image)});
  ASSERT_TRUE(cpp_out.ok()) << cpp_out.status().message();
  ASSERT_EQ(cpp_out->at(0).data.size(), alloc[0].bytes);
  EXPECT_EQ(std::memcmp(cpp_out->at(0).data.data(), alloc[0].data, alloc[0].bytes), 0);

  // Loaded from memory: the same plan.
  std::ifstream f(path, std::ios::binary);
  std::stringstream bytes;
  bytes << f.rdbuf();
  const std::string s = bytes.str();
  gcomp_plan* from_memory = nullptr;
  ASSERT_EQ(gcomp_plan_load_memory(s.data(), s.size(), &from_memory), GCOMP_OK) << gcomp_plan_error(from_memory);
  gcomp_session* second = nullptr;
  ASSERT_EQ(gcomp_session_create(from_memory, nullptr, &second), GCOMP_OK);
  gcomp_tensor* again = nullptr;
  size_t m = 0;
  ASSERT_EQ(gcomp_session_run_alloc(second, &input, 1, &again, &m), GCOMP_OK) << gcomp_session_error(second);
  EXPECT_EQ(std::memcmp(again[0].data, alloc[0].data, alloc[0].bytes), 0);
  gcomp_tensors_free(again, m);
  gcomp_session_free(second);
  gcomp_plan_free(from_memory);
  std::remove(path);

  gcomp_tensors_free(alloc, n);
  gcomp_session_free(session);
}

TEST_F(CApiTest, BadInputsReturnStatusesWithMessages) {
  gcomp_session* session = nullptr;
  ASSERT_EQ(gcomp_session_create(plan_, nullptr, &session), GCOMP_OK);
  float x[4] = {0, 0, 0, 0};
  gcomp_tensor wrong_name{"nope", GCOMP_FLOAT32, 1, {4}, x, sizeof x};
  gcomp_tensor* outs = nullptr;
  size_t n = 0;
  EXPECT_EQ(gcomp_session_run_alloc(session, &wrong_name, 1, &outs, &n), GCOMP_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gcomp_session_error(session)).find("no input 'nope'"), std::string::npos)
      << gcomp_session_error(session);
  EXPECT_STREQ(gcomp_last_error(), gcomp_session_error(session));
  gcomp_tensor bad_bytes{"input", GCOMP_FLOAT32, 4, {1, 3, 32, 32}, x, sizeof x};
  EXPECT_EQ(gcomp_session_run_alloc(session, &bad_bytes, 1, &outs, &n), GCOMP_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gcomp_session_error(session)).find("bytes"), std::string::npos) << gcomp_session_error(session);
  gcomp_session_free(session);

  gcomp_plan* missing = nullptr;
  EXPECT_EQ(gcomp_plan_load("/nonexistent/x.gplan", &missing), GCOMP_NOT_FOUND);
  ASSERT_NE(missing, nullptr);  // the handle holds the message
  EXPECT_NE(std::string(gcomp_plan_error(missing)).find("/nonexistent/x.gplan"), std::string::npos);
  gcomp_session* none = nullptr;
  EXPECT_EQ(gcomp_session_create(missing, nullptr, &none), GCOMP_INVALID_ARGUMENT);
  gcomp_session_free(none);
  gcomp_plan_free(missing);

  const char junk[] = "not a plan at all";
  gcomp_plan* corrupt = nullptr;
  EXPECT_EQ(gcomp_plan_load_memory(junk, sizeof junk, &corrupt), GCOMP_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gcomp_plan_error(corrupt)).find("bad magic"), std::string::npos) << gcomp_plan_error(corrupt);
  gcomp_plan_free(corrupt);

  // Compile errors carry the CLI's messages.
  gcomp_compile_options o = gcomp_compile_options_default();
  o.precision = "fp8";
  gcomp_plan* fp8 = nullptr;
  EXPECT_EQ(gcomp_compile(ModelPath().c_str(), &o, &fp8), GCOMP_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gcomp_plan_error(fp8)).find("--precision fp8 needs an sm_89+ target"), std::string::npos)
      << gcomp_plan_error(fp8);
  gcomp_plan_free(fp8);
  o = gcomp_compile_options_default();
  o.target = "tpu";
  gcomp_plan* tpu = nullptr;
  EXPECT_EQ(gcomp_compile(ModelPath().c_str(), &o, &tpu), GCOMP_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gcomp_plan_error(tpu)).find("unknown target 'tpu'"), std::string::npos) << gcomp_plan_error(tpu);
  gcomp_plan_free(tpu);
  EXPECT_EQ(gcomp_plan_load(nullptr, nullptr), GCOMP_INVALID_ARGUMENT);
}

// A cuda plan compiles in process on a machine without a GPU; a session on it is refused with the
// reason where no device is present (and created where one is).
TEST(CApi, CudaPlanCompilesAndItsSessionSaysWhyItCannotStart) {
  gcomp_compile_options o = gcomp_compile_options_default();
  o.target = "cuda";
  o.precision = "fp16";
  gcomp_plan* plan = nullptr;
  const gcomp_status s = gcomp_compile(ModelPath().c_str(), &o, &plan);
  if (s == GCOMP_UNIMPLEMENTED) {  // a build without the CUDA parts says so
    const std::string why = gcomp_plan_error(plan);
    gcomp_plan_free(plan);
    EXPECT_NE(why.find("cuda"), std::string::npos) << why;
    GTEST_SKIP() << why;
  }
  ASSERT_EQ(s, GCOMP_OK) << gcomp_plan_error(plan);
  const char* target = nullptr;
  ASSERT_EQ(gcomp_plan_target(plan, &target), GCOMP_OK);
  EXPECT_STREQ(target, "cuda:sm_90");
  gcomp_session* session = nullptr;
  const gcomp_status c = gcomp_session_create(plan, nullptr, &session);
  if (c != GCOMP_OK) {
    EXPECT_NE(std::string(gcomp_session_error(session)).find("CUDA"), std::string::npos) << gcomp_session_error(session);
  }
  gcomp_session_free(session);
  gcomp_plan_free(plan);
}

TEST(CppCompileApi, InspectPrintsWhatTheCliPrints) {
  gcomp::InspectOptions o;
  o.format = "json";
  auto json = gcomp::Inspect(ModelPath(), o);
  ASSERT_TRUE(json.ok()) << json.status().message();
  EXPECT_NE(json->find("\"schema_version\""), std::string::npos);
  o.format = "svg";
  auto bad = gcomp::Inspect(ModelPath(), o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown format 'svg'"), std::string::npos);
}

TEST(CppCompileApi, CompilesFromBytesLikeFromTheFile) {
  std::ifstream f(ModelPath(), std::ios::binary);
  std::stringstream bytes;
  bytes << f.rdbuf();
  const std::string model = bytes.str();
  gcomp::CompileOptions o;
  o.batch = 2;
  auto from_file = gcomp::Compile(ModelPath(), o);
  auto from_bytes = gcomp::CompileBytes(model.data(), model.size(), o, "model.onnx");
  ASSERT_TRUE(from_file.ok()) << from_file.status().message();
  ASSERT_TRUE(from_bytes.ok()) << from_bytes.status().message();
  auto a = (*from_file)->Serialize();
  auto b = (*from_bytes)->Serialize();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ((*from_file)->max_batch(), 2);
  auto bad = gcomp::CompileBytes("garbage", 7, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), gcomp::StatusCode::kInvalidArgument);
}

}  // namespace
