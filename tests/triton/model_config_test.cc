// The Triton backend's config logic: JSON round trips, reconciling config.pbtxt (as Triton's
// JSON) with a plan's inputs and outputs, auto-completion, refusals, and the API version check.
#include "triton/model_config.h"

#include <gtest/gtest.h>

#include "triton/json.h"
#include "triton/triton_api.h"

namespace gcomp::triton {
namespace {

// A plan tensor at batch 1; `batched`: dim 0 grows by one row per batch item.
TensorInfo Tensor(const std::string& name, std::vector<int64_t> shape, bool batched) {
  TensorInfo t;
  t.name = name;
  t.shape = shape;
  t.batch_dims.assign(shape.size(), false);
  t.per_batch.assign(shape.size(), 0);
  t.batch_dims[0] = batched;
  t.per_batch[0] = batched ? 1 : 0;
  return t;
}
TensorInfo Batched(const std::string& name, std::vector<int64_t> shape) { return Tensor(name, shape, true); }
TensorInfo Fixed(const std::string& name, std::vector<int64_t> shape) { return Tensor(name, shape, false); }

PlanIo DynamicPlan() {
  return {"cpu", 16, {Batched("x", {1, 3, 8, 8})}, {Batched("y", {1, 10}), Batched("z", {1, 4})}};
}
PlanIo StaticPlan() { return {"cpu", 1, {Fixed("x", {2, 3, 8, 8})}, {Fixed("y", {2, 10})}}; }

Json Parse(const std::string& text) {
  auto j = Json::Parse(text);
  EXPECT_TRUE(j.ok()) << j.status().message();
  return j.ok() ? *j : Json();
}

std::string Refusal(const std::string& config, const PlanIo& plan, bool auto_complete = true) {
  auto r = ReconcileConfig("m", Parse(config), plan, auto_complete);
  return r.ok() ? "accepted" : r.status().message();
}

TEST(TritonJson, RoundTripsTritonsConfigJson) {
  const std::string text =
      R"({"name":"m","max_batch_size":8,"input":[{"name":"x","data_type":"TYPE_FP32","dims":["3","224","224"]}],)"
      R"("parameters":{"threads":{"string_value":"2"}},"f":1.5e-3,"t":true,"n":null,"s":"a\"b\\c\u00e9\n"})";
  Json j = Parse(text);
  EXPECT_EQ(j.Find("max_batch_size")->AsInt(), 8);
  EXPECT_EQ(j.Find("input")->items()[0].Find("dims")->items()[1].AsInt(), 224);
  EXPECT_EQ(j.Find("s")->str(), "a\"b\\c\xc3\xa9\n");
  EXPECT_EQ(Parse(j.Dump()).Dump(), j.Dump());
  EXPECT_EQ(j.Find("f")->AsInt(), std::nullopt);  // not an integer
}

TEST(TritonJson, RefusesMalformedText) {
  for (const char* bad : {"", "{", "{\"a\" 1}", "[1,]", "{\"a\":1}x", "\"\\q\"", "\"abc", "[01]", "-", "tru",
                          "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"\\u12\""}) {
    EXPECT_FALSE(Json::Parse(bad).ok()) << bad;
  }
  std::string deep(100, '[');
  deep += std::string(100, ']');
  auto r = Json::Parse(deep);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("nested deeper than 64"), std::string::npos);
}

TEST(TritonConfig, AutoCompletesAnEmptyConfigFromADynamicPlan) {
  auto r = ReconcileConfig("m", Parse(R"({"name":"m","backend":"gcomp","max_batch_size":0})"), DynamicPlan(), true);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->changed);
  EXPECT_EQ(r->config.Find("max_batch_size")->AsInt(), 16);
  ASSERT_NE(r->config.Find("dynamic_batching"), nullptr);
  const Json& in = r->config.Find("input")->items().at(0);
  EXPECT_EQ(in.Find("name")->str(), "x");
  EXPECT_EQ(in.Find("data_type")->str(), "TYPE_FP32");
  EXPECT_EQ(in.Find("dims")->Dump(), "[3,8,8]");
  EXPECT_EQ(r->config.Find("output")->items().size(), 2u);
  EXPECT_EQ(r->spec.max_batch_size, 16);
  EXPECT_TRUE(r->spec.plan_batches);
  EXPECT_EQ(r->spec.threads, 1);
  // What Triton hands back after the update is accepted unchanged.
  auto again = ReconcileConfig("m", Parse(r->config.Dump()), DynamicPlan(), true);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_FALSE(again->changed);
}

TEST(TritonConfig, KeepsWhatTheConfigSays) {
  auto r = ReconcileConfig(
      "m",
      Parse(
          R"({"max_batch_size":4,"input":[{"name":"x","data_type":"TYPE_FP32","dims":["3","8","8"]}],)"
          R"("output":[{"name":"z","data_type":"TYPE_FP32","dims":[4]}],"dynamic_batching":{"max_queue_delay_microseconds":"100"},)"
          R"("parameters":{"threads":{"string_value":"3"}},"default_model_filename":"r50.gplan"})"),
      DynamicPlan(), true);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->changed);
  EXPECT_EQ(r->spec.max_batch_size, 4);
  EXPECT_EQ(r->spec.threads, 3);
  EXPECT_EQ(r->spec.plan_filename, "r50.gplan");
  ASSERT_EQ(r->spec.outputs.size(), 2u);
  EXPECT_FALSE(r->spec.outputs[0].served);  // y: not in the config
  EXPECT_TRUE(r->spec.outputs[1].served);
}

