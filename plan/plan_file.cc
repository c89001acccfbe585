// The plan file: serialization (deterministic protobuf header and program, 64-byte aligned hashed
// sections) and loading (mmap, hashes, full validation of the untrusted program).
#include "plan/plan_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <type_traits>  // std::variant_size_v
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "plan/plan.pb.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "core/limits.h"
#include "core/status_macros.h"

namespace gcomp::plan {
namespace {

constexpr char kMagic[8] = {'G', 'C', 'P', 'L', 'A', 'N', '\0', '\n'};
constexpr int64_t kMagicBytes = 8;
constexpr int64_t kPreambleBytes = 12;  // magic + u32 header length
constexpr int64_t kHeaderHashBytes = 8;  // XXH64 of the header bytes, right after them
constexpr char kProgramSection[] = "program";
constexpr char kWeightsSection[] = "weights";
constexpr char kKernelsSection[] = "kernels";
constexpr char kTuningSection[] = "tuning";  // optional: written only for tuned plans
constexpr int kMaxBufferKind = static_cast<int>(BufferKind::kAlias);

int64_t AlignUp(int64_t n) { return (n + kPlanAlignment - 1) / kPlanAlignment * kPlanAlignment; }

std::string Quoted(const std::string& s) { return absl::StrCat("'", s, "'"); }

absl::Status Invalid(const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("invalid plan: ", what));
}

absl::StatusOr<std::string> SerializeDeterministic(const google::protobuf::MessageLite& message, const char* what) {
  if (message.ByteSizeLong() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return absl::InvalidArgumentError(absl::StrCat("plan ", what, " is larger than 2 GiB"));
  }
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    if (!message.SerializeToCodedStream(&coded) || coded.HadError()) {
      return absl::InternalError(absl::StrCat("cannot serialize the plan ", what));
    }
  }
  return out;
}

// ---- Plan -> protobuf ----

void TensorToProto(const Tensor& t, planfile::TensorValue* out) {
  if (t.empty_storage()) {
    out->set_empty_storage(true);
    return;
  }
  out->set_dtype(DTypeToOnnx(t.dtype()));
  for (int64_t d : t.dims()) out->add_dims(d);
  out->set_data(reinterpret_cast<const char*>(t.data()), t.nbytes());
}

void AttributeToProto(const std::string& name, const AttrValue& value, planfile::Attribute* out) {
  out->set_name(name);
  if (const auto* i = std::get_if<int64_t>(&value)) {
    out->set_i(*i);
  } else if (const auto* f = std::get_if<float>(&value)) {
    out->set_f(*f);
  } else if (const auto* s = std::get_if<std::string>(&value)) {
    out->set_s(*s);
  } else if (const auto* ints = std::get_if<std::vector<int64_t>>(&value)) {
    auto* list = out->mutable_ints();
    for (int64_t v : *ints) list->add_values(v);
  } else if (const auto* floats = std::get_if<std::vector<float>>(&value)) {
    auto* list = out->mutable_floats();
    for (float v : *floats) list->add_values(v);
  } else if (const auto* strings = std::get_if<std::vector<std::string>>(&value)) {
    auto* list = out->mutable_strings();
    for (const std::string& v : *strings) list->add_values(v);
  } else if (const auto* tensor = std::get_if<Tensor>(&value)) {
    TensorToProto(*tensor, out->mutable_tensor());
  }
  static_assert(std::variant_size_v<AttrValue> == 7, "serialize the new attribute kind");
}

planfile::PlanProgram ProgramToProto(const Plan& plan) {
  planfile::PlanProgram program;
  for (const Buffer& b : plan.buffers) {
    planfile::Buffer* out = program.add_buffers();
    out->set_name(b.name);
    out->set_dtype(DTypeToOnnx(b.dtype));
    for (const LinearDim& d : b.dims) {
      planfile::LinearDim* dim = out->add_dims();
      dim->set_per_batch(d.per_batch);
      dim->set_fixed(d.fixed);
    }
    out->set_kind(static_cast<uint32_t>(b.kind));
    out->set_offset(b.offset);
    out->set_bytes(b.bytes);
    out->set_alias_of(b.alias_of);
    out->set_io_index(b.io_index);
    out->set_format(b.format);
  }
  for (int32_t i : plan.inputs) program.add_inputs(i);
  for (int32_t o : plan.outputs) program.add_outputs(o);
  for (const Step& s : plan.steps) {
    planfile::Step* out = program.add_steps();
    out->set_name(s.name);
    out->set_op(s.op);
    out->set_kernel(s.kernel);
    out->set_reason(s.reason);
    for (const auto& [name, value] : s.params.all()) AttributeToProto(name, value, out->add_params());
    out->set_params_version(s.params_version);
    for (int32_t i : s.inputs) out->add_inputs(i);
    for (int32_t o : s.outputs) out->add_outputs(o);
    for (int32_t p : s.in_place) out->add_in_place(p);
    for (const std::string& o : s.origin) out->add_origin(o);
    for (const std::string& d : s.decisions) out->add_decisions(d);
    for (const std::string& f : s.device_functions) out->add_device_functions(f);
  }
  program.set_batch_arena_bytes(plan.batch_arena_bytes);
  program.set_fixed_arena_bytes(plan.fixed_arena_bytes);
  program.set_batch_peak_live_bytes(plan.batch_peak_live_bytes);
  program.set_fixed_peak_live_bytes(plan.fixed_peak_live_bytes);
  program.set_memory_space(plan.memory_space);
  program.set_arena_alignment(plan.arena_alignment);
  program.set_workspace_bound(plan.workspace_bound);
  return program;
}

struct SectionBytes {
  std::string name;
  const char* data;
  int64_t size;
};

