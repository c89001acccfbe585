// External data: tensors stored in files next to the model, and every way out of the folder.
#include <sys/resource.h>

#include <filesystem>
#include <fstream>

#include "frontend/tensor_proto.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/frontend/model_builder.h"

namespace gcomp::frontend::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A fresh folder per test: <TempDir>/gcomp_frontend_external/<test name>/model.
class ExternalData : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / "gcomp_frontend_external" /
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(root_);
    dir_ = root_ / "model";
    fs::create_directories(dir_);
  }

  static void WriteFile(const fs::path& path, const std::string& bytes) {
    fs::create_directories(path.parent_path());
    std::ofstream f(path, std::ios::binary);
    f << bytes;
  }

  // `pad` bytes of junk, then the floats.
  static std::string Payload(const std::vector<float>& values, size_t pad) {
    std::string s(pad, '\x7f');
    s.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
    return s;
  }

  static onnx::TensorProto External(const std::string& name, const std::vector<int64_t>& dims,
                                    const std::string& location, int64_t offset = -1, int64_t length = -1) {
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(kFloat);
    for (int64_t d : dims) t.add_dims(d);
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const std::string& k, const std::string& v) {
      auto* kv = t.add_external_data();
      kv->set_key(k);
      kv->set_value(v);
    };
    add("location", location);
    if (offset >= 0) add("offset", std::to_string(offset));
    if (length >= 0) add("length", std::to_string(length));
    return t;
  }

  // x[2,3] + w where w is `t`.
  static ModelBuilder AddModel(const onnx::TensorProto& t) {
    ModelBuilder m(13);
    m.Input("x", kFloat, {2, 3});
    m.Initializer(t);
    m.Node("Add", {"x", t.name()}, {"y"}, "add0");
    m.Output("y");
    return m;
  }

  fs::path root_;
  fs::path dir_;
};

const std::vector<float> kWeights = {1.0f, -2.0f, 3.5f, 4.0f, 0.25f, -6.0f};

TEST_F(ExternalData, LoadsWithLocationOffsetAndLength) {
  WriteFile(dir_ / "weights.bin", Payload(kWeights, 16) + "trailing");
  auto g = Import(AddModel(External("w", {2, 3}, "weights.bin", 16, 24)), dir_.string());
  ASSERT_TRUE(g.ok()) << g.status();
  const Value* w = (*g)->FindValue("w");
  ASSERT_TRUE(w && w->is_constant());
  EXPECT_EQ(ShapeToString(w->shape), "[2,3]");
  EXPECT_EQ(w->constant->ToF32(), kWeights);
  EXPECT_EQ(ShapeOf(**g, "y"), "[2,3]");
}

TEST_F(ExternalData, LoadsFromSubfolderWithoutOffsetOrLength) {
  WriteFile(dir_ / "data" / "w.bin", Payload(kWeights, 0));
  auto g = Import(AddModel(External("w", {2, 3}, "data/w.bin")), dir_.string());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->FindValue("w")->constant->ToF32(), kWeights);
}

TEST_F(ExternalData, ImportOnnxFileResolvesNextToTheModel) {
  WriteFile(dir_ / "weights.bin", Payload(kWeights, 8));
  std::string model_path = (dir_ / "model.onnx").string();
  WriteFile(model_path, AddModel(External("w", {2, 3}, "weights.bin", 8, 24)).Bytes());
  auto g = ImportOnnxFile(model_path);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->source, model_path);
  EXPECT_EQ((*g)->FindValue("w")->constant->ToF32(), kWeights);
}

TEST_F(ExternalData, AbsoluteLocationRefused) {
  fs::path outside = root_ / "secret.bin";
  WriteFile(outside, Payload(kWeights, 0));
  auto g = Import(AddModel(External("w", {2, 3}, outside.string())), dir_.string());
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("model.onnx: tensor 'w': external data location '" + outside.string() +
                        "' is absolute, expected a path inside the model folder"));
}

TEST_F(ExternalData, DotDotLocationRefused) {
  WriteFile(root_ / "secret.bin", Payload(kWeights, 0));
  auto g = Import(AddModel(External("w", {2, 3}, "../secret.bin")), dir_.string());
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("model.onnx: tensor 'w': external data location '../secret.bin' contains '..'"));
}