TEST(TritonConfig, BatchDimSpelledOutKeepsTritonFromBatching) {
  auto r = ReconcileConfig("m", Parse(R"({"max_batch_size":0,"input":[{"name":"x","dims":[-1,3,8,8]}]})"),
                           DynamicPlan(), true);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->spec.max_batch_size, 0);
  EXPECT_TRUE(r->spec.plan_batches);
  EXPECT_EQ(r->config.Find("dynamic_batching"), nullptr);
  EXPECT_EQ(r->config.Find("output")->items()[0].Find("dims")->Dump(), "[-1,10]");
}

TEST(TritonConfig, StaticPlanIsServedWithFullDims) {
  auto r = ReconcileConfig("m", Parse("{}"), StaticPlan(), true);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->spec.max_batch_size, 0);
  EXPECT_FALSE(r->spec.plan_batches);
  EXPECT_EQ(r->config.Find("input")->items()[0].Find("dims")->Dump(), "[2,3,8,8]");
  EXPECT_EQ(Refusal(R"({"max_batch_size":4})", StaticPlan()),
            "model 'm': config max_batch_size is 4, but the plan has a fixed batch (a static-batch model): set "
            "max_batch_size 0 and give the full dims");
}

TEST(TritonConfig, RefusesConfigsThatContradictThePlan) {
  const PlanIo plan = DynamicPlan();
  EXPECT_EQ(
      Refusal(R"({"max_batch_size":32})", plan),
      "model 'm': config max_batch_size 32 exceeds the plan's maximum batch 16 (recompile with --batch to raise it)");
  EXPECT_EQ(Refusal(R"({"max_batch_size":8,"input":[{"name":"x","data_type":"TYPE_FP16","dims":[3,8,8]}]})", plan),
            "model 'm': config input 'x' has data_type TYPE_FP16, the plan's is TYPE_FP32");
  EXPECT_EQ(Refusal(R"({"max_batch_size":8,"input":[{"name":"x","dims":[3,8,9]}]})", plan),
            "model 'm': config input 'x' has dims [3,8,9], the plan's are [3,8,8] with max_batch_size > 0 (dims "
            "exclude the batch dim)");
  EXPECT_EQ(Refusal(R"({"max_batch_size":8,"input":[{"name":"image","dims":[3,8,8]}]})", plan),
            "model 'm': config input 'image' is not one of the plan's inputs ('x')");
  EXPECT_EQ(Refusal(R"({"max_batch_size":8,"output":[{"name":"y","dims":[10]},{"name":"y","dims":[10]}]})", plan),
            "model 'm': config output 'y' is listed twice");
  EXPECT_EQ(Refusal(R"({"max_batch_size":0,"input":[{"name":"x","dims":[17,3,8,8]}]})", plan),
            "model 'm': config input 'x' has dims [17,3,8,8], the plan's are [1,3,8,8] (dim 0: -1 or a batch 1..16)");
  EXPECT_EQ(Refusal(R"({"max_batch_size":8,"input":[{"name":"x","dims":[3,8,8],"allow_ragged_batch":true}]})", plan),
            "model 'm': config input 'x' sets 'allow_ragged_batch', which the gcomp backend does not support");
  EXPECT_EQ(Refusal(R"({"max_batch_size":8,"parameters":{"threads":{"string_value":"0"}}})", plan),
            "model 'm': parameter 'threads' must be an integer 1..1024 (parameters { key: \"threads\" value: { "
            "string_value: \"4\" } })");
  EXPECT_EQ(Refusal("[]", plan), "model 'm': the model configuration is not a JSON object");
}

TEST(TritonConfig, WithoutAutoCompletionTheConfigMustListTheTensors) {
  EXPECT_EQ(Refusal(R"({"max_batch_size":8})", DynamicPlan(), false),
            "model 'm': the config lists no inputs and auto-completion is off (--disable-auto-complete-config)");
  PlanIo two = DynamicPlan();
  two.inputs.push_back(Batched("mask", {1, 8}));
  EXPECT_EQ(Refusal(R"({"max_batch_size":8,"input":[{"name":"x","data_type":"TYPE_FP32","dims":[3,8,8]}],)"
                    R"("output":[{"name":"y","data_type":"TYPE_FP32","dims":[10]}]})",
                    two, false),
            "model 'm': the config does not list the plan's input 'mask'");
}

