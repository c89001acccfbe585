// The plan file: round trip, determinism (in one process and across two), and the refusal of
// truncated, corrupt, newer-version, foreign and invalid plans with messages naming the problem.
#include "plan/plan_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "plan/plan.pb.h"
#include "tests/plan/plan_file_test_util.h"

namespace gcomp::plan {
namespace {

using ::testing::HasSubstr;
using testing::MakeTestPlan;
using testing::PointWeightsAtOwned;
using ::testing::StartsWith;

class PlanFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("gcomp_plan_file_test_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  static std::string ReadBytes(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  static void WriteBytes(const std::string& path, const std::string& bytes) {
    // A new file each time: rewriting one in place makes ext4 flush it on close (slow).
    std::filesystem::remove(path);
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }

  // Writes `plan` with SerializePlan and loads it back.
  absl::StatusOr<std::shared_ptr<const Plan>> RoundTrip(const Plan& plan, const std::string& name) {
    absl::StatusOr<std::string> bytes = SerializePlan(plan);
    if (!bytes.ok()) return bytes.status();
    WriteBytes(Path(name), *bytes);
    return ReadPlanFile(Path(name));
  }

  // Loads a plan changed by `mutate` and expects the error "PATH: invalid plan: <message>".
  void ExpectInvalid(const std::function<void(Plan&)>& mutate, const std::string& message) {
    Plan plan = MakeTestPlan();
    mutate(plan);
    absl::StatusOr<std::shared_ptr<const Plan>> loaded = RoundTrip(plan, "invalid.gplan");
    ASSERT_FALSE(loaded.ok()) << "accepted; expected: " << message;
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(loaded.status().message()), StartsWith(Path("invalid.gplan") + ": invalid plan: "));
    EXPECT_THAT(std::string(loaded.status().message()), HasSubstr(message));
    EXPECT_FALSE(ValidatePlan(plan).ok());
  }

  std::filesystem::path dir_;
};

// Bit-exact attribute comparison (floats by their bits, tensors by dtype, dims and bytes).
void ExpectSameAttr(const std::string& name, const AttrValue& a, const AttrValue& b) {
  SCOPED_TRACE(name);
  ASSERT_EQ(a.index(), b.index());
  if (const auto* f = std::get_if<float>(&a)) {
    EXPECT_EQ(std::memcmp(f, &std::get<float>(b), sizeof(float)), 0);
  } else if (const auto* fs = std::get_if<std::vector<float>>(&a)) {
    const auto& gs = std::get<std::vector<float>>(b);
    ASSERT_EQ(fs->size(), gs.size());
    EXPECT_EQ(std::memcmp(fs->data(), gs.data(), fs->size() * sizeof(float)), 0);
  } else if (const auto* t = std::get_if<Tensor>(&a)) {
    const Tensor& u = std::get<Tensor>(b);
    EXPECT_EQ(t->empty_storage(), u.empty_storage());
    EXPECT_EQ(t->dtype(), u.dtype());
    EXPECT_EQ(t->dims(), u.dims());
    ASSERT_EQ(t->nbytes(), u.nbytes());
    if (t->nbytes() > 0) {
      EXPECT_EQ(std::memcmp(t->data(), u.data(), t->nbytes()), 0);
    }
  } else if (const auto* i = std::get_if<int64_t>(&a)) {
    EXPECT_EQ(*i, std::get<int64_t>(b));
  } else if (const auto* s = std::get_if<std::string>(&a)) {
    EXPECT_EQ(*s, std::get<std::string>(b));
  } else if (const auto* is = std::get_if<std::vector<int64_t>>(&a)) {
    EXPECT_EQ(*is, std::get<std::vector<int64_t>>(b));
  } else {
    EXPECT_EQ(std::get<std::vector<std::string>>(a), std::get<std::vector<std::string>>(b));
  }
}

