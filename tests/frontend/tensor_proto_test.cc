// TensorProto -> Tensor: raw and typed payloads, size validation, and TensorProto files.
#include "frontend/tensor_proto.h"

#include <sys/resource.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/limits.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/frontend/model_builder.h"

namespace gcomp::frontend::testing {
namespace {

using ::testing::HasSubstr;

onnx::TensorProto Typed(const std::string& name, int32_t type, const std::vector<int64_t>& dims) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(type);
  for (int64_t d : dims) t.add_dims(d);
  return t;
}

std::vector<uint8_t> Bytes(const Tensor& t) { return std::vector<uint8_t>(t.data(), t.data() + t.nbytes()); }

int64_t MaxRssKiB() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

// ---- payload forms ------------------------------------------------------------------------

TEST(TensorProto, RawDataF32) {
  auto t = TensorFromProto(F32Tensor("w", {2, 3}, {1, 2, 3, 4, 5, -6}), "");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DType::kF32);
  EXPECT_EQ(t->dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t->ToF32(), (std::vector<float>{1, 2, 3, 4, 5, -6}));
}

TEST(TensorProto, FloatData) {
  onnx::TensorProto p = Typed("w", kFloat, {3});
  for (float f : {0.5f, -1.0f, 3.25f}) p.add_float_data(f);
  auto t = TensorFromProto(p, "");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DType::kF32);
  EXPECT_EQ(t->ToF32(), (std::vector<float>{0.5f, -1.0f, 3.25f}));
}

TEST(TensorProto, Int64Data) {
  onnx::TensorProto p = Typed("w", kInt64, {2});
  p.add_int64_data(-3);
  p.add_int64_data(int64_t{1} << 50);
  auto t = TensorFromProto(p, "");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DType::kI64);
  EXPECT_EQ(t->ToI64(), (std::vector<int64_t>{-3, int64_t{1} << 50}));
}

TEST(TensorProto, Int32DataHoldsFloat16Bits) {
  onnx::TensorProto p = Typed("h", kFloat16, {3});
  p.add_int32_data(0x3C00);  // 1.0
  p.add_int32_data(0xC000);  // -2.0
  p.add_int32_data(0x3555);  // ~0.333
  auto t = TensorFromProto(p, "");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DType::kF16);
  EXPECT_EQ(t->nbytes(), 6u);
  EXPECT_EQ(t->data_as<uint16_t>()[0], 0x3C00);
  EXPECT_EQ(t->data_as<uint16_t>()[1], 0xC000);
  EXPECT_EQ(t->GetF32(0), 1.0f);
  EXPECT_EQ(t->GetF32(1), -2.0f);
  EXPECT_NEAR(t->GetF32(2), 1.0f / 3.0f, 1e-3);
}

TEST(TensorProto, Int32DataHoldsInt8) {
  onnx::TensorProto p = Typed("q", kInt8, {3});
  for (int v : {-128, -5, 127}) p.add_int32_data(v);
  auto t = TensorFromProto(p, "");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DType::kI8);
  EXPECT_EQ(t->nbytes(), 3u);
  EXPECT_EQ(t->ToI64(), (std::vector<int64_t>{-128, -5, 127}));
}

TEST(TensorProto, Int32DataHoldsBool) {
  onnx::TensorProto p = Typed("b", kBool, {4});
  for (int v : {1, 0, 0, 1}) p.add_int32_data(v);
  auto t = TensorFromProto(p, "");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DType::kBool);
  EXPECT_EQ(Bytes(*t), (std::vector<uint8_t>{1, 0, 0, 1}));
}

