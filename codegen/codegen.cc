#include "codegen/codegen.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/device_compiler.h"
#include "codegen/memory_planner.h"
#include "core/limits.h"
#include "plan/plan_file.h"
#include "core/status_macros.h"
#include "runtime/backend_kernels.h"

namespace gcomp::codegen {
namespace {

using plan::Buffer;
using plan::BufferKind;
using plan::kPlanAlignment;
using plan::LinearDim;
using plan::Plan;
using plan::Step;

constexpr char kGcompVersion[] = "0.1.0";

// Ops whose output is the input's memory under another shape.
const std::set<std::string> kViewOps = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};

int64_t AlignUp(int64_t n, int64_t alignment) { return (n + alignment - 1) / alignment * alignment; }

class Generator {
 public:
  Generator(const Graph& g, const CodegenOptions& o) : g_(g), o_(o), plan_(std::make_unique<Plan>()) {}

  absl::StatusOr<std::unique_ptr<Plan>> Run() {
    ASSIGN_OR_RETURN(backend_, runtime::BackendKernelsFor(o_.target));
    RETURN_IF_ERROR(FindBatchSymbol());
    plan_->target = backend_->name();
    const runtime::Fingerprint fp = backend_->fingerprint();
    plan_->isa = fp.isa;
    plan_->gcomp_version = kGcompVersion;
    plan_->library_versions = fp.library_versions;
    const runtime::MemorySpace activations = backend_->memory_spaces().at(0);
    plan_->memory_space = activations.name;
    plan_->arena_alignment = std::max(activations.alignment, kPlanAlignment);
    plan_->model = o_.model;
    plan_->precision = o_.precision;
    plan_->level = o_.level;
    plan_->max_batch = batch_symbol_.empty() ? 1 : (o_.max_batch > 0 ? o_.max_batch : kDefaultMaxBatch);
    for (const Value* v : g_.inputs()) {
      ASSIGN_OR_RETURN(int id, NewBuffer(v, BufferKind::kInput));
      plan_->buffers[id].io_index = static_cast<int32_t>(plan_->inputs.size());
      plan_->inputs.push_back(id);
    }
    for (const Node* n : g_.nodes()) RETURN_IF_ERROR(Emit(n));
    if (!unsupported_.empty()) {
      return Error(nullptr, absl::StrCat(unsupported_.size(), " step", unsupported_.size() == 1 ? " has" : "s have",
                                         " no kernel in the ", backend_->name(), " backend's table:\n  ",
                                         absl::StrJoin(unsupported_, "\n  ")));
    }
    RETURN_IF_ERROR(BindOutputs());
    RETURN_IF_ERROR(PlanArenas());
    RETURN_IF_ERROR(CheckArenaAtMaxBatch());
    if (!device_sources_.empty()) {
      std::vector<runtime::DeviceSource> sources;
      for (const auto& [name, source] : device_sources_) sources.push_back({name, source});
      auto code = CompileDeviceCode(sources, backend_->device_archs());
      if (!code.ok()) return Error(nullptr, std::string(code.status().message()));
      plan_->device_code = *std::move(code);
    }
    plan_->weights = plan_->owned_weights.data();
    plan_->weights_bytes = static_cast<int64_t>(plan_->owned_weights.size());
    if (absl::Status s = plan::ValidatePlan(*plan_); !s.ok()) {
      return absl::InternalError(absl::StrCat("codegen produced an invalid plan: ", s.message()));
    }
    return std::move(plan_);
  }

 private:
  absl::Status Error(const Node* n, const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(g_.source, ": ", n ? n->Describe() + ": " : "", what));
  }