// The file up to the start of the last section (preamble, `header` with its sections set from
// `parts`, the header hash, every section but the last, the padding before the last): the last
// section's bytes follow at the returned string's end.
absl::StatusOr<std::string> ContainerPrefix(planfile::PlanHeader header, const std::vector<SectionBytes>& parts) {
  header.clear_sections();
  for (const SectionBytes& part : parts) {
    planfile::PlanSection* section = header.add_sections();
    section->set_name(part.name);
    section->set_offset(kPlanAlignment);  // placeholder of the same (fixed) width
    section->set_size(part.size);
    section->set_xxh64(XXH64(part.size > 0 ? part.data : nullptr, part.size, 0));
  }
  std::string header_bytes;
  { ASSIGN_OR_RETURN(header_bytes, SerializeDeterministic(header, "header")); }
  const int64_t header_size = static_cast<int64_t>(header_bytes.size());
  std::vector<int64_t> offsets;
  int64_t next = AlignUp(kPreambleBytes + header_size + kHeaderHashBytes);
  for (size_t i = 0; i < parts.size(); ++i) {
    offsets.push_back(next);
    header.mutable_sections(static_cast<int>(i))->set_offset(next);
    next = AlignUp(next + parts[i].size);
  }
  { ASSIGN_OR_RETURN(header_bytes, SerializeDeterministic(header, "header")); }
  if (static_cast<int64_t>(header_bytes.size()) != header_size) {
    return absl::InternalError("plan header changed length when the section offsets were set");
  }

  std::string out(kMagic, kMagicBytes);
  const uint32_t h = static_cast<uint32_t>(header_size);
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((h >> (8 * i)) & 0xff));
  out += header_bytes;
  const uint64_t header_hash = XXH64(header_bytes.data(), header_bytes.size(), 0);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((header_hash >> (8 * i)) & 0xff));
  for (size_t i = 0; i < parts.size(); ++i) {
    out.resize(offsets[i], '\0');
    if (i + 1 < parts.size()) out.append(parts[i].data, static_cast<size_t>(parts[i].size));
  }
  return out;
}

// Everything of the file before the weight bytes (preamble, header, program, padding); the weights
// follow at the returned prefix's end.
absl::StatusOr<std::string> SerializePrefix(const Plan& plan) {
  if (plan.weights_bytes < 0 || (plan.weights_bytes > 0 && plan.weights == nullptr)) {
    return absl::InvalidArgumentError(
        absl::StrCat("plan has ", plan.weights_bytes, " weight bytes but no weight data"));
  }
  std::string program, kernels;
  { ASSIGN_OR_RETURN(program, SerializeDeterministic(ProgramToProto(plan), "program")); }
  {
    planfile::PlanKernels k;
    for (const DeviceCode& c : plan.device_code) {
      planfile::DeviceCode* out = k.add_code();
      out->set_name(c.name);
      out->set_arch(c.arch);
      out->set_cubin(c.cubin);
      out->set_ptx(c.ptx);
      for (const DeviceFunction& f : c.functions) {
        planfile::DeviceFunction* fo = out->add_functions();
        fo->set_name(f.name);
        fo->set_registers(f.registers);
        fo->set_spill_store_bytes(f.spill_store_bytes);
        fo->set_spill_load_bytes(f.spill_load_bytes);
        fo->set_stack_bytes(f.stack_bytes);
      }
    }
    ASSIGN_OR_RETURN(kernels, SerializeDeterministic(k, "kernels"));
  }
  std::string tuning;
  if (!plan.tuning.empty()) {
    planfile::PlanTuning t;
    t.set_key(plan.tuning.key);
    for (const TuningChoice& c : plan.tuning.choices) {
      planfile::TuningChoice* o = t.add_choices();
      o->set_step(c.step);
      o->set_batch(c.batch);
      o->set_candidate(c.candidate);
      o->set_algorithm(c.algorithm);
      o->set_ms(c.ms);
    }
    ASSIGN_OR_RETURN(tuning, SerializeDeterministic(t, "tuning"));
  }
  planfile::PlanHeader header;
  header.set_format_version(plan.format_version);
  header.set_target(plan.target);
  header.set_isa(plan.isa);
  header.set_gcomp_version(plan.gcomp_version);
  header.set_library_versions(plan.library_versions);
  header.set_model(plan.model);
  header.set_precision(plan.precision);
  header.set_level(plan.level);
  header.set_max_batch(plan.max_batch);
  // The sections in file order; the weights come last: WritePlanFile writes them from the plan
  // after the serialized prefix.
  std::vector<SectionBytes> parts = {{kProgramSection, program.data(), static_cast<int64_t>(program.size())},
                                     {kKernelsSection, kernels.data(), static_cast<int64_t>(kernels.size())}};
  if (!tuning.empty()) parts.push_back({kTuningSection, tuning.data(), static_cast<int64_t>(tuning.size())});
  parts.push_back({kWeightsSection, reinterpret_cast<const char*>(plan.weights), plan.weights_bytes});
  return ContainerPrefix(std::move(header), parts);
}

// ---- protobuf -> Plan ----

absl::StatusOr<Tensor> TensorFromProto(const planfile::TensorValue& t, const std::string& where) {
  if (t.empty_storage()) {
    if (!t.data().empty() || t.dims_size() > 0) {
      return Invalid(absl::StrCat(where, ": tensor without storage has dims or data"));
    }
    return Tensor();
  }
  std::optional<DType> dtype = DTypeFromOnnx(t.dtype());
  if (!dtype) return Invalid(absl::StrCat(where, ": tensor has unknown dtype ", t.dtype()));
  int64_t numel = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || __builtin_mul_overflow(numel, d, &numel)) {
      return Invalid(absl::StrCat(where, ": tensor has a negative or overflowing dim ", d));
    }
  }
  int64_t nbytes = 0;
  if (__builtin_mul_overflow(numel, static_cast<int64_t>(DTypeSize(*dtype)), &nbytes) ||
      nbytes != static_cast<int64_t>(t.data().size())) {
    return Invalid(absl::StrCat(where, ": tensor of ", numel, " ", DTypeName(*dtype), " elements has ", t.data().size(),
                                " data bytes"));
  }
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  absl::StatusOr<Tensor> tensor = Tensor::Zeros(*dtype, std::move(dims));
  if (!tensor.ok()) return Invalid(absl::StrCat(where, ": ", tensor.status().message()));
  if (nbytes > 0) std::memcpy(tensor->mutable_data(), t.data().data(), nbytes);
  return tensor;
}