TEST(TensorProto, Int32DataHoldsUint8AndInt32) {
  onnx::TensorProto u = Typed("u", kUint8, {2});
  u.add_int32_data(0);
  u.add_int32_data(255);
  auto tu = TensorFromProto(u, "");
  ASSERT_TRUE(tu.ok()) << tu.status();
  EXPECT_EQ(tu->dtype(), DType::kU8);
  EXPECT_EQ(tu->ToI64(), (std::vector<int64_t>{0, 255}));

  onnx::TensorProto i = Typed("i", kInt32, {2});
  i.add_int32_data(-70000);
  i.add_int32_data(70000);
  auto ti = TensorFromProto(i, "");
  ASSERT_TRUE(ti.ok()) << ti.status();
  EXPECT_EQ(ti->dtype(), DType::kI32);
  EXPECT_EQ(ti->ToI64(), (std::vector<int64_t>{-70000, 70000}));
}

TEST(TensorProto, DoubleData) {
  onnx::TensorProto p = Typed("d", kDouble, {2});
  p.add_double_data(1.25);
  p.add_double_data(-1e300);
  auto t = TensorFromProto(p, "");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DType::kF64);
  EXPECT_EQ(t->data_as<double>()[0], 1.25);
  EXPECT_EQ(t->data_as<double>()[1], -1e300);
}

TEST(TensorProto, Float16AndBfloat16RawPayloads) {
  std::vector<uint16_t> half = {FloatToHalf(1.5f), FloatToHalf(-0.25f), FloatToHalf(65504.0f)};
  auto th = TensorFromProto(RawTensor("h", kFloat16, {3}, half.data(), 6), "");
  ASSERT_TRUE(th.ok()) << th.status();
  EXPECT_EQ(th->dtype(), DType::kF16);
  EXPECT_EQ(th->ToF32(), (std::vector<float>{1.5f, -0.25f, 65504.0f}));

  std::vector<uint16_t> bf = {FloatToBFloat16(3.0f), FloatToBFloat16(-1e30f)};
  auto tb = TensorFromProto(RawTensor("b", kBfloat16, {2}, bf.data(), 4), "");
  ASSERT_TRUE(tb.ok()) << tb.status();
  EXPECT_EQ(tb->dtype(), DType::kBF16);
  EXPECT_EQ(tb->GetF32(0), 3.0f);
  EXPECT_NEAR(tb->GetF32(1), -1e30f, 1e28f);

  onnx::TensorProto typed = Typed("b2", kBfloat16, {1});
  typed.add_int32_data(FloatToBFloat16(-2.0f));
  auto tt = TensorFromProto(typed, "");
  ASSERT_TRUE(tt.ok()) << tt.status();
  EXPECT_EQ(tt->GetF32(0), -2.0f);
}

TEST(TensorProto, ScalarAndEmptyTensors) {
  auto s = TensorFromProto(F32Tensor("s", {}, {4.0f}), "");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->rank(), 0);
  EXPECT_EQ(s->numel(), 1);
  EXPECT_EQ(s->GetF32(0), 4.0f);

  auto e = TensorFromProto(Typed("e", kFloat, {0, 5}), "");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->numel(), 0);
  EXPECT_EQ(e->dims(), (std::vector<int64_t>{0, 5}));
}

// ---- validation ---------------------------------------------------------------------------

TEST(TensorProto, RawDataLengthMismatchRefused) {
  onnx::TensorProto p = F32Tensor("w", {2}, {1, 2});
  p.mutable_raw_data()->pop_back();
  auto t = TensorFromProto(p, "");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "tensor 'w': raw_data has 7 bytes, expected 8 for dims [2] of f32");
}

TEST(TensorProto, TypedFieldCountMismatchRefused) {
  onnx::TensorProto p = Typed("w", kFloat, {2, 2});
  for (float f : {1.0f, 2.0f, 3.0f}) p.add_float_data(f);
  auto t = TensorFromProto(p, "");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "tensor 'w': float_data has 3 elements, expected 4 for dims [2,2]");

  onnx::TensorProto h = Typed("h", kFloat16, {2});
  h.add_int32_data(0);
  auto th = TensorFromProto(h, "");
  ASSERT_FALSE(th.ok());
  EXPECT_THAT(std::string(th.status().message()), HasSubstr("tensor 'h': int32_data has 1 elements, expected 2"));
}

