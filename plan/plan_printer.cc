#include "plan/plan_printer.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace gcomp::plan {
namespace {

std::string DimText(const LinearDim& d) {
  if (d.per_batch == 0) return absl::StrCat(d.fixed);
  std::string s = d.per_batch == 1 ? "batch" : absl::StrCat("batch*", d.per_batch);
  if (d.fixed) absl::StrAppend(&s, "+", d.fixed);
  return s;
}

std::string TypeText(const Buffer& b) {
  std::vector<std::string> dims;
  for (const LinearDim& d : b.dims) dims.push_back(DimText(d));
  return absl::StrCat(DTypeName(b.dtype), "[", absl::StrJoin(dims, ","), "]");
}

const char* KindName(BufferKind k) {
  switch (k) {
    case BufferKind::kBatchArena:
      return "batch_arena";
    case BufferKind::kFixedArena:
      return "fixed_arena";
    case BufferKind::kConstant:
      return "weights";
    case BufferKind::kInput:
      return "input";
    case BufferKind::kOutput:
      return "output";
    case BufferKind::kAlias:
      return "alias";
  }
  return "?";
}

std::string Where(const Plan& p, int id) {
  const Buffer& b = p.buffers[id];
  switch (b.kind) {
    case BufferKind::kBatchArena:
      return absl::StrFormat("batch arena +%d*batch (%d*batch bytes)", b.offset, b.bytes);
    case BufferKind::kFixedArena:
      return absl::StrFormat("fixed arena +%d (%d bytes)", b.offset, b.bytes);
    case BufferKind::kConstant:
      return absl::StrFormat("weights +%d (%d bytes%s)", b.offset, b.bytes,
                             b.format.empty() ? ", plain" : absl::StrCat(", packed ", b.format.substr(0, 24)));
    case BufferKind::kInput:
      return absl::StrCat("caller input ", b.io_index);
    case BufferKind::kOutput:
      return absl::StrCat("caller output ", b.io_index);
    case BufferKind::kAlias:
      return absl::StrCat("alias of '", p.buffers[b.alias_of].name, "'");
  }
  return "?";
}

double Ratio(int64_t a, int64_t b) { return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 1.0; }

std::string Json(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += absl::StrFormat("\\u%04x", c);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string PlanToText(const Plan& p) {
  std::string out;
  absl::StrAppend(&out, "plan of ", p.model, ": target ", p.target, " (ISA ", p.isa, "), precision ", p.precision,
                  ", level ", p.level, ", batch 1..", p.max_batch, ", format ", p.format_version, ", gcomp ",
                  p.gcomp_version, "\n  libraries: ", p.library_versions, "\n");
  int constants = 0;
  for (const Buffer& b : p.buffers) constants += b.kind == BufferKind::kConstant;
  absl::StrAppend(&out, absl::StrFormat("memory:\n  batch arena %d bytes per batch item; peak-live lower bound %d; "
                                        "ratio %.3f\n  fixed arena %d bytes; peak-live lower bound %d; ratio %.3f\n"
                                        "  weights %d bytes in %d constants\n",
                                        p.batch_arena_bytes, p.batch_peak_live_bytes,
                                        Ratio(p.batch_arena_bytes, p.batch_peak_live_bytes), p.fixed_arena_bytes,
                                        p.fixed_peak_live_bytes, Ratio(p.fixed_arena_bytes, p.fixed_peak_live_bytes),
                                        p.weights_bytes, constants));
  if (p.memory_space != "host") {
    // Device plans: what a session holds on the device at the maximum batch.
    const int64_t arenas = p.batch_arena_bytes * p.max_batch + p.fixed_arena_bytes;
    absl::StrAppend(&out, absl::StrFormat("  device (%s, %d-byte aligned): weights %d bytes (once per device), "
                                          "arenas %d bytes at batch %d, workspace bound %d bytes; %d bytes per "
                                          "session at most\n",
                                          p.memory_space, p.arena_alignment, p.weights_bytes, arenas, p.max_batch,
                                          p.workspace_bound, arenas + p.workspace_bound));
  }
  for (const DeviceCode& c : p.device_code) {
    absl::StrAppend(&out, absl::StrFormat("device code %s for %s: %d bytes cubin, %d bytes PTX, %d functions\n", c.name,
                                          c.arch, c.cubin.size(), c.ptx.size(), c.functions.size()));
  }
  if (!p.tuning.empty()) {
    absl::StrAppend(&out, "tuning for [", p.tuning.key, "]: ", p.tuning.choices.size(),
                    " choices (used on that device and those library versions only)\n");
  }
  for (int32_t id : p.inputs)
    absl::StrAppend(&out, "input  %", p.buffers[id].name, ": ", TypeText(p.buffers[id]), "\n");
  for (int32_t id : p.outputs)
    absl::StrAppend(&out, "output %", p.buffers[id].name, ": ", TypeText(p.buffers[id]), "\n");
  std::map<std::string, int> kernels;
  absl::StrAppend(&out, "steps (", p.steps.size(), "):\n");
  for (size_t s = 0; s < p.steps.size(); ++s) {
    const Step& st = p.steps[s];
    ++kernels[st.kernel];
    absl::StrAppend(&out, "  #", s, " ", st.name, " (", st.op, ") -> kernel ", st.kernel, ": ", st.reason, "\n");
    if (!st.params.all().empty()) {
      std::vector<std::string> params;
      for (const auto& [name, value] : st.params.all())
        params.push_back(absl::StrCat(name, "=", AttrValueToString(value)));
      absl::StrAppend(&out, "      params v", st.params_version, ": ", absl::StrJoin(params, " "), "\n");
    }
    for (const TuningChoice& c : p.tuning.choices) {
      if (c.step != static_cast<int32_t>(s)) continue;
      absl::StrAppend(&out, absl::StrFormat("      tuned at batch %d: candidate %d, %s, %.4f ms\n", c.batch, c.candidate,
                                            c.algorithm, c.ms));
    }
    for (const std::string& f : st.device_functions) {
      std::vector<std::string> per_arch;
      for (const DeviceCode& c : p.device_code) {
        for (const DeviceFunction& d : c.functions) {
          if (d.name != f) continue;
          per_arch.push_back(absl::StrFormat("%s %d registers, %d spill bytes, %d stack bytes", c.arch, d.registers,
                                             d.spill_store_bytes + d.spill_load_bytes, d.stack_bytes));
        }
      }
      absl::StrAppend(&out, "      device function ", f, ": ", absl::StrJoin(per_arch, "; "), "\n");
    }
    for (size_t i = 0; i < st.inputs.size(); ++i) {
      if (st.inputs[i] < 0) continue;
      const Buffer& b = p.buffers[st.inputs[i]];
      absl::StrAppend(&out, "      in  %", b.name, ": ", TypeText(b), " @ ", Where(p, st.inputs[i]), "\n");
    }
    for (size_t k = 0; k < st.outputs.size(); ++k) {
      const Buffer& b = p.buffers[st.outputs[k]];
      absl::StrAppend(&out, "      out %", b.name, ": ", TypeText(b), " @ ", Where(p, st.outputs[k]),
                      k < st.in_place.size() && st.in_place[k] >= 0
                          ? absl::StrCat(" (in place over input ", st.in_place[k], ")")
                          : "",
                      "\n");
    }
  }
  absl::StrAppend(&out, "kernels:\n");
  for (const auto& [k, n] : kernels) absl::StrAppend(&out, absl::StrFormat("  %-28s %d steps\n", k, n));
  return out;
}

namespace {

// The parameter blob as JSON members; values as the IR printer spells them.
std::string ParamsJson(const Attributes& params) {
  std::vector<std::string> members;
  for (const auto& [name, value] : params.all())
    members.push_back(absl::StrCat(Json(name), ": ", Json(AttrValueToString(value))));
  return absl::StrJoin(members, ", ");
}

}  // namespace

std::string PlanToJson(const Plan& p) {
  std::string out = "{\n  \"schema_version\": 1,\n";
  absl::StrAppend(&out, "  \"kind\": \"plan\",\n  \"model\": ", Json(p.model), ",\n  \"target\": ", Json(p.target),
                  ",\n  \"isa\": ", Json(p.isa), ",\n  \"precision\": ", Json(p.precision),
                  ",\n  \"level\": ", Json(p.level), ",\n  \"max_batch\": ", p.max_batch,
                  ",\n  \"format_version\": ", p.format_version, ",\n");
  absl::StrAppend(
      &out,
      absl::StrFormat("  \"memory\": {\"batch_arena_bytes\": %d, \"batch_peak_live_bytes\": %d, "
                      "\"batch_ratio\": %.4f, \"fixed_arena_bytes\": %d, \"fixed_peak_live_bytes\": %d, "
                      "\"weights_bytes\": %d, \"memory_space\": %s, \"workspace_bound\": %d},\n",
                      p.batch_arena_bytes, p.batch_peak_live_bytes, Ratio(p.batch_arena_bytes, p.batch_peak_live_bytes),
                      p.fixed_arena_bytes, p.fixed_peak_live_bytes, p.weights_bytes, Json(p.memory_space),
                      p.workspace_bound));
  std::vector<std::string> bufs;
  for (size_t id = 0; id < p.buffers.size(); ++id) {
    const Buffer& b = p.buffers[id];
    bufs.push_back(absl::StrCat("    {\"id\": ", id, ", \"name\": ", Json(b.name), ", \"type\": ", Json(TypeText(b)),
                                ", \"kind\": \"", KindName(b.kind), "\", \"offset\": ", b.offset,
                                ", \"bytes\": ", b.bytes, ", \"alias_of\": ", b.alias_of, "}"));
  }
  absl::StrAppend(&out, "  \"buffers\": [\n", absl::StrJoin(bufs, ",\n"), "\n  ],\n");
  absl::StrAppend(&out, "  \"inputs\": [", absl::StrJoin(p.inputs, ", "), "],\n  \"outputs\": [",
                  absl::StrJoin(p.outputs, ", "), "],\n");
  std::vector<std::string> steps;
  for (const Step& st : p.steps) {
    steps.push_back(absl::StrCat("    {\"name\": ", Json(st.name), ", \"op\": ", Json(st.op), ", \"kernel\": ",
                                 Json(st.kernel), ", \"reason\": ", Json(st.reason), ", \"params\": {",
                                 ParamsJson(st.params), "}, \"params_version\": ", st.params_version, ", \"inputs\": [",
                                 absl::StrJoin(st.inputs, ", "), "], \"outputs\": [", absl::StrJoin(st.outputs, ", "),
                                 "], \"in_place\": [", absl::StrJoin(st.in_place, ", "), "], \"device_functions\": [",
                                 absl::StrJoin(st.device_functions, ", ",
                                               [](std::string* o, const std::string& f) { o->append(Json(f)); }),
                                 "]}"));
  }
  absl::StrAppend(&out, "  \"steps\": [\n", absl::StrJoin(steps, ",\n"), "\n  ]\n}\n");
  return out;
}

}  // namespace gcomp::plan