absl::StatusOr<AttrValue> AttributeFromProto(const planfile::Attribute& a, const std::string& where) {
  switch (a.value_case()) {
    case planfile::Attribute::kI:
      return AttrValue(a.i());
    case planfile::Attribute::kF:
      return AttrValue(a.f());
    case planfile::Attribute::kS:
      return AttrValue(a.s());
    case planfile::Attribute::kInts:
      return AttrValue(std::vector<int64_t>(a.ints().values().begin(), a.ints().values().end()));
    case planfile::Attribute::kFloats:
      return AttrValue(std::vector<float>(a.floats().values().begin(), a.floats().values().end()));
    case planfile::Attribute::kStrings:
      return AttrValue(std::vector<std::string>(a.strings().values().begin(), a.strings().values().end()));
    case planfile::Attribute::kTensor: {
      absl::StatusOr<Tensor> t = TensorFromProto(a.tensor(), where);
      if (!t.ok()) return t.status();
      return AttrValue(*std::move(t));
    }
    case planfile::Attribute::VALUE_NOT_SET:
      break;
  }
  return Invalid(absl::StrCat(where, " has no value"));
}

std::string StepLabel(size_t i, const std::string& name) { return absl::StrCat("step ", i, " (", Quoted(name), ")"); }
std::string BufferLabel(size_t i, const std::string& name) {
  return absl::StrCat("buffer ", i, " (", Quoted(name), ")");
}

// Converts the program; checks what the in-memory Plan cannot represent (dtype numbers, buffer
// kinds, attribute values). ValidatePlan checks the rest.
absl::Status ProgramFromProto(const planfile::PlanProgram& program, Plan* plan) {
  plan->buffers.reserve(program.buffers_size());
  for (int i = 0; i < program.buffers_size(); ++i) {
    const planfile::Buffer& in = program.buffers(i);
    Buffer b;
    b.name = in.name();
    std::optional<DType> dtype = DTypeFromOnnx(in.dtype());
    if (!dtype) {
      return Invalid(absl::StrCat(BufferLabel(i, b.name), " has unknown dtype ", in.dtype()));
    }
    b.dtype = *dtype;
    if (in.kind() > static_cast<uint32_t>(kMaxBufferKind)) {
      return Invalid(absl::StrCat(BufferLabel(i, b.name), " has unknown kind ", in.kind()));
    }
    b.kind = static_cast<BufferKind>(in.kind());
    b.dims.reserve(in.dims_size());
    for (const planfile::LinearDim& d : in.dims()) b.dims.push_back({d.per_batch(), d.fixed()});
    b.offset = in.offset();
    b.bytes = in.bytes();
    b.alias_of = in.alias_of();
    b.io_index = in.io_index();
    b.format = in.format();
    plan->buffers.push_back(std::move(b));
  }
  plan->inputs.assign(program.inputs().begin(), program.inputs().end());
  plan->outputs.assign(program.outputs().begin(), program.outputs().end());
  plan->steps.reserve(program.steps_size());
  for (int i = 0; i < program.steps_size(); ++i) {
    const planfile::Step& in = program.steps(i);
    Step s;
    s.name = in.name();
    s.op = in.op();
    s.kernel = in.kernel();
    s.reason = in.reason();
    for (const planfile::Attribute& a : in.params()) {
      const std::string where = absl::StrCat(StepLabel(i, s.name), " parameter ", Quoted(a.name()));
      if (s.params.Has(a.name())) return Invalid(absl::StrCat(where, " appears twice"));
      absl::StatusOr<AttrValue> value = AttributeFromProto(a, where);
      if (!value.ok()) return value.status();
      s.params.Set(a.name(), *std::move(value));
    }
    s.params_version = in.params_version();
    s.inputs.assign(in.inputs().begin(), in.inputs().end());
    s.outputs.assign(in.outputs().begin(), in.outputs().end());
    s.in_place.assign(in.in_place().begin(), in.in_place().end());
    s.origin.assign(in.origin().begin(), in.origin().end());
    s.decisions.assign(in.decisions().begin(), in.decisions().end());
    s.device_functions.assign(in.device_functions().begin(), in.device_functions().end());
    plan->steps.push_back(std::move(s));
  }
  plan->batch_arena_bytes = program.batch_arena_bytes();
  plan->fixed_arena_bytes = program.fixed_arena_bytes();
  plan->batch_peak_live_bytes = program.batch_peak_live_bytes();
  plan->fixed_peak_live_bytes = program.fixed_peak_live_bytes();
  plan->memory_space = program.memory_space();
  plan->arena_alignment = program.arena_alignment();
  plan->workspace_bound = program.workspace_bound();
  return absl::OkStatus();
}

// ---- validation ----

// [offset, offset + bytes) within [0, limit), without overflow.
bool RangeWithin(int64_t offset, int64_t bytes, int64_t limit) {
  return offset >= 0 && bytes >= 0 && offset <= limit && bytes <= limit - offset;
}