void ExpectSamePlan(const Plan& a, const Plan& b) {
  EXPECT_EQ(a.format_version, b.format_version);
  EXPECT_EQ(a.target, b.target);
  EXPECT_EQ(a.isa, b.isa);
  EXPECT_EQ(a.gcomp_version, b.gcomp_version);
  EXPECT_EQ(a.library_versions, b.library_versions);
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.precision, b.precision);
  EXPECT_EQ(a.level, b.level);
  EXPECT_EQ(a.max_batch, b.max_batch);
  ASSERT_EQ(a.buffers.size(), b.buffers.size());
  for (size_t i = 0; i < a.buffers.size(); ++i) {
    SCOPED_TRACE("buffer " + std::to_string(i));
    const Buffer &x = a.buffers[i], &y = b.buffers[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.dtype, y.dtype);
    EXPECT_EQ(x.dims, y.dims);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.offset, y.offset);
    EXPECT_EQ(x.bytes, y.bytes);
    EXPECT_EQ(x.alias_of, y.alias_of);
    EXPECT_EQ(x.io_index, y.io_index);
    EXPECT_EQ(x.format, y.format);
  }
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_EQ(a.outputs, b.outputs);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    const Step &x = a.steps[i], &y = b.steps[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.op, y.op);
    EXPECT_EQ(x.kernel, y.kernel);
    EXPECT_EQ(x.reason, y.reason);
    EXPECT_EQ(x.inputs, y.inputs);
    EXPECT_EQ(x.outputs, y.outputs);
    EXPECT_EQ(x.in_place, y.in_place);
    EXPECT_EQ(x.origin, y.origin);
    EXPECT_EQ(x.decisions, y.decisions);
    ASSERT_EQ(x.params.all().size(), y.params.all().size());
    for (const auto& [name, value] : x.params.all()) {
      const AttrValue* other = y.params.Find(name);
      ASSERT_NE(other, nullptr) << name;
      ExpectSameAttr(name, value, *other);
    }
  }
  EXPECT_EQ(a.batch_arena_bytes, b.batch_arena_bytes);
  EXPECT_EQ(a.fixed_arena_bytes, b.fixed_arena_bytes);
  EXPECT_EQ(a.batch_peak_live_bytes, b.batch_peak_live_bytes);
  EXPECT_EQ(a.fixed_peak_live_bytes, b.fixed_peak_live_bytes);
  ASSERT_EQ(a.weights_bytes, b.weights_bytes);
  if (a.weights_bytes > 0) {
    EXPECT_EQ(std::memcmp(a.weights, b.weights, a.weights_bytes), 0);
  }
}

TEST_F(PlanFileTest, RoundTripKeepsEveryField) {
  const Plan plan = MakeTestPlan();
  ASSERT_TRUE(ValidatePlan(plan).ok()) << ValidatePlan(plan);
  const std::string path = Path("model.gplan");
  ASSERT_TRUE(WritePlanFile(plan, path).ok());
  absl::StatusOr<std::shared_ptr<const Plan>> loaded = ReadPlanFile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ExpectSamePlan(plan, **loaded);

  // The weights point into the mapping, at a 64-byte aligned file offset (the file ends with them).
  const Plan& p = **loaded;
  EXPECT_NE(p.mapping, nullptr);
  EXPECT_TRUE(p.owned_weights.empty());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p.weights) % kPlanAlignment, 0u);
  const std::string bytes = ReadBytes(path);
  EXPECT_EQ((bytes.size() - p.weights_bytes) % kPlanAlignment, 0u);
  EXPECT_EQ(bytes, *SerializePlan(plan));
  EXPECT_TRUE(LooksLikePlan(path));
}

TEST_F(PlanFileTest, MappingOutlivesTheFile) {
  const std::string path = Path("gone.gplan");
  ASSERT_TRUE(WritePlanFile(MakeTestPlan(), path).ok());
  absl::StatusOr<std::shared_ptr<const Plan>> loaded = ReadPlanFile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  std::filesystem::remove(path);
  std::shared_ptr<const Plan> plan = *std::move(loaded);
  EXPECT_EQ(plan->weights[12], static_cast<uint8_t>(17 * 12 + 1));
  EXPECT_EQ(plan->weights[70], 206);
}