TEST_F(ExternalData, DotDotInsideThePathRefused) {
  WriteFile(dir_ / "w.bin", Payload(kWeights, 0));
  auto g = Import(AddModel(External("w", {2, 3}, "data/../w.bin")), dir_.string());
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("external data location 'data/../w.bin' contains '..'"));
}

TEST_F(ExternalData, SymlinkLeavingTheFolderRefused) {
  WriteFile(root_ / "secret.bin", Payload(kWeights, 0));
  fs::create_symlink(root_ / "secret.bin", dir_ / "link.bin");
  auto g = Import(AddModel(External("w", {2, 3}, "link.bin")), dir_.string());
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("model.onnx: tensor 'w': external data location 'link.bin' resolves to '"));
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("secret.bin', outside the model folder"));
}

TEST_F(ExternalData, SymlinkedFolderLeavingTheModelFolderRefused) {
  WriteFile(root_ / "elsewhere" / "w.bin", Payload(kWeights, 0));
  fs::create_directory_symlink(root_ / "elsewhere", dir_ / "data");
  auto g = Import(AddModel(External("w", {2, 3}, "data/w.bin")), dir_.string());
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("external data location 'data/w.bin' resolves to"));
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("outside the model folder"));
}

TEST_F(ExternalData, SymlinkStayingInsideTheFolderAccepted) {
  WriteFile(dir_ / "real.bin", Payload(kWeights, 0));
  fs::create_symlink("real.bin", dir_ / "alias.bin");
  auto g = Import(AddModel(External("w", {2, 3}, "alias.bin")), dir_.string());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->FindValue("w")->constant->ToF32(), kWeights);
}

TEST_F(ExternalData, ModelFromMemoryRefusesExternalData) {
  WriteFile(dir_ / "weights.bin", Payload(kWeights, 0));
  auto g = Import(AddModel(External("w", {2, 3}, "weights.bin")), "");
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("model.onnx: tensor 'w': external data needs a model file folder (model loaded from memory)"));
}

TEST_F(ExternalData, LengthMismatchRefused) {
  WriteFile(dir_ / "weights.bin", Payload(kWeights, 0));
  auto g = Import(AddModel(External("w", {2, 3}, "weights.bin", 0, 20)), dir_.string());
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(
      std::string(g.status().message()),
      HasSubstr("model.onnx: tensor 'w': external data length is 20 bytes, expected 24 for its dims and dtype"));
}

TEST_F(ExternalData, FileTooShortForOffsetRefused) {
  WriteFile(dir_ / "weights.bin", Payload(kWeights, 0));
  auto g = Import(AddModel(External("w", {2, 3}, "weights.bin", 8)), dir_.string());
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("tensor 'w': external data file 'weights.bin' has 24 bytes, expected at "
                        "least 24 from offset 8"));
}

TEST_F(ExternalData, MissingFileRefused) {
  auto g = Import(AddModel(External("w", {2, 3}, "nowhere.bin")), dir_.string());
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("tensor 'w': external data file 'nowhere.bin' not found in '"));
}

TEST_F(ExternalData, EmptyLocationRefused) {
  auto g = Import(AddModel(External("w", {2, 3}, "")), dir_.string());
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()), HasSubstr("tensor 'w': external data has an empty location"));
}

TEST_F(ExternalData, BadOffsetRefused) {
  WriteFile(dir_ / "weights.bin", Payload(kWeights, 0));
  onnx::TensorProto t = External("w", {2, 3}, "weights.bin");
  auto* kv = t.add_external_data();
  kv->set_key("offset");
  kv->set_value("-8");
  auto g = Import(AddModel(t), dir_.string());
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("tensor 'w': external data offset '-8' is not a non-negative integer"));
}

TEST_F(ExternalData, LargeDeclaredTensorWithSmallFileRefusedWithoutAllocation) {
  // 1 GiB declared, 24 bytes on disk: refused by the file-size check before allocating.
  WriteFile(dir_ / "weights.bin", Payload(kWeights, 0));
  struct rusage before;
  getrusage(RUSAGE_SELF, &before);
  onnx::TensorProto t = External("w", {int64_t{1} << 28}, "weights.bin");
  auto r = TensorFromProto(t, dir_.string());
  struct rusage after;
  getrusage(RUSAGE_SELF, &after);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("tensor 'w': external data file 'weights.bin' has 24 bytes, expected at least 1073741824"));
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 64 * 1024) << "KiB of peak RSS grown while refusing";
}

}  // namespace
}  // namespace gcomp::frontend::testing