absl::Status ValidateBuffer(const Plan& plan, size_t i) {
  const Buffer& b = plan.buffers[i];
  const std::string label = BufferLabel(i, b.name);
  const int64_t n = static_cast<int64_t>(plan.buffers.size());
  if (DTypeToOnnx(b.dtype) == 0 || !DTypeFromOnnx(DTypeToOnnx(b.dtype))) {
    return Invalid(absl::StrCat(label, " has an invalid dtype"));
  }
  if (static_cast<int>(b.kind) > kMaxBufferKind) {
    return Invalid(absl::StrCat(label, " has unknown kind ", static_cast<int>(b.kind)));
  }
  if (absl::Status s = CheckRank(static_cast<int64_t>(b.dims.size())); !s.ok()) {
    return Invalid(absl::StrCat(label, " has ", s.message()));
  }
  // Every dim is linear in the batch, so non-negative at batch 1 and max_batch means everywhere
  // (and at most its larger end).
  int64_t numel = 1;
  for (size_t d = 0; d < b.dims.size(); ++d) {
    const LinearDim& dim = b.dims[d];
    int64_t at_max = 0, at_one = 0;
    if (__builtin_mul_overflow(dim.per_batch, plan.max_batch, &at_max) ||
        __builtin_add_overflow(at_max, dim.fixed, &at_max) ||
        __builtin_add_overflow(dim.per_batch, dim.fixed, &at_one)) {
      return Invalid(absl::StrCat(label, " dim ", d, " overflows at batch ", plan.max_batch));
    }
    if (at_one < 0 || at_max < 0) {
      return Invalid(absl::StrCat(label, " dim ", d, " (", dim.per_batch, "*batch + ", dim.fixed, ") is negative"));
    }
    if (std::max(at_one, at_max) > kMaxDim) {
      return Invalid(absl::StrCat(label, " dim ", d, " is ", std::max(at_one, at_max), " at batch ",
                                  at_max >= at_one ? plan.max_batch : 1, ", over the limit of ", kMaxDim));
    }
    if (__builtin_mul_overflow(numel, std::max(at_one, at_max), &numel)) {
      return Invalid(absl::StrCat(label, " element count overflows at batch ", plan.max_batch));
    }
  }
  int64_t max_bytes = 0;
  if (__builtin_mul_overflow(numel, static_cast<int64_t>(DTypeSize(b.dtype)), &max_bytes) ||
      max_bytes > kMaxTensorBytes) {
    return Invalid(absl::StrCat(label, " holds ", numel, " elements at batch ", plan.max_batch, ", over the limit of ",
                                kMaxTensorBytes, " bytes"));
  }
  if (b.offset < 0 || b.bytes < 0) {
    return Invalid(absl::StrCat(label, " has offset ", b.offset, " and size ", b.bytes));
  }
  if (b.kind != BufferKind::kAlias && b.alias_of != -1) {
    return Invalid(absl::StrCat(label, " is not an alias but has alias_of ", b.alias_of));
  }
  if (b.kind != BufferKind::kInput && b.kind != BufferKind::kOutput && b.io_index != -1) {
    return Invalid(absl::StrCat(label, " is not an input or output but has io_index ", b.io_index));
  }
  switch (b.kind) {
    case BufferKind::kConstant:
      if (b.offset % kPlanAlignment != 0) {
        return Invalid(absl::StrCat(label, " weight offset ", b.offset, " is not ", kPlanAlignment, "-byte aligned"));
      }
      if (!RangeWithin(b.offset, b.bytes, plan.weights_bytes)) {
        return Invalid(absl::StrCat(label, " weight bytes [", b.offset, ", +", b.bytes,
                                    ") lie beyond the weight section (", plan.weights_bytes, " bytes)"));
      }
      break;
    case BufferKind::kBatchArena:
    case BufferKind::kFixedArena:
      // Kernels read elements (and vectors) in place: every arena offset keeps the plan's alignment.
      if (b.offset % plan.arena_alignment != 0) {
        return Invalid(absl::StrCat(label, " arena offset ", b.offset, " is not ", plan.arena_alignment,
                                    "-byte aligned"));
      }
      break;
    default: break;
  }
  switch (b.kind) {
    case BufferKind::kBatchArena:
      if (!RangeWithin(b.offset, b.bytes, plan.batch_arena_bytes)) {
        return Invalid(absl::StrCat(label, " bytes [", b.offset, ", +", b.bytes,
                                    ") per batch lie beyond the batch arena (", plan.batch_arena_bytes,
                                    " bytes per batch)"));
      }
      break;
    case BufferKind::kFixedArena:
      if (!RangeWithin(b.offset, b.bytes, plan.fixed_arena_bytes)) {
        return Invalid(absl::StrCat(label, " bytes [", b.offset, ", +", b.bytes, ") lie beyond the fixed arena (",
                                    plan.fixed_arena_bytes, " bytes)"));
      }
      break;
    case BufferKind::kInput:
    case BufferKind::kOutput: {
      const bool input = b.kind == BufferKind::kInput;
      const std::vector<int32_t>& list = input ? plan.inputs : plan.outputs;
      const char* what = input ? "input" : "output";
      if (b.io_index < 0 || b.io_index >= static_cast<int64_t>(list.size()) ||
          list[b.io_index] != static_cast<int32_t>(i)) {
        return Invalid(absl::StrCat(label, " is graph ", what, " ", b.io_index, " but the plan's ", what, "s (",
                                    list.size(), ") do not list it there"));
      }
      break;
    }
    case BufferKind::kAlias:
      if (b.alias_of < 0 || b.alias_of >= n || b.alias_of == static_cast<int32_t>(i)) {
        return Invalid(absl::StrCat(label, " aliases buffer ", b.alias_of, ", the plan has ", n));
      }
      break;
  }
  return absl::OkStatus();
}