TEST_F(PlanFileTest, EmptyPlanRoundTrips) {
  Plan plan;
  plan.target = "cpu";
  absl::StatusOr<std::shared_ptr<const Plan>> loaded = RoundTrip(plan, "empty.gplan");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ExpectSamePlan(plan, **loaded);
  EXPECT_EQ((*loaded)->weights_bytes, 0);
  EXPECT_EQ(ReadBytes(Path("empty.gplan")).size() % kPlanAlignment, 0u);
}

TEST_F(PlanFileTest, SerializationIsDeterministicInOneProcess) {
  absl::StatusOr<std::string> a = SerializePlan(MakeTestPlan());
  ASSERT_TRUE(a.ok()) << a.status();
  // The same plan built again, attributes set in another order, weights in another vector.
  Plan other = MakeTestPlan();
  Attributes reversed;
  const auto& all = other.steps[0].params.all();
  for (auto it = all.rbegin(); it != all.rend(); ++it) reversed.Set(it->first, it->second);
  other.steps[0].params = reversed;
  Plan copy = other;
  PointWeightsAtOwned(&copy);
  absl::StatusOr<std::string> b = SerializePlan(copy);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(*a, *SerializePlan(MakeTestPlan()));
}

TEST_F(PlanFileTest, SerializationIsByteIdenticalAcrossProcesses) {
  const std::string first = Path("first.gplan"), second = Path("second.gplan");
  ASSERT_EQ(std::system((std::string("'") + WRITE_PLAN_EXE + "' '" + first + "'").c_str()), 0);
  ASSERT_EQ(std::system((std::string("'") + WRITE_PLAN_EXE + "' '" + second + "'").c_str()), 0);
  const std::string a = ReadBytes(first), b = ReadBytes(second);
  ASSERT_FALSE(a.empty());
  EXPECT_TRUE(a == b) << "the two processes wrote different plans";
  EXPECT_TRUE(a == *SerializePlan(MakeTestPlan())) << "the other process wrote another plan";
  absl::StatusOr<std::shared_ptr<const Plan>> loaded = ReadPlanFile(first);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ExpectSamePlan(MakeTestPlan(), **loaded);
}

TEST_F(PlanFileTest, EveryTruncationIsRefused) {
  const std::string bytes = *SerializePlan(MakeTestPlan());
  const uint32_t header_size = static_cast<uint8_t>(bytes[8]) | static_cast<uint8_t>(bytes[9]) << 8 |
                               static_cast<uint8_t>(bytes[10]) << 16 |
                               static_cast<uint32_t>(static_cast<uint8_t>(bytes[11])) << 24;
  const size_t header_end = 12 + header_size + 8;  // the header's XXH64 follows it
  const size_t program_offset = (header_end + 63) / 64 * 64;
  const size_t weights_offset = bytes.size() - 71;
  ASSERT_LT(program_offset + 1, weights_offset);
  const std::string path = Path("cut.gplan");
  auto load_cut = [&](size_t cut) {
    WriteBytes(path, bytes.substr(0, cut));
    absl::StatusOr<std::shared_ptr<const Plan>> loaded = ReadPlanFile(path);
    EXPECT_FALSE(loaded.ok()) << "cut at " << cut;
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument) << "cut at " << cut;
    return std::string(loaded.status().message());
  };
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    const std::string message = load_cut(cut);
    EXPECT_THAT(message, StartsWith(path + ": truncated plan file: ")) << "cut at " << cut;
  }
  EXPECT_EQ(load_cut(0), path + ": truncated plan file: the file has 0 bytes, the preamble needs 12");
  EXPECT_THAT(load_cut(7), HasSubstr("the file has 7 bytes"));
  EXPECT_THAT(load_cut(12), HasSubstr("header ends at byte " + std::to_string(header_end) + ", the file has 12"));
  EXPECT_THAT(load_cut(12 + header_size / 2), HasSubstr("header ends at byte"));
  EXPECT_THAT(load_cut(program_offset + 1), HasSubstr("section 'program' ends at byte"));
  EXPECT_EQ(load_cut(weights_offset + 35), path + ": truncated plan file: section 'weights' ends at byte " +
                                               std::to_string(bytes.size()) + ", the file has " +
                                               std::to_string(weights_offset + 35));
}