// What Triton sends for entries that name a tensor only: every field, data_type TYPE_INVALID, dims [].
TEST(TritonConfig, EntriesThatNameATensorOnlyAreFilledIn) {
  const std::string config =
      R"({"name":"m","max_batch_size":0,"input":[{"name":"x","data_type":"TYPE_INVALID","format":"FORMAT_NONE",)"
      R"("dims":[],"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false}],)"
      R"("output":[{"name":"z","data_type":"TYPE_FP32","dims":[],"label_filename":"","is_shape_tensor":false}]})";
  auto r = ReconcileConfig("m", Parse(config), DynamicPlan(), true);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->changed);
  const Json& in = r->config.Find("input")->items().at(0);
  EXPECT_EQ(in.Find("data_type")->str(), "TYPE_FP32");
  EXPECT_EQ(in.Find("dims")->Dump(), "[3,8,8]");
  EXPECT_EQ(r->config.Find("output")->items().at(0).Find("dims")->Dump(), "[4]");
  EXPECT_EQ(r->spec.max_batch_size, 16);
  // Without auto-completion the same config is refused.
  EXPECT_EQ(Refusal(config, DynamicPlan(), false), "model 'm': config input 'x' gives no data_type (the plan's is TYPE_FP32)");
  // A given type is checked, not overwritten, when only the dims are filled in.
  EXPECT_EQ(Refusal(R"({"input":[{"name":"x","data_type":"TYPE_INT64","dims":[]}]})", DynamicPlan()),
            "model 'm': config input 'x' has data_type TYPE_INT64, the plan's is TYPE_FP32");
}

// Triton needs at least one dim: a batched [N] tensor is dims [1] with reshape { shape: [] }.
TEST(TritonConfig, TensorsWithoutDimsAreReshaped) {
  PlanIo plan = DynamicPlan();
  plan.outputs.push_back(Batched("label", {1}));
  auto r = ReconcileConfig("m", Parse("{}"), plan, true);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Json& label = r->config.Find("output")->items().at(2);
  EXPECT_EQ(label.Find("dims")->Dump(), "[1]");
  EXPECT_EQ(label.Find("reshape")->Dump(), R"({"shape":[]})");
  auto again = ReconcileConfig("m", Parse(r->config.Dump()), plan, false);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->spec.outputs[2].plan_shape, std::vector<int64_t>{1});
  EXPECT_EQ(Refusal(R"({"max_batch_size":8,"input":[{"name":"x","data_type":"TYPE_FP32","dims":[3,8,8],)"
                    R"("reshape":{"shape":[192]}}]})",
                    plan),
            "model 'm': config input 'x' has a 'reshape', which the gcomp backend takes only as dims [1] with "
            "reshape: { shape: [] } for a tensor without dims");
}

TEST(TritonConfig, PlansTritonCannotCarryOrBatchAreRefused) {
  PlanIo none = DynamicPlan();
  none.inputs.clear();
  EXPECT_EQ(Refusal("{}", none), "model 'm': the plan has no inputs or no outputs; Triton serves tensors in and out");
  PlanIo fp8 = DynamicPlan();
  fp8.outputs[0].dtype = DataType::kFloat8E4M3;
  EXPECT_NE(Refusal("{}", fp8).find("which Triton cannot carry"), std::string::npos);
  PlanIo odd = DynamicPlan();
  odd.outputs[1] = Fixed("z", {4});  // does not grow with the batch
  EXPECT_EQ(Refusal("{}", odd),
            "model 'm': the plan grows with the batch, but 'z' does not grow on dim 0 by one row per batch item (shape "
            "at batch 1 [4]); Triton batches on dim 0");
}

TEST(TritonApiVersion, RefusesAnotherMajorOrAnOlderMinor) {
  EXPECT_EQ(CheckApiVersion(1, 19, kTritonBackendApiMajor, kTritonBackendApiMinor), "");
  EXPECT_EQ(CheckApiVersion(1, 25, 1, 19), "");
  EXPECT_EQ(CheckApiVersion(1, 17, 1, 19),
            "the server's backend API is 1.17; the gcomp backend needs 1.x with x >= 19");
  EXPECT_EQ(CheckApiVersion(2, 0, 1, 19), "the server's backend API is 2.0; the gcomp backend needs 1.x with x >= 19");
}

TEST(TritonTypes, NamesMatchTritonsEnums) {
  EXPECT_STREQ(ConfigTypeName(DataType::kFloat32), "TYPE_FP32");
  EXPECT_EQ(TritonDataType(DataType::kFloat32), TRITONSERVER_TYPE_FP32);
  EXPECT_EQ(TritonDataType(DataType::kBFloat16), TRITONSERVER_TYPE_BF16);
  EXPECT_EQ(TritonDataType(DataType::kInt64), TRITONSERVER_TYPE_INT64);
  EXPECT_EQ(TritonDataType(DataType::kBool), TRITONSERVER_TYPE_BOOL);
  EXPECT_EQ(TritonDataType(DataType::kFloat8E4M3), TRITONSERVER_TYPE_INVALID);
  EXPECT_STREQ(TritonTypeName(TRITONSERVER_TYPE_INT64), "INT64");
}

}  // namespace
}  // namespace gcomp::triton