// Alias chains end at a non-alias buffer (no cycles); linear time.
absl::Status ValidateAliasChains(const Plan& plan) {
  enum : uint8_t { kUnseen, kOnPath, kDone };
  std::vector<uint8_t> state(plan.buffers.size(), kUnseen);
  std::vector<size_t> path;
  for (size_t start = 0; start < plan.buffers.size(); ++start) {
    path.clear();
    size_t b = start;
    while (state[b] == kUnseen && plan.buffers[b].kind == BufferKind::kAlias) {
      state[b] = kOnPath;
      path.push_back(b);
      b = static_cast<size_t>(plan.buffers[b].alias_of);  // in range: checked per buffer
    }
    if (state[b] == kOnPath) {
      return Invalid(absl::StrCat(BufferLabel(b, plan.buffers[b].name), " is part of an alias cycle"));
    }
    for (size_t p : path) state[p] = kDone;
    state[b] = kDone;
  }
  return absl::OkStatus();
}

absl::Status ValidateIoLists(const Plan& plan) {
  const int64_t n = static_cast<int64_t>(plan.buffers.size());
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const int32_t b = plan.inputs[i];
    if (b < 0 || b >= n) {
      return Invalid(absl::StrCat("input ", i, " refers to buffer ", b, ", the plan has ", n));
    }
    const Buffer& buf = plan.buffers[b];
    if (buf.kind != BufferKind::kInput || buf.io_index != static_cast<int32_t>(i)) {
      return Invalid(
          absl::StrCat("input ", i, " refers to ", BufferLabel(b, buf.name), ", which is not graph input ", i));
    }
  }
  for (size_t i = 0; i < plan.outputs.size(); ++i) {
    const int32_t b = plan.outputs[i];
    if (b < 0 || b >= n) {
      return Invalid(absl::StrCat("output ", i, " refers to buffer ", b, ", the plan has ", n));
    }
    const Buffer& buf = plan.buffers[b];
    // An output may also live in an arena (when a step reads it) or be an input or constant.
    if (buf.kind == BufferKind::kOutput && buf.io_index != static_cast<int32_t>(i)) {
      return Invalid(absl::StrCat("output ", i, " refers to ", BufferLabel(b, buf.name), ", which is graph output ",
                                  buf.io_index));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateStep(const Plan& plan, size_t i) {
  const Step& s = plan.steps[i];
  const std::string label = StepLabel(i, s.name);
  const int64_t n = static_cast<int64_t>(plan.buffers.size());
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    if (s.inputs[k] < -1 || s.inputs[k] >= n) {
      return Invalid(absl::StrCat(label, " input ", k, " refers to buffer ", s.inputs[k], ", the plan has ", n));
    }
  }
  for (size_t k = 0; k < s.outputs.size(); ++k) {
    const int32_t b = s.outputs[k];
    if (b < 0 || b >= n) {
      return Invalid(absl::StrCat(label, " output ", k, " refers to buffer ", b, ", the plan has ", n));
    }
    const BufferKind kind = plan.buffers[b].kind;
    if (kind == BufferKind::kConstant || kind == BufferKind::kInput) {
      return Invalid(absl::StrCat(label, " output ", k, " writes ", BufferLabel(b, plan.buffers[b].name), ", a ",
                                  kind == BufferKind::kConstant ? "weight" : "graph input"));
    }
  }
  if (!s.in_place.empty() && s.in_place.size() != s.outputs.size()) {
    return Invalid(
        absl::StrCat(label, " has ", s.in_place.size(), " in-place entries for ", s.outputs.size(), " outputs"));
  }
  for (size_t k = 0; k < s.in_place.size(); ++k) {
    const int32_t p = s.in_place[k];
    if (p == -1) continue;
    if (p < 0 || p >= static_cast<int64_t>(s.inputs.size()) || s.inputs[p] == -1) {
      return Invalid(absl::StrCat(label, " output ", k, " is in place of input ", p, ", which the step does not have"));
    }
  }
  return absl::OkStatus();
}

// ---- reading ----

// A read-only private mapping of a whole file, unmapped when the last reference goes.
struct MappedFile {
  std::shared_ptr<const void> mapping;
  const uint8_t* data = nullptr;
  int64_t size = 0;
};

absl::StatusOr<MappedFile> MapFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open file: ", std::strerror(errno)));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file"));
  }
  MappedFile file;
  file.size = st.st_size;
  if (file.size == 0) {
    ::close(fd);
    return file;
  }
  void* addr = ::mmap(nullptr, static_cast<size_t>(file.size), PROT_READ, MAP_PRIVATE, fd, 0);
  const int mmap_errno = errno;
  ::close(fd);
  if (addr == MAP_FAILED) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot map file: ", std::strerror(mmap_errno)));
  }
  const size_t length = static_cast<size_t>(file.size);
  file.mapping = std::shared_ptr<const void>(addr, [length](const void* p) { ::munmap(const_cast<void*>(p), length); });
  file.data = static_cast<const uint8_t*>(addr);
  return file;
}

struct SectionView {
  const uint8_t* data = nullptr;
  int64_t size = 0;
};