TEST_F(PlanFileTest, FlippedByteInProgramOrWeightsIsAHashMismatch) {
  const std::string bytes = *SerializePlan(MakeTestPlan());
  const size_t weights_offset = bytes.size() - 71;
  const std::string path = Path("flipped.gplan");

  std::string bad = bytes;
  bad[weights_offset - 64 - 1] ^= 0x01;  // inside the program: it ends past the previous 64 bytes
  WriteBytes(path, bad);
  absl::StatusOr<std::shared_ptr<const Plan>> loaded = ReadPlanFile(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(), path + ": section 'program' hash mismatch (corrupt file)");

  bad = bytes;
  bad[weights_offset + 5] ^= 0x40;
  WriteBytes(path, bad);
  loaded = ReadPlanFile(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(), path + ": section 'weights' hash mismatch (corrupt file)");
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(PlanFileTest, TrailingBytesAndNonZeroPaddingAreRefused) {
  const std::string bytes = *SerializePlan(MakeTestPlan());
  const std::string path = Path("padded.gplan");
  WriteBytes(path, bytes + std::string(3, '\0'));
  absl::StatusOr<std::shared_ptr<const Plan>> loaded = ReadPlanFile(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(), path + ": corrupt plan file: 3 bytes after the last section");

  // The last padding byte before the weights (the program is never a multiple of 64 here).
  std::string bad = bytes;
  const size_t weights_offset = bytes.size() - 71;
  ASSERT_EQ(bad[weights_offset - 1], '\0');
  bad[weights_offset - 1] = 'x';
  WriteBytes(path, bad);
  loaded = ReadPlanFile(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(),
            path + ": corrupt plan file: non-zero padding at byte " + std::to_string(weights_offset - 1));
}

// Any single corrupted byte is either refused or gives a valid plan (a header string changed);
// never a crash. Refusals all start with the path.
TEST_F(PlanFileTest, NoSingleByteCorruptionCrashes) {
  const std::string bytes = *SerializePlan(MakeTestPlan());
  const std::string path = Path("fuzz.gplan");
  const size_t header_end = 12 + (static_cast<uint8_t>(bytes[8]) | static_cast<uint8_t>(bytes[9]) << 8);
  const uint8_t patterns[] = {0xff, 0x80, 0x01};
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (uint8_t pattern : patterns) {
      std::string bad = bytes;
      bad[i] = static_cast<char>(bad[i] ^ pattern);
      WriteBytes(path, bad);
      absl::StatusOr<std::shared_ptr<const Plan>> loaded = ReadPlanFile(path);
      if (!loaded.ok()) {
        EXPECT_THAT(std::string(loaded.status().message()), StartsWith(path + ": "));
      } else {
        EXPECT_LT(i, header_end) << "a corrupt byte outside the header was accepted at " << i;
      }
    }
  }
}

TEST_F(PlanFileTest, SplitAndAssembleRewriteSectionsPastTheHashes) {
  absl::StatusOr<std::string> bytes = SerializePlan(MakeTestPlan());
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  planfile::PlanHeader header;
  PlanSections sections;
  ASSERT_TRUE(SplitPlanFile(*bytes, &header, &sections).ok());
  ASSERT_GE(sections.size(), 3u);
  EXPECT_EQ(sections.front().first, "program");
  EXPECT_EQ(sections.back().first, "weights");
  absl::StatusOr<std::string> same = AssemblePlanFile(header, sections);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(*same, *bytes);

  // A program rewritten with fresh hashes gets past the container to the program's validation.
  planfile::PlanProgram program;
  ASSERT_TRUE(program.ParseFromString(sections.front().second));
  program.mutable_buffers(0)->set_alias_of(1 << 20);
  program.mutable_buffers(0)->set_kind(static_cast<uint32_t>(BufferKind::kAlias));
  sections.front().second = program.SerializeAsString();
  absl::StatusOr<std::string> damaged = AssemblePlanFile(header, sections);
  ASSERT_TRUE(damaged.ok()) << damaged.status();
  absl::StatusOr<std::shared_ptr<const Plan>> loaded = ReadPlanBytes(damaged->data(), damaged->size(), "damaged");
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(std::string(loaded.status().message()), StartsWith("damaged: invalid plan: "));

  EXPECT_FALSE(SplitPlanFile("GCPLAN", &header, &sections).ok());
  EXPECT_FALSE(SplitPlanFile(bytes->substr(0, bytes->size() - 1), &header, &sections).ok());
}