TEST(TensorProto, NegativeDimRefused) {
  auto t = TensorFromProto(Typed("w", kFloat, {2, -3}), "");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "tensor 'w': has negative dimension -3 in [2,-3]");
}

TEST(TensorProto, DimsProductOverflowRefused) {
  auto t = TensorFromProto(Typed("w", kFloat, {kMaxDim, kMaxDim, kMaxDim}), "");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("tensor 'w': dims [2147483647,2147483647,2147483647]"));
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("overflows int64"));
}

TEST(TensorProto, RankAndDimLimitsRefused) {
  auto big_dim = TensorFromProto(Typed("w", kFloat, {0, int64_t{1} << 32}), "");
  ASSERT_FALSE(big_dim.ok());
  EXPECT_EQ(big_dim.status().message(),
            "tensor 'w': dims [0,4294967296]: dim 1 is 4294967296, over the limit of 2147483647");
  auto big_rank = TensorFromProto(Typed("w", kFloat, std::vector<int64_t>(9, 1)), "");
  ASSERT_FALSE(big_rank.ok());
  EXPECT_EQ(big_rank.status().message(), "tensor 'w': dims [1,1,1,1,1,1,1,1,1]: rank 9, over the limit of 8");
}

TEST(TensorProto, ByteCountOverflowRefused) {
  // (2^31 - 1)^2 * 2 elements fit in int64, their 8-byte storage does not.
  auto t = TensorFromProto(Typed("w", kDouble, {kMaxDim, kMaxDim, 2}), "");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("tensor 'w': declares 9223372028264841218 elements"));
}

TEST(TensorProto, TrillionElementTensorRefusedWithoutAllocation) {
  int64_t rss_before = MaxRssKiB();
  onnx::TensorProto p = Typed("huge", kFloat, {1000000, 1000000});
  p.set_raw_data(std::string(16, '\0'));
  auto t = TensorFromProto(p, "");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            "tensor 'huge': declares 1000000000000 elements [1000000,1000000], over the 4 GiB tensor limit");
  EXPECT_LT(MaxRssKiB() - rss_before, 64 * 1024) << "KiB of peak RSS grown while refusing";
}

TEST(TensorProto, LargeDeclaredTensorWithSmallPayloadRefusedWithoutAllocation) {
  // Under the 4 GiB limit: the payload check alone must refuse it before allocating 1 GiB.
  int64_t rss_before = MaxRssKiB();
  onnx::TensorProto p = Typed("big", kFloat, {int64_t{1} << 28});
  p.add_float_data(1.0f);
  auto t = TensorFromProto(p, "");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "tensor 'big': float_data has 1 elements, expected 268435456 for dims [268435456]");
  EXPECT_LT(MaxRssKiB() - rss_before, 64 * 1024);
}

TEST(TensorProto, StringDTypeRefused) {
  onnx::TensorProto p = Typed("s", kString, {1});
  p.add_string_data("hello");
  auto t = TensorFromProto(p, "");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("tensor 's': has data type STRING, expected one of FLOAT"));
}

TEST(TensorProto, Uint16DTypeRefused) {
  auto t = TensorFromProto(Typed("u", kUint16, {1}), "");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("tensor 'u': has data type UINT16"));
}

TEST(TensorProto, SegmentedTensorRefused) {
  onnx::TensorProto p = F32Tensor("w", {1}, {1});
  p.mutable_segment()->set_begin(0);
  p.mutable_segment()->set_end(1);
  auto t = TensorFromProto(p, "");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "tensor 'w': segmented tensors are not supported");
}

TEST(TensorProto, UnnamedTensorLabel) {
  onnx::TensorProto p = F32Tensor("", {2}, {1, 2});
  p.mutable_raw_data()->append("x");
  auto t = TensorFromProto(p, "");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("tensor: raw_data has 9 bytes, expected 8"));
}

