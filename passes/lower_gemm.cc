// lower-gemm (O3): records how each FusedGemm's activation runs on the target, from the target
// description's GEMM epilogues. Nothing in the graph changes; the decision "epilogue" says:
//   fused epilogue               the GEMM kernel applies the activation exactly (cuBLASLt relu)
//   fused epilogue (approximate) the kernel's form differs (cuBLASLt GELU is the tanh
//                                approximation) and the node is stored in fp16/bf16, where DESIGN.md
//                                accepts it: the activation becomes that form (gelu -> gelu_tanh),
//                                so the reference interpreter computes what the kernel will
//   separate activation          no epilogue for it, or an approximate one at fp32: the activation
//                                runs as its own kernel after the GEMM, exactly
// Preconditions: runs after assign-precision (it reads Node::precision); a FusedGemm with
// activation none records nothing.
#include "absl/strings/str_cat.h"
#include "core/epilogue.h"
#include "core/status_macros.h"
#include "passes/passes.h"
#include "passes/target.h"

namespace gcomp::passes {
namespace {

bool HasEpilogueDecision(const Node* n) {
  for (const Decision& d : n->decisions) {
    if (d.kind == "epilogue") return true;
  }
  return false;
}

Decision Choose(const TargetDescription& t, const Node* n) {
  const std::string act = n->attrs.GetString(kActivationAttr, "none");
  const std::string where = absl::StrCat(t.name, " (", t.source, ")");
  const GemmEpilogue* e = t.Epilogue(act);
  if (!e) return {"epilogue", "separate activation", absl::StrCat(where, " has no ", act, " GEMM epilogue")};
  if (e->exact) return {"epilogue", "fused epilogue", absl::StrCat(where, ": the ", act, " epilogue is exact")};
  if (n->precision == DType::kF16 || n->precision == DType::kBF16) {
    return {"epilogue", "fused epilogue (approximate)",
            absl::StrCat(where, ": ", e->note, "; accepted at ", DTypeName(n->precision))};
  }
  return {"epilogue", "separate activation",
          absl::StrCat(where, ": ", e->note, "; at fp32 the exact ", act, " runs after the GEMM")};
}

}  // namespace

absl::StatusOr<bool> LowerGemm(Graph& g, const PassContext& ctx) {
  ASSIGN_OR_RETURN(const TargetDescription* target, FindTarget(ctx.options().target));
  bool changed = false;
  for (Node* n : g.nodes()) {
    if (n->op != "FusedGemm" || HasEpilogueDecision(n) || n->attrs.GetString(kActivationAttr, "none") == ActivationName(Activation::kNone)) continue;
    Decision d = Choose(*target, n);
    if (d.choice == "fused epilogue (approximate)" &&
        n->attrs.GetString(kActivationAttr, "none") == ActivationName(Activation::kGelu)) {
      n->attrs.Set(kActivationAttr, std::string(ActivationName(Activation::kGeluTanh)));  // the epilogue's math, not the model's erf
      d.reason += "; the model's erf GELU is computed as gelu_tanh (|difference| <= 5e-4 per element)";
    }
    n->decisions.push_back(std::move(d));
    changed = true;
  }
  return changed;
}

}  // namespace gcomp::passes