TEST_F(PlanFileTest, NewerFormatVersionIsRefused) {
  Plan plan = MakeTestPlan();
  plan.format_version = 7;
  absl::StatusOr<std::shared_ptr<const Plan>> loaded = RoundTrip(plan, "new.gplan");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(),
            Path("new.gplan") + ": plan format version 7 is newer than the version this gcomp reads (" +
                std::to_string(kPlanFormatVersion) + "): compile the model again");
  EXPECT_TRUE(LooksLikePlan(Path("new.gplan")));
}

TEST_F(PlanFileTest, OlderFormatVersionIsRefused) {
  Plan plan = MakeTestPlan();
  plan.format_version = 1;
  absl::StatusOr<std::shared_ptr<const Plan>> loaded = RoundTrip(plan, "old.gplan");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(),
            Path("old.gplan") + ": plan format version 1 is older than the version this gcomp reads (" +
                std::to_string(kPlanFormatVersion) + "): compile the model again");
  // A version-1 file has no header hash after its header: the version is read first.
  std::string bytes = *SerializePlan(plan);
  const uint32_t header_size = static_cast<uint8_t>(bytes[8]) | static_cast<uint8_t>(bytes[9]) << 8;
  bytes.erase(12 + header_size, 8);
  WriteBytes(Path("v1.gplan"), bytes);
  loaded = ReadPlanFile(Path("v1.gplan"));
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr("plan format version 1 is older"));
}

// Every byte of the header is covered by its hash: a flip anywhere in it (the target, the ISA, the
// library versions, a section's hash) is refused.
TEST_F(PlanFileTest, FlippedByteInTheHeaderIsRefused) {
  const std::string bytes = *SerializePlan(MakeTestPlan());
  const uint32_t header_size = static_cast<uint8_t>(bytes[8]) | static_cast<uint8_t>(bytes[9]) << 8;
  const std::string path = Path("flipped_header.gplan");
  for (size_t i = 12; i < 12 + header_size + 8; ++i) {
    std::string flipped = bytes;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x01);
    WriteBytes(path, flipped);
    absl::StatusOr<std::shared_ptr<const Plan>> loaded = ReadPlanFile(path);
    ASSERT_FALSE(loaded.ok()) << "byte " << i;
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kInvalidArgument) << "byte " << i;
  }
  std::string flipped = bytes;
  flipped[12 + header_size / 2] ^= 0x01;
  WriteBytes(path, flipped);
  absl::StatusOr<std::shared_ptr<const Plan>> loaded = ReadPlanFile(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(std::string(loaded.status().message()), HasSubstr("hash mismatch"));
}

TEST_F(PlanFileTest, KernelsSectionRoundTrips) {
  Plan plan = MakeTestPlan();
  plan.device_code.push_back({"layernorm_768", "sm_90", std::string("\x7f" "ELF\0\1", 6), ".version 8.0"});
  absl::StatusOr<std::shared_ptr<const Plan>> loaded = RoundTrip(plan, "kernels.gplan");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ((*loaded)->device_code.size(), 1u);
  EXPECT_EQ((*loaded)->device_code[0].name, "layernorm_768");
  EXPECT_EQ((*loaded)->device_code[0].arch, "sm_90");
  EXPECT_EQ((*loaded)->device_code[0].cubin, plan.device_code[0].cubin);
  EXPECT_EQ((*loaded)->device_code[0].ptx, ".version 8.0");
}