// Checks the preamble, header, version and every section's bounds and hash. `path` prefixes
// nothing here: the caller adds it.
absl::Status ReadContainer(const MappedFile& file, planfile::PlanHeader* header, SectionView* program,
                           SectionView* kernels, SectionView* weights, SectionView* tuning) {
  const int64_t fsize = file.size;
  const int64_t magic_seen = std::min(fsize, kMagicBytes);
  if (magic_seen > 0 && std::memcmp(file.data, kMagic, magic_seen) != 0) {
    return absl::InvalidArgumentError("not a gcomp plan (bad magic)");
  }
  if (fsize < kPreambleBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("truncated plan file: the file has ", fsize, " bytes, the preamble needs ", kPreambleBytes));
  }
  uint32_t header_size = 0;
  for (int i = 0; i < 4; ++i) header_size |= uint32_t{file.data[kMagicBytes + i]} << (8 * i);
  const int64_t header_bytes_end = kPreambleBytes + int64_t{header_size};
  const bool parsed = header_bytes_end <= fsize &&
                      header_size <= static_cast<uint32_t>(std::numeric_limits<int32_t>::max()) &&
                      header->ParseFromArray(file.data + kPreambleBytes, static_cast<int>(header_size));
  // The format version is read before the header hash, which older formats do not have.
  auto version_error = [&]() {
    return absl::InvalidArgumentError(absl::StrCat("plan format version ", header->format_version(), " is ",
                                                   header->format_version() > kPlanFormatVersion ? "newer" : "older",
                                                   " than the version this gcomp reads (", kPlanFormatVersion,
                                                   "): compile the model again"));
  };
  if (parsed && header->format_version() != kPlanFormatVersion && header->format_version() != 0) return version_error();
  const int64_t header_end = header_bytes_end + kHeaderHashBytes;
  if (header_end > fsize) {
    return absl::InvalidArgumentError(
        absl::StrCat("truncated plan file: header ends at byte ", header_end, ", the file has ", fsize));
  }
  uint64_t header_hash = 0;
  for (int i = 0; i < 8; ++i) header_hash |= uint64_t{file.data[header_bytes_end + i]} << (8 * i);
  if (XXH64(file.data + kPreambleBytes, header_size, 0) != header_hash) {
    return absl::InvalidArgumentError("plan header hash mismatch (corrupt file)");
  }
  if (!parsed) return absl::InvalidArgumentError("corrupt plan header (cannot parse it)");
  if (header->format_version() != kPlanFormatVersion) return version_error();
  bool have_program = false, have_weights = false, have_kernels = false;
  std::set<std::string> seen;
  for (const planfile::PlanSection& s : header->sections()) {
    const std::string name = Quoted(s.name());
    if (!seen.insert(s.name()).second) {
      return absl::InvalidArgumentError(absl::StrCat("section ", name, " appears twice"));
    }
    uint64_t end = 0;
    if (__builtin_add_overflow(s.offset(), s.size(), &end) || end > static_cast<uint64_t>(fsize)) {
      const std::string end_text = end >= s.offset() ? absl::StrCat(end) : std::string("beyond 2^64");
      return absl::InvalidArgumentError(
          absl::StrCat("truncated plan file: section ", name, " ends at byte ", end_text, ", the file has ", fsize));
    }
    if (s.offset() % kPlanAlignment != 0 || s.offset() < static_cast<uint64_t>(header_end)) {
      return absl::InvalidArgumentError(absl::StrCat("corrupt plan header: section ", name, " at byte ", s.offset(),
                                                     " is not ", kPlanAlignment, "-byte aligned after the header"));
    }
    SectionView view{file.data + s.offset(), static_cast<int64_t>(s.size())};
    if (s.name() == kProgramSection) {
      *program = view;
      have_program = true;
    } else if (s.name() == kWeightsSection) {
      *weights = view;
      have_weights = true;
    } else if (s.name() == kKernelsSection) {
      *kernels = view;
      have_kernels = true;
    } else if (s.name() == kTuningSection) {
      *tuning = view;
    }
  }
  // Everything outside the header and the sections is zero padding, and the file ends with the
  // last section: no byte of the file escapes the hashes except the header itself.
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const planfile::PlanSection& s : header->sections()) ranges.emplace_back(s.offset(), s.size());
  std::sort(ranges.begin(), ranges.end());
  uint64_t pos = static_cast<uint64_t>(header_end);
  for (const auto& [offset, size] : ranges) {
    if (offset < pos) {
      return absl::InvalidArgumentError(absl::StrCat("corrupt plan header: sections overlap at byte ", offset));
    }
    for (; pos < offset; ++pos) {
      if (file.data[pos] != 0) {
        return absl::InvalidArgumentError(absl::StrCat("corrupt plan file: non-zero padding at byte ", pos));
      }
    }
    pos = offset + size;
  }
  if (pos != static_cast<uint64_t>(fsize)) {
    return absl::InvalidArgumentError(
        absl::StrCat("corrupt plan file: ", fsize - pos, " bytes after the last section"));
  }
  if (!have_program || !have_weights || !have_kernels) {
    return absl::InvalidArgumentError(absl::StrCat(
        "corrupt plan header: no section ",
        Quoted(!have_program ? kProgramSection : (!have_kernels ? kKernelsSection : kWeightsSection))));
  }
  // Hashed once the sections are known not to overlap: at most the file's size is hashed.
  for (const planfile::PlanSection& s : header->sections()) {
    const uint8_t* data = s.size() > 0 ? file.data + s.offset() : nullptr;
    if (XXH64(data, s.size(), 0) != s.xxh64()) {
      return absl::InvalidArgumentError(absl::StrCat("section ", Quoted(s.name()), " hash mismatch (corrupt file)"));
    }
  }
  return absl::OkStatus();
}

absl::Status WriteAll(int fd, const uint8_t* data, int64_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, static_cast<size_t>(std::min<int64_t>(size, 1 << 30)));
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(std::strerror(errno));
    }
    data += n;
    size -= n;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> SerializePlan(const Plan& plan) {
  std::string out;
  { ASSIGN_OR_RETURN(out, SerializePrefix(plan)); }
  if (plan.weights_bytes > 0) {
    out.append(reinterpret_cast<const char*>(plan.weights), static_cast<size_t>(plan.weights_bytes));
  }
  return out;
}