// ---- initializers in a model --------------------------------------------------------------

TEST(Initializers, RawAndTypedInitializersImported) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {2});
  m.InitF32("w_raw", {2}, {1.5f, 2.5f});
  onnx::TensorProto typed = Typed("w_typed", kFloat, {2});
  typed.add_float_data(-1.0f);
  typed.add_float_data(4.0f);
  m.Initializer(typed);
  m.Node("Add", {"x", "w_raw"}, {"a"}, "add0");
  m.Node("Mul", {"a", "w_typed"}, {"y"}, "mul0");
  m.Output("y", kFloat);
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->FindValue("w_raw")->constant->ToF32(), (std::vector<float>{1.5f, 2.5f}));
  EXPECT_EQ((*g)->FindValue("w_typed")->constant->ToF32(), (std::vector<float>{-1.0f, 4.0f}));
  std::string text = PrintGraph(**g);
  EXPECT_THAT(text, HasSubstr("const %w_raw: f32[2] {1.5,2.5}"));
  EXPECT_THAT(text, HasSubstr("const %w_typed: f32[2] {-1,4}"));
  EXPECT_THAT(text, HasSubstr("%y: f32[2] = Mul[\"mul0\"](%a, %w_typed)"));
}

TEST(Initializers, Float16InitializerKeepsDType) {
  ModelBuilder m(13);
  m.Input("x", kFloat16, {2});
  std::vector<uint16_t> h = {FloatToHalf(0.5f), FloatToHalf(2.0f)};
  m.Initializer(RawTensor("w", kFloat16, {2}, h.data(), 4));
  m.Node("Mul", {"x", "w"}, {"y"}, "mul0");
  m.Output("y", kFloat16);
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->FindValue("w")->dtype, DType::kF16);
  EXPECT_EQ((*g)->FindValue("y")->dtype, DType::kF16);
  EXPECT_EQ((*g)->FindValue("w")->constant->ToF32(), (std::vector<float>{0.5f, 2.0f}));
}

TEST(Initializers, RawDataLengthMismatchNamesFileTensorAndSizes) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {3});
  onnx::TensorProto w = F32Tensor("weight", {3}, {1, 2, 3});
  w.mutable_raw_data()->resize(10);
  m.Initializer(w);
  m.Node("Add", {"x", "weight"}, {"y"}, "add0");
  m.Output("y");
  auto g = Import(m);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(),
            "model.onnx: tensor 'weight': raw_data has 10 bytes, expected 12 for dims [3] of f32");
}

TEST(Initializers, NegativeDimInInitializerRefused) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {3});
  m.Initializer(Typed("weight", kFloat, {-1}));
  m.Node("Add", {"x", "weight"}, {"y"}, "add0");
  m.Output("y");
  auto g = Import(m);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(), "model.onnx: tensor 'weight': has negative dimension -1 in [-1]");
}

TEST(Initializers, StringInitializerRefused) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {1});
  onnx::TensorProto s = Typed("labels", kString, {1});
  s.add_string_data("cat");
  m.Initializer(s);
  m.Node("Relu", {"x"}, {"y"}, "relu");
  m.Output("y");
  auto g = Import(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("model.onnx: tensor 'labels': has data type STRING"));
}

TEST(Initializers, HugeDeclaredInitializerRefused) {
  ModelBuilder m(13);
  m.Input("x", kFloat, {1});
  m.Initializer(Typed("huge", kFloat, {1000000, 1000000}));
  m.Node("Relu", {"x"}, {"y"}, "relu");
  m.Output("y");
  auto g = Import(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("model.onnx: tensor 'huge': declares 1000000000000 elements"));
}

// ---- TensorProto files --------------------------------------------------------------------