TEST_F(PlanFileTest, DeviceFunctionsAndWorkspaceBoundRoundTrip) {
  Plan plan = MakeTestPlan();
  plan.workspace_bound = 32 << 20;
  for (const char* arch : {"sm_90", "sm_80"}) {
    plan.device_code.push_back({std::string("gcomp_kernels_") + arch, arch, "cubin", "ptx", {{"gcomp_pool", 32, 0, 0, 0}}});
  }
  plan.steps[0].device_functions = {"gcomp_pool"};
  absl::StatusOr<std::shared_ptr<const Plan>> loaded = RoundTrip(plan, "functions.gplan");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->workspace_bound, 32 << 20);
  ASSERT_EQ((*loaded)->device_code.size(), 2u);
  ASSERT_EQ((*loaded)->device_code[1].functions.size(), 1u);
  EXPECT_EQ((*loaded)->device_code[1].functions[0].registers, 32);
  EXPECT_EQ((*loaded)->steps[0].device_functions, std::vector<std::string>{"gcomp_pool"});
  // A step launching a function that a module lacks is refused.
  plan.device_code[1].functions.clear();
  EXPECT_THAT(ValidatePlan(plan).ToString(), HasSubstr("does not define"));
  plan.device_code.clear();
  EXPECT_THAT(ValidatePlan(plan).ToString(), HasSubstr("no kernels section modules"));
}

TEST_F(PlanFileTest, TuningSectionRoundTripsOnlyWhenPresent) {
  Plan plan = MakeTestPlan();
  const std::string untuned = *SerializePlan(plan);
  EXPECT_EQ(untuned.find("tuning"), std::string::npos);
  plan.tuning.key = "NVIDIA H200 | 132 SMs | driver 13000 | CUDA 13000 | cuBLASLt 130100 | cuDNN 91900";
  plan.tuning.choices.push_back({0, 1, 3, "cuBLASLt algo 21", 0.0125});
  absl::StatusOr<std::shared_ptr<const Plan>> loaded = RoundTrip(plan, "tuned.gplan");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->tuning.key, plan.tuning.key);
  ASSERT_EQ((*loaded)->tuning.choices.size(), 1u);
  EXPECT_EQ((*loaded)->tuning.choices[0].candidate, 3);
  EXPECT_EQ((*loaded)->tuning.choices[0].algorithm, "cuBLASLt algo 21");
  EXPECT_DOUBLE_EQ((*loaded)->tuning.choices[0].ms, 0.0125);
  ExpectSamePlan(plan, **loaded);
  // A choice outside the plan is refused.
  plan.tuning.choices[0].step = 1000;
  EXPECT_THAT(ValidatePlan(plan).ToString(), HasSubstr("outside the plan"));
  // A flipped byte inside the tuning section is a hash mismatch.
  plan.tuning.choices[0].step = 0;
  std::string bytes = *SerializePlan(plan);
  const size_t at = bytes.find("cuBLASLt algo 21");
  ASSERT_NE(at, std::string::npos);
  bytes[at] ^= 1;
  const std::string path = Path("tuning_flip.gplan");
  std::ofstream(path, std::ios::binary) << bytes;
  absl::StatusOr<std::shared_ptr<const Plan>> bad = ReadPlanFile(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("hash mismatch"));
}

TEST_F(PlanFileTest, BadMagicIsRefused) {
  std::string bytes = *SerializePlan(MakeTestPlan());
  bytes[3] = 'X';
  const std::string path = Path("bad_magic.gplan");
  WriteBytes(path, bytes);
  absl::StatusOr<std::shared_ptr<const Plan>> loaded = ReadPlanFile(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(), path + ": not a gcomp plan (bad magic)");
  EXPECT_FALSE(LooksLikePlan(path));

  WriteBytes(path, "\x08\x07\x12\x04onnx");  // the start of an ONNX ModelProto
  loaded = ReadPlanFile(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(), path + ": not a gcomp plan (bad magic)");
  WriteBytes(path, "GCP");
  EXPECT_FALSE(LooksLikePlan(path));
}