  // The one symbol shapes may use (the batch); dims must be linear in it.
  absl::Status FindBatchSymbol() {
    std::set<std::string> symbols;
    auto collect = [&](const Value* v) {
      for (const Dim& d : v->shape) {
        for (const std::string& s : d.Symbols()) symbols.insert(s);
      }
    };
    for (const Value* v : g_.inputs()) collect(v);
    for (const Node* n : g_.nodes()) {
      for (const Value* v : n->outputs) {
        if (v) collect(v);
      }
    }
    if (symbols.size() > 1) {
      return Error(nullptr, absl::StrCat("shapes use the symbols ", absl::StrJoin(symbols, ", "),
                                         "; a plan supports one symbolic dim (the batch)"));
    }
    if (!symbols.empty()) batch_symbol_ = *symbols.begin();
    if (!batch_symbol_.empty() && batch_symbol_[0] == '?') {
      return Error(nullptr, absl::StrCat("shapes depend on data ('", batch_symbol_,
                                         "'); a plan needs shapes known from the batch size"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<LinearDim> Linear(const Value* v, const Dim& d) const {
    if (auto c = d.ConstValue()) return LinearDim{0, *c};
    std::vector<int64_t> at;
    for (int64_t b : {0, 1, 2}) {
      auto x = d.Evaluate({{batch_symbol_, b}});
      if (!x.ok()) return x.status();
      at.push_back(*x);
    }
    LinearDim l{0, at[0]};
    int64_t at_two = 0;
    const bool overflow = __builtin_sub_overflow(at[1], at[0], &l.per_batch) ||
                          __builtin_mul_overflow(l.per_batch, 2, &at_two) ||
                          __builtin_add_overflow(at_two, l.fixed, &at_two);
    if (overflow || at_two != at[2] || l.per_batch < 0 || l.fixed < 0) {
      return absl::InvalidArgumentError(absl::StrCat(g_.source, ": value '", v->name, "' has dim ", d.ToString(),
                                                     ", expected a dim linear in '", batch_symbol_, "'"));
    }
    return l;
  }

  std::vector<int64_t> DimsAt(const Buffer& b, int64_t batch) const {
    std::vector<int64_t> dims;
    for (const LinearDim& d : b.dims) dims.push_back(d.At(batch));
    return dims;
  }

  static std::vector<int64_t> PerBatch(const Buffer& b) {
    std::vector<int64_t> per_batch;
    for (const LinearDim& d : b.dims) per_batch.push_back(d.per_batch);
    return per_batch;
  }

  // The step's generated device functions (compiled once per plan after the last step) and its
  // workspace bound.
  absl::Status AddDeviceCode(const runtime::KernelEntry& entry, const runtime::KernelSpec& spec, Step& step) {
    if (entry.workspace_bound) plan_->workspace_bound = std::max(plan_->workspace_bound, entry.workspace_bound(spec));
    if (!entry.device_sources) return absl::OkStatus();
    ASSIGN_OR_RETURN(std::vector<runtime::DeviceSource> sources, entry.device_sources(spec));
    for (runtime::DeviceSource& src : sources) {
      auto [it, inserted] = device_sources_.emplace(src.name, src.source);
      if (!inserted && it->second != src.source) {
        return absl::InternalError(absl::StrCat("kernel '", entry.id, "' generated two different device functions named '",
                                                src.name, "'"));
      }
      step.device_functions.push_back(std::move(src.name));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<int> NewBuffer(const Value* v, BufferKind kind) {
    Buffer b;
    b.name = v->name;
    b.dtype = v->dtype;
    b.kind = kind;
    for (const Dim& d : v->shape) {
      ASSIGN_OR_RETURN(LinearDim l, Linear(v, d));
      // Dims grow with the batch (Linear refuses a negative per_batch): at the max batch every dim
      // stays within kMaxDim and the value within kMaxTensorBytes, so that no later arithmetic on
      // dims or sizes (kernel checks, memory planning) can overflow.
      auto dim_fits = [&](int64_t batch) {
        int64_t at = 0;
        return !__builtin_mul_overflow(l.per_batch, batch, &at) && !__builtin_add_overflow(at, l.fixed, &at) &&
               at <= kMaxDim;
      };
      if (!dim_fits(plan_->max_batch)) {
        return OverLimit(absl::StrCat("value '", v->name, "' dim ", b.dims.size(), " (", d.ToString(), ")"), kMaxDim,
                         dim_fits);
      }
      b.dims.push_back(l);
    }
    auto bytes_fit = [&](int64_t batch) {
      int64_t n = static_cast<int64_t>(DTypeSize(b.dtype));
      for (const LinearDim& d : b.dims) {
        if (__builtin_mul_overflow(n, d.At(batch), &n)) return false;
      }
      return n <= kMaxTensorBytes;
    };
    if (!bytes_fit(plan_->max_batch)) {
      int64_t at_max = static_cast<int64_t>(DTypeSize(b.dtype));
      for (const LinearDim& d : b.dims) {
        if (__builtin_mul_overflow(at_max, d.At(plan_->max_batch), &at_max)) at_max = -1;
        if (at_max < 0) break;
      }
      return OverLimit(absl::StrCat("value '", v->name, "' has ",
                                    at_max < 0 ? std::string("more than 2^63") : absl::StrCat(at_max), " bytes"),
                       kMaxTensorBytes, bytes_fit);
    }
    int id = static_cast<int>(plan_->buffers.size());
    plan_->buffers.push_back(std::move(b));
    ids_[v] = id;
    return id;
  }

  int Root(int id) const {
    while (plan_->buffers[id].kind == BufferKind::kAlias) id = plan_->buffers[id].alias_of;
    return id;
  }

  // Buffer of a constant value packed by `entry` for step `spec` input `index` (shared between
  // steps that pack it the same way).
  absl::StatusOr<int> ConstantBuffer(const Value* v, const runtime::KernelEntry* entry,
                                     const runtime::KernelSpec& spec, size_t index) {
    runtime::Packed packed;
    if (entry && entry->pack) {
      ASSIGN_OR_RETURN(packed, entry->pack(spec, index));
    } else {
      packed.bytes.assign(v->constant->data(), v->constant->data() + v->constant->nbytes());
    }
    auto key = std::make_pair(v, packed.format);
    if (auto it = constants_.find(key); it != constants_.end()) {
      const Buffer& b = plan_->buffers[it->second];
      if (b.bytes == static_cast<int64_t>(packed.bytes.size()) &&
          std::memcmp(plan_->owned_weights.data() + b.offset, packed.bytes.data(), packed.bytes.size()) == 0) {
        return it->second;
      }
    }
    Buffer b;
    b.name = v->name;
    b.dtype = v->dtype;
    b.kind = BufferKind::kConstant;
    for (int64_t d : v->constant->dims()) b.dims.push_back(LinearDim{0, d});
    b.format = packed.format;
    b.offset = static_cast<int64_t>(plan_->owned_weights.size());
    b.bytes = static_cast<int64_t>(packed.bytes.size());
    plan_->owned_weights.insert(plan_->owned_weights.end(), packed.bytes.begin(), packed.bytes.end());
    plan_->owned_weights.resize(
        static_cast<size_t>(AlignUp(static_cast<int64_t>(plan_->owned_weights.size()), kPlanAlignment)), 0);
    int id = static_cast<int>(plan_->buffers.size());
    plan_->buffers.push_back(std::move(b));
    constants_[key] = id;
    return id;
  }

  absl::StatusOr<std::vector<LinearDim>> LinearDims(const Value* v) const {
    std::vector<LinearDim> dims;
    for (const Dim& d : v->shape) {
      ASSIGN_OR_RETURN(LinearDim l, Linear(v, d));
      dims.push_back(l);
    }
    return dims;
  }

  // Element count of `dims` at `batch`; nullopt on overflow.
  static std::optional<int64_t> ElementsAt(const std::vector<LinearDim>& dims, int64_t batch) {
    int64_t n = 1;
    for (const LinearDim& l : dims) {
      int64_t at = 0;
      if (__builtin_mul_overflow(l.per_batch, batch, &at) || __builtin_add_overflow(at, l.fixed, &at) ||
          __builtin_mul_overflow(n, at, &n)) {
        return std::nullopt;
      }
    }
    return n;
  }

  // Reshape and its kin keep the element count. Shape inference takes a symbolic count on trust
  // (an export may bake one batch size into a target shape: [N,2048] -> [1,2048]); a plan must
  // hold it at every batch it accepts, or the output would be read or written past its memory.
  absl::Status CheckElementsKept(const Node* n) const {
    const Value* in = n->input(0);
    const Value* out = n->output(0);
    ASSIGN_OR_RETURN(std::vector<LinearDim> din, LinearDims(in));
    ASSIGN_OR_RETURN(std::vector<LinearDim> dout, LinearDims(out));
    auto agree_at = [&](int64_t b) {
      const std::optional<int64_t> ni = ElementsAt(din, b);
      return ni && ni == ElementsAt(dout, b);
    };
    // Both counts are polynomials in the batch of degree at most the rank: equal at more points
    // than that, they are equal at every batch.
    const int64_t enough = static_cast<int64_t>(std::max(din.size(), dout.size())) + 1;
    for (int64_t b = 1; b <= std::min(plan_->max_batch, enough); ++b) {
      if (agree_at(b)) continue;
      std::string agree;
      for (int64_t k = 1; k <= kMaxPlanBatch && agree.empty(); ++k) {
        if (agree_at(k)) agree = absl::StrCat("; they agree at batch ", k, k == 1 ? " (compile with --batch 1)" : "");
      }
      auto count = [](std::optional<int64_t> c) { return c ? absl::StrCat(*c) : std::string("more than 2^63"); };
      return Error(n, absl::StrCat("output '", out->name, "' ", ShapeToString(out->shape), " has ",
                                   count(ElementsAt(dout, b)), " elements at batch ", b, ", its input '", in->name,
                                   "' ", ShapeToString(in->shape), " has ", count(ElementsAt(din, b)), agree,
                                   "; a plan for batch 1..", plan_->max_batch, " needs them equal at every batch"));
    }
    return absl::OkStatus();
  }

  absl::Status Emit(const Node* n) {
    if (kViewOps.count(n->op) && n->input(0) && n->output(0)) RETURN_IF_ERROR(CheckElementsKept(n));
    // Views: the output is the input's memory (not for graph outputs, which the caller owns).
    if (kViewOps.count(n->op) && n->input(0) && n->output(0) && !n->input(0)->is_constant() &&
        !g_.IsGraphOutput(n->output(0)) && n->input(0)->dtype == n->output(0)->dtype) {
      auto it = ids_.find(n->input(0));
      if (it == ids_.end()) return Error(n, absl::StrCat("input '", n->input(0)->name, "' has no buffer"));
      ASSIGN_OR_RETURN(int id, NewBuffer(n->output(0), BufferKind::kAlias));
      plan_->buffers[id].alias_of = it->second;
      return absl::OkStatus();
    }
    runtime::KernelSpec spec;
    spec.name = n->name;
    spec.op = n->op;
    spec.params = &n->attrs;
    spec.threads = 1;
    spec.precision = o_.precision;
    spec.batch = plan_->max_batch;
    Step step;
    step.name = n->name;
    step.op = n->op;
    step.origin = n->origin;
    for (const Decision& d : n->decisions) step.decisions.push_back(absl::StrCat(d.kind, " = ", d.choice, ": ", d.reason));
    for (const Value* in : n->inputs) {
      runtime::Operand op;
      if (!in) {
        op.present = false;
      } else {
        op.dtype = in->dtype;
        if (in->is_constant()) {
          op.dims = in->constant->dims();
          op.per_batch.assign(op.dims.size(), 0);
          op.constant = in->constant->data();
          op.constant_bytes = in->constant->nbytes();
        } else {
          auto it = ids_.find(in);
          if (it == ids_.end()) return Error(n, absl::StrCat("input '", in->name, "' has no buffer"));
          op.dims = DimsAt(plan_->buffers[it->second], plan_->max_batch);
          op.per_batch = PerBatch(plan_->buffers[it->second]);
        }
      }
      spec.inputs.push_back(std::move(op));
    }
    std::vector<int> outs;
    for (const Value* out : n->outputs) {
      if (!out) return Error(n, "omitted outputs are not supported in plans");
      ASSIGN_OR_RETURN(int id, NewBuffer(out, g_.IsGraphOutput(out) ? BufferKind::kOutput : BufferKind::kBatchArena));
      outs.push_back(id);
      runtime::Operand op;
      op.dtype = out->dtype;
      op.dims = DimsAt(plan_->buffers[id], plan_->max_batch);
      op.per_batch = PerBatch(plan_->buffers[id]);
      spec.outputs.push_back(std::move(op));
    }
    auto sel = runtime::SelectKernel(backend_->kernels(), spec, o_.exclude_kernels);
    if (!sel.ok()) {
      if (sel.status().code() != absl::StatusCode::kNotFound) return sel.status();
      unsupported_.push_back(std::string(sel.status().message()));
      return absl::OkStatus();
    }
    step.kernel = sel->entry->id;
    step.reason = sel->reason;
    step.params = sel->params;
    step.params_version = sel->params_version;
    // Constants are packed for a spec holding the blob, as the session's kernels will see it.
    spec.params = &step.params;
    RETURN_IF_ERROR(CheckRunsAtBatchOne(n, *sel->entry, spec));
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      const Value* in = n->inputs[i];
      if (!in) {
        step.inputs.push_back(-1);
      } else if (in->is_constant()) {
        auto id = ConstantBuffer(in, sel->entry, spec, i);
        if (!id.ok()) return Error(n, absl::StrCat("packing '", in->name, "': ", id.status().message()));
        step.inputs.push_back(*id);
      } else {
        step.inputs.push_back(ids_.at(in));
      }
    }
    step.outputs.assign(outs.begin(), outs.end());
    if (absl::Status s = AddDeviceCode(*sel->entry, spec, step); !s.ok()) return Error(n, std::string(s.message()));
    plan_->steps.push_back(std::move(step));
    entries_.push_back(sel->entry);
    return absl::OkStatus();
  }

  // The kernel was chosen at the maximum batch; a plan runs every batch from 1, so the kernel must
  // take the step at batch 1 too. It does not when the "batch" symbol is constrained by the graph
  // (a MatMul of [2, 64] x [j, 3] runs only at j = 64): such a model is refused here rather than
  // giving a plan that the runtime would call invalid.
  absl::Status CheckRunsAtBatchOne(const Node* n, const runtime::KernelEntry& entry,
                                   const runtime::KernelSpec& at_max) const {
    const int64_t grow = plan_->max_batch - 1;
    if (grow == 0 || !entry.accepts) return absl::OkStatus();
    runtime::KernelSpec one = at_max;
    one.batch = 1;
    std::vector<std::string> dims;
    for (std::vector<runtime::Operand>* ops : {&one.inputs, &one.outputs}) {
      for (runtime::Operand& op : *ops) {
        for (size_t k = 0; k < op.per_batch.size() && k < op.dims.size(); ++k) op.dims[k] -= op.per_batch[k] * grow;
        if (op.present) dims.push_back(absl::StrCat("[", absl::StrJoin(op.dims, ","), "]"));
      }
    }
    if (entry.accepts(one)) return absl::OkStatus();
    return Error(n, absl::StrCat("kernel '", entry.id, "' runs it at batch ", plan_->max_batch, " but not at batch 1 ",
                                 "(operands ", absl::StrJoin(dims, " "), "): its symbolic dim '", batch_symbol_,
                                 "' is not a free batch size"));
  }

  // Graph outputs that no step writes (a graph input, a constant or a view) get a copy step.
  absl::Status BindOutputs() {
    for (const Value* v : g_.outputs()) {
      auto it = ids_.find(v);
      int id = -1;
      if (it != ids_.end() && plan_->buffers[it->second].kind == BufferKind::kOutput) {
        id = it->second;
      } else {
        int src = -1;
        if (it != ids_.end()) {
          src = it->second;
        } else if (v->is_constant()) {
          ASSIGN_OR_RETURN(src, ConstantBuffer(v, nullptr, runtime::KernelSpec{}, 0));
        } else {
          return Error(nullptr, absl::StrCat("graph output '", v->name, "' is not computed"));
        }
        Buffer out = plan_->buffers[src];
        out.kind = BufferKind::kOutput;
        out.alias_of = -1;
        out.offset = out.bytes = 0;
        out.format.clear();
        id = static_cast<int>(plan_->buffers.size());
        plan_->buffers.push_back(out);
        Step copy;
        copy.name = absl::StrCat(v->name, "/output_copy");
        copy.op = "Identity";
        runtime::KernelSpec spec;
        spec.name = copy.name;
        spec.op = copy.op;
        spec.precision = o_.precision;
        spec.batch = plan_->max_batch;
        const Buffer& sb = plan_->buffers[src];
        for (const Buffer* b : std::vector<const Buffer*>{&sb, &out}) {
          runtime::Operand o;
          o.dtype = b->dtype;
          o.dims = DimsAt(*b, plan_->max_batch);
          o.per_batch = PerBatch(*b);
          if (b->kind == BufferKind::kConstant) {
            o.constant = plan_->owned_weights.data() + b->offset;
            o.constant_bytes = static_cast<size_t>(b->bytes);
          }
          (b == &sb ? spec.inputs : spec.outputs).push_back(std::move(o));
        }
        auto sel = runtime::SelectKernel(backend_->kernels(), spec, o_.exclude_kernels);
        if (!sel.ok()) return Error(nullptr, absl::StrCat("graph output '", v->name, "': ", sel.status().message()));
        copy.kernel = sel->entry->id;
        copy.reason = absl::StrCat("graph output that no step writes (an input, a constant or a view), copied: ",
                                   sel->reason);
        copy.params = sel->params;
        copy.params_version = sel->params_version;
        copy.inputs = {src};
        copy.outputs = {id};
        RETURN_IF_ERROR(AddDeviceCode(*sel->entry, spec, copy));
        plan_->steps.push_back(std::move(copy));
        entries_.push_back(sel->entry);
      }
      plan_->buffers[id].io_index = static_cast<int32_t>(plan_->outputs.size());
      plan_->outputs.push_back(id);
    }
    return absl::OkStatus();
  }

  // The inputs output 0 of step `s` may overwrite: what its kernel declares.
  std::vector<size_t> InPlaceCandidates(int s) const {
    std::vector<size_t> inputs;
    for (const runtime::InPlace& p : entries_[s]->in_place) {
      if (p.output == 0) inputs.push_back(static_cast<size_t>(p.input));
    }
    return inputs;
  }

  // A limit (core/limits.h) exceeded at the plan's max batch, with the largest --batch at which
  // `fits` (true up to some batch, false after) holds, when there is one.
  absl::Status OverLimit(const std::string& what, int64_t limit, const std::function<bool(int64_t)>& fits) const {
    int64_t lo = 0, hi = plan_->max_batch;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (fits(mid)) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    const std::string fix = lo >= 1 ? absl::StrCat(": compile with --batch ", lo, " or less") : "";
    return Error(nullptr, absl::StrCat(what, " at batch ", plan_->max_batch, " (the plan's maximum), over the limit of ",
                                       limit, fix));
  }

  // Dims and tensor bytes are checked when each buffer is made (NewBuffer); the arenas here, once
  // planned, at the plan's max batch.
  absl::Status CheckArenaAtMaxBatch() const {
    auto fits = [&](int64_t batch) {
      int64_t arena = 0;
      return !__builtin_mul_overflow(plan_->batch_arena_bytes, batch, &arena) &&
             !__builtin_add_overflow(arena, plan_->fixed_arena_bytes, &arena) && arena <= kMaxArenaBytes;
    };
    if (fits(plan_->max_batch)) return absl::OkStatus();
    return OverLimit(absl::StrCat("activation memory (", plan_->batch_arena_bytes, " bytes per batch + ",
                                  plan_->fixed_arena_bytes, " fixed)"),
                     kMaxArenaBytes, fits);
  }

  absl::Status PlanArenas() {
    const int num_steps = static_cast<int>(plan_->steps.size());
    const size_t nb = plan_->buffers.size();
    std::vector<int> first(nb, -1), last(nb, -1);
    auto touch = [&](int id, int step) {
      int r = Root(id);
      if (first[r] < 0) first[r] = step;
      last[r] = std::max(last[r], step);
    };
    // Lifetimes of the root buffers: from the step that writes them to the last step that reads them.
    auto lifetimes = [&]() {
      std::fill(first.begin(), first.end(), -1);
      std::fill(last.begin(), last.end(), -1);
      for (int s = 0; s < num_steps; ++s) {
        for (int id : plan_->steps[s].outputs) touch(id, s);
        for (int id : plan_->steps[s].inputs) {
          if (id >= 0) touch(id, s);
        }
      }
    };
    lifetimes();
    // In-place reuse: an arena input whose last use is this step, same dims and dtype as the
    // output, becomes the output's memory.
    for (int s = 0; s < num_steps; ++s) {
      Step& step = plan_->steps[s];
      if (step.outputs.size() != 1) continue;
      Buffer& out = plan_->buffers[step.outputs[0]];
      if (out.kind != BufferKind::kBatchArena) continue;
      for (size_t i : InPlaceCandidates(s)) {
        if (i >= step.inputs.size() || step.inputs[i] < 0) continue;
        const int in = step.inputs[i];
        const int root = Root(in);
        const Buffer& rb = plan_->buffers[root];
        if (rb.kind != BufferKind::kBatchArena || last[root] != s) continue;
        const Buffer& ib = plan_->buffers[in];
        if (ib.dims != out.dims || ib.dtype != out.dtype) continue;
        // The input must not also be read through another operand of this step.
        bool shared = false;
        for (size_t j = 0; j < step.inputs.size(); ++j) {
          if (j != i && step.inputs[j] >= 0 && Root(step.inputs[j]) == root) shared = true;
        }
        if (shared) continue;
        const int out_id = step.outputs[0];
        out.kind = BufferKind::kAlias;
        out.alias_of = in;
        step.in_place.assign(1, static_cast<int32_t>(i));
        // The output's own lifetime now extends the root's.
        last[root] = std::max(last[root], last[out_id]);
        first[out_id] = last[out_id] = -1;
        break;
      }
    }
    lifetimes();  // again, with the in-place outputs resolved to their roots
    for (int kind : {0, 1}) {
      std::vector<LiveRange> ranges;
      std::vector<int> which;
      for (size_t id = 0; id < nb; ++id) {
        Buffer& b = plan_->buffers[id];
        if (b.kind != BufferKind::kBatchArena || first[id] < 0) continue;
        // Batch-arena values have a size proportional to the batch: the element count at batch 2
        // is twice that at batch 1, and no dim mixes a batch term with a constant.
        bool proportional = !batch_symbol_.empty();
        for (const LinearDim& d : b.dims) proportional &= d.per_batch == 0 || d.fixed == 0;
        int64_t n1 = DTypeSize(b.dtype), n2 = DTypeSize(b.dtype);
        for (const LinearDim& d : b.dims) {
          n1 *= d.At(1);
          n2 *= d.At(2);
        }
        const bool batch_scaled = proportional && n2 == 2 * n1 && n1 > 0;
        if ((kind == 0) != batch_scaled) continue;
        if (kind == 0) {
          b.bytes = AlignUp(n1, plan_->arena_alignment);
        } else {
          int64_t n = DTypeSize(b.dtype);
          for (const LinearDim& d : b.dims) n *= d.At(plan_->max_batch);
          b.bytes = AlignUp(std::max<int64_t>(n, 1), plan_->arena_alignment);
          b.kind = BufferKind::kFixedArena;
        }
        ranges.push_back({b.bytes, first[id], last[id]});
        which.push_back(static_cast<int>(id));
      }
      MemoryPlan mp = PlanMemory(ranges, plan_->arena_alignment);
      for (size_t k = 0; k < which.size(); ++k) plan_->buffers[which[k]].offset = mp.offsets[k];
      if (kind == 0) {
        plan_->batch_arena_bytes = mp.arena_bytes;
        plan_->batch_peak_live_bytes = mp.peak_live_bytes;
      } else {
        plan_->fixed_arena_bytes = mp.arena_bytes;
        plan_->fixed_peak_live_bytes = mp.peak_live_bytes;
      }
    }
    // Buffers never used by a step (dead values) take no memory.
    for (size_t id = 0; id < nb; ++id) {
      Buffer& b = plan_->buffers[id];
      if (b.kind == BufferKind::kBatchArena && first[id] < 0) {
        b.kind = BufferKind::kFixedArena;
        b.offset = b.bytes = 0;
      }
    }
    return absl::OkStatus();
  }

  const Graph& g_;
  CodegenOptions o_;
  std::unique_ptr<Plan> plan_;
  std::string batch_symbol_;
  std::map<const Value*, int> ids_;
  std::map<std::pair<const Value*, std::string>, int> constants_;
  const runtime::BackendKernels* backend_ = nullptr;
  std::vector<const runtime::KernelEntry*> entries_;  // per step
  std::vector<std::string> unsupported_;              // steps no kernel runs
  std::map<std::string, std::string> device_sources_;  // generated device functions by name
};

}  // namespace

absl::StatusOr<std::unique_ptr<plan::Plan>> GeneratePlan(const Graph& graph, const CodegenOptions& options) {
  return Generator(graph, options).Run();
}

}  // namespace gcomp::codegen