std::string TempPath(const std::string& name) {
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "gcomp_frontend_tensor_files";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

void ExpectRoundTrip(const Tensor& t, const std::string& file) {
  std::string path = TempPath(file);
  ASSERT_TRUE(WriteTensorFile(path, "input_0", t).ok());
  std::string name;
  auto back = ReadTensorFile(path, &name);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(name, "input_0");
  EXPECT_EQ(back->dtype(), t.dtype());
  EXPECT_EQ(back->dims(), t.dims());
  EXPECT_EQ(Bytes(*back), Bytes(t));
}

TEST(TensorFile, RoundTripF32) { ExpectRoundTrip(Tensor::FromF32({2, 3}, {1, -2, 3.5f, 0, 1e-20f, 7}), "f32.pb"); }

TEST(TensorFile, RoundTripF16) {
  auto t = Tensor::Zeros(DType::kF16, {4});
  ASSERT_TRUE(t.ok());
  for (int i = 0; i < 4; ++i) t->SetF32(i, 0.5f * static_cast<float>(i) - 1.0f);
  ExpectRoundTrip(*t, "f16.pb");
}

TEST(TensorFile, RoundTripI64) {
  ExpectRoundTrip(Tensor::FromI64({3}, {-1, int64_t{1} << 40, 7}), "i64.pb");
  ExpectRoundTrip(Tensor::FromI64({}, {42}), "i64_scalar.pb");
}

TEST(TensorFile, RoundTripBool) {
  auto t = Tensor::Zeros(DType::kBool, {2, 2});
  ASSERT_TRUE(t.ok());
  t->SetI64(0, 1);
  t->SetI64(3, 1);
  ExpectRoundTrip(*t, "bool.pb");
}

TEST(TensorFile, WrittenFileIsAStandardTensorProto) {
  std::string path = TempPath("std.pb");
  ASSERT_TRUE(WriteTensorFile(path, "out", Tensor::FromF32({2}, {1, 2})).ok());
  std::ifstream f(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  onnx::TensorProto p;
  ASSERT_TRUE(p.ParseFromString(bytes));
  EXPECT_EQ(p.name(), "out");
  EXPECT_EQ(p.data_type(), kFloat);
  EXPECT_EQ(p.dims_size(), 1);
  EXPECT_EQ(p.raw_data().size(), 8u);
}

TEST(TensorFile, MissingFileRefused) {
  std::string path = TempPath("does_not_exist.pb");
  auto t = ReadTensorFile(path);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(t.status().message()), HasSubstr(path));
}

TEST(TensorFile, BadPayloadNamesTheFile) {
  std::string path = TempPath("bad.pb");
  onnx::TensorProto p = F32Tensor("t", {4}, {1, 2, 3, 4});
  p.mutable_raw_data()->resize(3);
  std::ofstream(path, std::ios::binary) << p.SerializeAsString();
  auto t = ReadTensorFile(path);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), path + ": tensor 't': raw_data has 3 bytes, expected 16 for dims [4] of f32");
}

TEST(TensorFile, ExternalDataInTensorFileRefused) {
  std::string path = TempPath("external.pb");
  onnx::TensorProto p = Typed("t", kFloat, {1});
  p.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = p.add_external_data();
  kv->set_key("location");
  kv->set_value("weights.bin");
  std::ofstream(path, std::ios::binary) << p.SerializeAsString();
  auto t = ReadTensorFile(path);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("tensor 't': external data needs a model file folder"));
}

TEST(TensorFile, NotATensorProtoRefused) {
  std::string path = TempPath("garbage.pb");
  std::ofstream(path, std::ios::binary) << std::string("\x0a\xff\xff\xff\xff\x0f", 6);
  auto t = ReadTensorFile(path);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), path + ": not a TensorProto file");
}

TEST(TensorFile, WriteToUnwritablePathFails) {
  auto s = WriteTensorFile("/nonexistent_dir_gcomp/x.pb", "x", Tensor::FromF32({1}, {1}));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("/nonexistent_dir_gcomp/x.pb: cannot write file"));
}

}  // namespace
}  // namespace gcomp::frontend::testing