TEST_F(PlanFileTest, MissingFileAndDirectoryAreRefused) {
  const std::string missing = Path("missing.gplan");
  absl::StatusOr<std::shared_ptr<const Plan>> loaded = ReadPlanFile(missing);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(std::string(loaded.status().message()), StartsWith(missing + ": cannot open file"));
  EXPECT_FALSE(LooksLikePlan(missing));
  loaded = ReadPlanFile(dir_.string());
  ASSERT_FALSE(loaded.ok());
  EXPECT_FALSE(LooksLikePlan(dir_.string()));
  EXPECT_FALSE(WritePlanFile(MakeTestPlan(), Path("no_such_dir/x.gplan")).ok());
}

TEST_F(PlanFileTest, HugeHeaderLengthIsRefusedBeforeParsing) {
  std::string bytes = *SerializePlan(MakeTestPlan());
  bytes[8] = bytes[9] = bytes[10] = bytes[11] = '\xff';
  const std::string path = Path("huge.gplan");
  WriteBytes(path, bytes);
  absl::StatusOr<std::shared_ptr<const Plan>> loaded = ReadPlanFile(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(), path + ": truncated plan file: header ends at byte 4294967315, the file has " +
                                           std::to_string(bytes.size()));
}

TEST_F(PlanFileTest, InvalidProgramsAreRefused) {
  ExpectInvalid([](Plan& p) { p.steps[1].inputs[0] = 99; },
                "step 1 ('relu') input 0 refers to buffer 99, the plan has 13");
  ExpectInvalid([](Plan& p) { p.steps[0].inputs[1] = -2; },
                "step 0 ('conv1') input 1 refers to buffer -2, the plan has 13");
  ExpectInvalid([](Plan& p) { p.steps[3].outputs[1] = -1; },
                "step 3 ('add') output 1 refers to buffer -1, the plan has 13");
  ExpectInvalid([](Plan& p) { p.steps[3].outputs[1] = 1; }, "step 3 ('add') output 1 writes buffer 1 ('w'), a weight");
  ExpectInvalid([](Plan& p) { p.buffers[4].alias_of = 7; }, "alias cycle");
  ExpectInvalid([](Plan& p) { p.buffers[4].alias_of = 4; }, "buffer 4 ('h_view') aliases buffer 4, the plan has 13");
  ExpectInvalid([](Plan& p) { p.buffers[7].alias_of = 13; }, "buffer 7 ('h2') aliases buffer 13, the plan has 13");
  ExpectInvalid([](Plan& p) { p.buffers[2].bytes = 8; }, "lie beyond the weight section (71 bytes)");
  ExpectInvalid([](Plan& p) { p.buffers[2].offset = 32; },
                "buffer 2 ('b\xff\x01') weight offset 32 is not 64-byte aligned");
  ExpectInvalid([](Plan& p) { p.buffers[8].offset = 128; }, "beyond the batch arena (128 bytes per batch)");
  ExpectInvalid([](Plan& p) { p.buffers[5].bytes = 65; }, "beyond the fixed arena (64 bytes)");
  // Found by fuzz_plan: an f32 buffer at arena offset 6531 (misaligned element loads).
  ExpectInvalid([](Plan& p) { p.buffers[8].offset = 6531; }, "buffer 8 ('z') arena offset 6531 is not 64-byte aligned");
  ExpectInvalid([](Plan& p) { p.buffers[5].offset = 8; }, "buffer 5 ('shape') arena offset 8 is not 64-byte aligned");
  // The limits (core/limits.h).
  ExpectInvalid([](Plan& p) { p.buffers[0].dims.resize(9, LinearDim{0, 1}); }, "buffer 0 ('x') has rank 9, over the limit of 8");
  ExpectInvalid([](Plan& p) { p.buffers[0].dims[2].fixed = int64_t{1} << 31; },
                "buffer 0 ('x') dim 2 is 2147483648 at batch 16, over the limit of 2147483647");
  ExpectInvalid([](Plan& p) { p.buffers[0].dims[2].fixed = int64_t{1} << 29; },
                "buffer 0 ('x') holds 25769803776 elements at batch 16, over the limit of 4294967296 bytes");
  ExpectInvalid([](Plan& p) { p.batch_arena_bytes = int64_t{8} << 30; },
                "activation memory at max batch 16 (8589934592 bytes per batch + 64 fixed) is over the limit of "
                "68719476736 bytes");
  ExpectInvalid([](Plan& p) { p.workspace_bound = (int64_t{16} << 30) + 1; }, "workspace bound 17179869185 is outside");
  ExpectInvalid([](Plan& p) { p.buffers[0].io_index = 1; },
                "buffer 0 ('x') is graph input 1 but the plan's inputs (1) do not list it there");
  ExpectInvalid(
      [](Plan& p) {
        p.outputs = {8, 6};
      },
      "buffer 6 ('y') is graph output 0 but the plan's outputs (2) do not list it there");
  ExpectInvalid([](Plan& p) { p.inputs = {0, 0}; }, "input 1 refers to buffer 0 ('x')");
  ExpectInvalid([](Plan& p) { p.outputs.push_back(40); }, "output 2 refers to buffer 40, the plan has 13");
  ExpectInvalid([](Plan& p) { p.buffers[3].io_index = 0; },
                "buffer 3 ('h') is not an input or output but has io_index 0");
  ExpectInvalid([](Plan& p) { p.buffers[0].dims[1].fixed = -3; }, "buffer 0 ('x') dim 1 (0*batch + -3) is negative");
  ExpectInvalid([](Plan& p) { p.buffers[0].dims[0] = {-1, 4}; }, "dim 0 (-1*batch + 4) is negative");
  ExpectInvalid([](Plan& p) { p.buffers[0].dims[0].per_batch = int64_t{1} << 62; },
                "buffer 0 ('x') dim 0 overflows at batch 16");
  ExpectInvalid(
      [](Plan& p) {
        p.buffers[0].dims[1].fixed = kMaxDim;
        p.buffers[0].dims[2].fixed = kMaxDim;
      },
      "buffer 0 ('x') element count overflows at batch 16");
  ExpectInvalid([](Plan& p) { p.max_batch = 0; }, "max_batch is 0");
  ExpectInvalid([](Plan& p) { p.buffers[3].dtype = static_cast<DType>(200); }, "buffer 3 ('h') has unknown dtype 0");
  ExpectInvalid([](Plan& p) { p.buffers[3].kind = static_cast<BufferKind>(9); }, "buffer 3 ('h') has unknown kind 9");
  ExpectInvalid([](Plan& p) { p.steps[1].in_place = {1}; },
                "step 1 ('relu') output 0 is in place of input 1, which the step does not have");
  ExpectInvalid([](Plan& p) { p.steps[1].in_place = {5}; }, "output 0 is in place of input 5");
  ExpectInvalid([](Plan& p) { p.steps[3].in_place = {-1}; }, "step 3 ('add') has 1 in-place entries for 2 outputs");
  ExpectInvalid([](Plan& p) { p.buffers[6].alias_of = 3; }, "buffer 6 ('y') is not an alias but has alias_of 3");
  ExpectInvalid([](Plan& p) { p.batch_arena_bytes = int64_t{1} << 62; }, "overflow");
  ExpectInvalid([](Plan& p) { p.buffers[1].bytes = -1; }, "buffer 1 ('w') has offset 0 and size -1");
}

TEST_F(PlanFileTest, LongAliasChainIsAccepted) {
  Plan plan = MakeTestPlan();
  for (int i = 0; i < 10000; ++i) {
    Buffer view;
    view.name = absl::StrCat("v", i);
    view.kind = BufferKind::kAlias;
    view.alias_of = static_cast<int32_t>(plan.buffers.size() - 1);
    plan.buffers.push_back(view);
  }
  absl::StatusOr<std::shared_ptr<const Plan>> loaded = RoundTrip(plan, "chain.gplan");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->buffers.size(), plan.buffers.size());
  plan.buffers[13].alias_of = static_cast<int32_t>(plan.buffers.size() - 1);
  EXPECT_THAT(std::string(RoundTrip(plan, "cycle.gplan").status().message()), HasSubstr("is part of an alias cycle"));
}

}  // namespace
}  // namespace gcomp::plan