absl::Status SplitPlanFile(const std::string& bytes, planfile::PlanHeader* header, PlanSections* sections) {
  const auto size = static_cast<int64_t>(bytes.size());
  if (size < kPreambleBytes || std::memcmp(bytes.data(), kMagic, kMagicBytes) != 0) {
    return absl::InvalidArgumentError("not a gcomp plan (bad magic or truncated preamble)");
  }
  uint32_t header_size = 0;
  for (int i = 0; i < 4; ++i) header_size |= uint32_t{static_cast<uint8_t>(bytes[kMagicBytes + i])} << (8 * i);
  if (kPreambleBytes + int64_t{header_size} + kHeaderHashBytes > size ||
      !header->ParseFromArray(bytes.data() + kPreambleBytes, static_cast<int>(header_size))) {
    return absl::InvalidArgumentError("corrupt plan header (cannot parse it)");
  }
  sections->clear();
  for (const planfile::PlanSection& s : header->sections()) {
    if (s.offset() > static_cast<uint64_t>(size) || s.size() > static_cast<uint64_t>(size) - s.offset()) {
      return absl::InvalidArgumentError(absl::StrCat("section ", Quoted(s.name()), " is outside the file"));
    }
    sections->emplace_back(s.name(), bytes.substr(s.offset(), s.size()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> AssemblePlanFile(const planfile::PlanHeader& header, const PlanSections& sections) {
  std::vector<SectionBytes> parts;
  for (const auto& [name, bytes] : sections) parts.push_back({name, bytes.data(), static_cast<int64_t>(bytes.size())});
  std::string out;
  { ASSIGN_OR_RETURN(out, ContainerPrefix(header, parts)); }
  if (!sections.empty()) out += sections.back().second;
  return out;
}

absl::Status WritePlanFile(const Plan& plan, const std::string& path) {
  std::string prefix;
  { ASSIGN_OR_RETURN(prefix, SerializePrefix(plan)); }
  // Written to a temporary file renamed into place: a reader never maps a half-written plan.
  const std::string tmp = absl::StrCat(path, ".tmp.", ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot write plan file: ", std::strerror(errno)));
  }
  absl::Status status = WriteAll(fd, reinterpret_cast<const uint8_t*>(prefix.data()), prefix.size());
  if (status.ok()) status = WriteAll(fd, plan.weights, plan.weights_bytes);
  if (::close(fd) != 0 && status.ok()) status = absl::InternalError(std::strerror(errno));
  if (status.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    status = absl::InternalError(std::strerror(errno));
  }
  if (!status.ok()) {
    ::unlink(tmp.c_str());
    return absl::InvalidArgumentError(absl::StrCat(path, ": cannot write plan file: ", status.message()));
  }
  return absl::OkStatus();
}

// Every module names its architecture, and every device function a step launches is defined by
// every module (one module per architecture, all built from the same source).
absl::Status ValidateDeviceCode(const Plan& plan) {
  std::set<std::string> archs;
  for (const DeviceCode& c : plan.device_code) {
    if (c.arch.empty() || (c.cubin.empty() && c.ptx.empty())) {
      return Invalid(absl::StrCat("device module '", c.name, "' has no architecture or no code"));
    }
    if (!archs.insert(c.arch).second) return Invalid(absl::StrCat("two device modules for ", c.arch));
  }
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    for (const std::string& f : plan.steps[i].device_functions) {
      if (plan.device_code.empty()) {
        return Invalid(absl::StrCat(StepLabel(i, plan.steps[i].name), " launches device function '", f,
                                    "', and the plan has no kernels section modules"));
      }
      for (const DeviceCode& c : plan.device_code) {
        bool found = false;
        for (const DeviceFunction& d : c.functions) found |= d.name == f;
        if (!found) {
          return Invalid(absl::StrCat(StepLabel(i, plan.steps[i].name), " launches device function '", f,
                                      "', which module '", c.name, "' (", c.arch, ") does not define"));
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ValidatePlan(const Plan& plan) {
  if (plan.max_batch < 1) return Invalid(absl::StrCat("max_batch is ", plan.max_batch));
  if (plan.memory_space.empty()) return Invalid("no memory space");
  if (plan.arena_alignment < kPlanAlignment || plan.arena_alignment > 4096 ||
      (plan.arena_alignment & (plan.arena_alignment - 1)) != 0) {
    return Invalid(absl::StrCat("arena alignment ", plan.arena_alignment, " is not a power of two in 64..4096"));
  }
  if (plan.weights_bytes < 0 || (plan.weights_bytes > 0 && plan.weights == nullptr)) {
    return Invalid(absl::StrCat("weight section of ", plan.weights_bytes, " bytes has no data"));
  }
  int64_t batch_arena_max = 0;
  if (plan.batch_arena_bytes < 0 || plan.fixed_arena_bytes < 0 || plan.batch_peak_live_bytes < 0 ||
      plan.fixed_peak_live_bytes < 0 ||
      __builtin_mul_overflow(plan.batch_arena_bytes, plan.max_batch, &batch_arena_max)) {
    return Invalid(absl::StrCat("arena sizes (batch ", plan.batch_arena_bytes, " x ", plan.max_batch, ", fixed ",
                                plan.fixed_arena_bytes, ") are negative or overflow"));
  }
  int64_t arena_total = 0;
  if (__builtin_add_overflow(batch_arena_max, plan.fixed_arena_bytes, &arena_total) || arena_total > kMaxArenaBytes) {
    return Invalid(absl::StrCat("activation memory at max batch ", plan.max_batch, " (", plan.batch_arena_bytes,
                                " bytes per batch + ", plan.fixed_arena_bytes, " fixed) is over the limit of ",
                                kMaxArenaBytes, " bytes"));
  }
  // A larger workspace bound is a damaged or hostile plan.
  if (plan.workspace_bound < 0 || plan.workspace_bound > kMaxWorkspaceBytes) {
    return Invalid(absl::StrCat("workspace bound ", plan.workspace_bound, " is outside 0..", kMaxWorkspaceBytes));
  }
  if (static_cast<int64_t>(plan.steps.size()) > kMaxPlanEntries ||
      static_cast<int64_t>(plan.buffers.size()) > kMaxPlanEntries) {
    return Invalid(absl::StrCat(plan.steps.size(), " steps and ", plan.buffers.size(), " buffers: over the limit of ",
                                kMaxPlanEntries, " each"));
  }
  for (size_t i = 0; i < plan.buffers.size(); ++i) RETURN_IF_ERROR(ValidateBuffer(plan, i));
  RETURN_IF_ERROR(ValidateAliasChains(plan));
  RETURN_IF_ERROR(ValidateIoLists(plan));
  for (size_t i = 0; i < plan.steps.size(); ++i) RETURN_IF_ERROR(ValidateStep(plan, i));
  RETURN_IF_ERROR(ValidateDeviceCode(plan));
  for (const TuningChoice& c : plan.tuning.choices) {
    if (c.step < 0 || c.step >= static_cast<int32_t>(plan.steps.size()) || c.batch < 1 || c.batch > plan.max_batch ||
        c.candidate < 0 || c.candidate > 1024) {
      return Invalid(absl::StrCat("tuning choice for step ", c.step, " at batch ", c.batch, " (candidate ",
                                  c.candidate, ") is outside the plan"));
    }
  }
  return absl::OkStatus();
}

namespace {

// A plan from a file's bytes (mapped, or copied into memory); errors are prefixed with `path`.
absl::StatusOr<std::shared_ptr<const Plan>> ReadPlan(const MappedFile& file, const std::string& path) {
  auto with_path = [&path](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
  };
  planfile::PlanHeader header;
  SectionView program_bytes, kernel_bytes, weights, tuning_bytes;
  if (absl::Status s = ReadContainer(file, &header, &program_bytes, &kernel_bytes, &weights, &tuning_bytes);
      !s.ok()) {
    return with_path(s);
  }
  planfile::PlanProgram program;
  if (program_bytes.size > std::numeric_limits<int32_t>::max() ||
      !program.ParseFromArray(program_bytes.data, static_cast<int>(program_bytes.size))) {
    return with_path(absl::InvalidArgumentError("invalid plan: cannot parse the program section"));
  }
  planfile::PlanKernels kernels;
  if (kernel_bytes.size > std::numeric_limits<int32_t>::max() ||
      !kernels.ParseFromArray(kernel_bytes.data, static_cast<int>(kernel_bytes.size))) {
    return with_path(absl::InvalidArgumentError("invalid plan: cannot parse the kernels section"));
  }
  auto plan = std::make_shared<Plan>();
  for (const planfile::DeviceCode& c : kernels.code()) {
    DeviceCode code{c.name(), c.arch(), c.cubin(), c.ptx(), {}};
    for (const planfile::DeviceFunction& f : c.functions()) {
      code.functions.push_back(
          {f.name(), f.registers(), f.spill_store_bytes(), f.spill_load_bytes(), f.stack_bytes()});
    }
    plan->device_code.push_back(std::move(code));
  }
  if (tuning_bytes.data) {
    planfile::PlanTuning t;
    if (tuning_bytes.size > std::numeric_limits<int32_t>::max() ||
        !t.ParseFromArray(tuning_bytes.data, static_cast<int>(tuning_bytes.size))) {
      return with_path(absl::InvalidArgumentError("invalid plan: cannot parse the tuning section"));
    }
    plan->tuning.key = t.key();
    for (const planfile::TuningChoice& c : t.choices()) {
      plan->tuning.choices.push_back({c.step(), c.batch(), c.candidate(), c.algorithm(), c.ms()});
    }
  }
  plan->format_version = header.format_version();
  plan->target = header.target();
  plan->isa = header.isa();
  plan->gcomp_version = header.gcomp_version();
  plan->library_versions = header.library_versions();
  plan->model = header.model();
  plan->precision = header.precision();
  plan->level = header.level();
  plan->max_batch = header.max_batch();
  if (absl::Status s = ProgramFromProto(program, plan.get()); !s.ok()) return with_path(s);
  plan->weights = weights.data;
  plan->weights_bytes = weights.size;
  plan->mapping = file.mapping;
  if (absl::Status s = ValidatePlan(*plan); !s.ok()) return with_path(s);
  return std::shared_ptr<const Plan>(std::move(plan));
}

}  // namespace

absl::StatusOr<std::shared_ptr<const Plan>> ReadPlanFile(const std::string& path) {
  MappedFile file;
  { ASSIGN_OR_RETURN(file, MapFile(path)); }
  return ReadPlan(file, path);
}

absl::StatusOr<std::shared_ptr<const Plan>> ReadPlanBytes(const void* data, size_t size, const std::string& label) {
  if (size > static_cast<size_t>(std::numeric_limits<int64_t>::max()) || (size > 0 && !data)) {
    return absl::InvalidArgumentError(absl::StrCat(label, ": no plan bytes"));
  }
  // A page-aligned copy, so that the sections sit as they do in a mapped file.
  MappedFile file;
  file.size = static_cast<int64_t>(size);
  if (size > 0) {
    const size_t rounded = (size + 4095) / 4096 * 4096;
    void* copy = std::aligned_alloc(4096, rounded);
    if (!copy) return absl::ResourceExhaustedError(absl::StrCat(label, ": cannot allocate ", size, " bytes"));
    std::memcpy(copy, data, size);
    file.mapping = std::shared_ptr<const void>(copy, [](const void* p) { std::free(const_cast<void*>(p)); });
    file.data = static_cast<const uint8_t*>(copy);
  }
  return ReadPlan(file, label);
}

bool LooksLikePlan(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  char buf[kMagicBytes];
  int64_t got = 0;
  while (got < kMagicBytes) {
    const ssize_t n = ::read(fd, buf + got, static_cast<size_t>(kMagicBytes - got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += n;
  }
  ::close(fd);
  return got == kMagicBytes && std::memcmp(buf, kMagic, kMagicBytes) == 0;
}

}  // namespace gcomp::plan
