// The epilogue of a fused GEMM or convolution, matched once for fuse-conv and fuse-gemm. From the
// output of a root (Conv, MatMul, Gemm, or a FusedConv / FusedGemm being extended) the walk takes
//
//   %b = Add(%out, %c)             bias: a constant that broadcasts as the pass's bias does, either
//                                  operand order; folded (summed with a bias already there)
//   %r = Add(%b, %Z)               residual: non-constant Z with exactly %b's shape and dtype
//   %y = Relu | Clip | Gelu(%r)    activation: one the fused op runs; Clip bounds constant scalars
//
// one step at a time in dataflow order while the fusion stays exact: the next op is the only
// user of the previous output, which is not a graph output; the dtype stays; at most one residual
// and one activation, nothing after the activation. A pass adds steps of its own (fuse-gemm: the
// layout ops before a residual). Rejected candidates are explained under the rule's name with
// Epilogue, Bias, Residual or Activation appended ("FuseConvBias at ...").
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/epilogue.h"
#include "passes/rewriter.h"

namespace gcomp::passes {

// A fusion being assembled: the root, the epilogue matched so far, and why.
struct EpilogueMatch {
  Node* root = nullptr;
  std::string fused_op;                           // "FusedConv" | "FusedGemm"
  Value* bias = nullptr;                          // a bias used as it is
  std::optional<std::vector<float>> bias_values;  // a new bias constant (bias Adds folded in)
  Value* z = nullptr;                             // the residual
  Activation act = Activation::kNone;
  std::optional<float> clip_min, clip_max;  // the Clip's bounds; an absent one is unbounded
  std::vector<Node*> nodes;                 // every node replaced, in dataflow order
  Value* out = nullptr;                     // the value the fused node replaces
  std::string choice;                       // the fusion decision's choice, before the steps
  std::vector<std::string> steps;           // "bias", "residual", "relu", ...: appended to choice
  std::vector<std::string> reasons;
  std::vector<Decision> old_decisions;  // of the fused op being extended

  bool has_bias() const { return bias || bias_values; }
  // The bias as values (empty without one); nullopt when it is not constant.
  std::optional<std::vector<float>> BiasValues() const;
};

// What the fused op's pass decides about its epilogue; the walk asks it at each step. A hook left
// empty allows nothing more (no condition on the residual, no steps of the pass's own).
struct EpilogueSpec {
  // Words of the explanations: "the <noun> already has a residual", "the <noun>'s <bias_name> is
  // not constant", "the <output_noun> 'x' has 2 users".
  std::string noun{}, bias_name{}, output_noun{};
  std::vector<Activation> activations{};  // the ones the fused op runs
  // The values of constant `c` added as a bias to an output of rank `rank` (one value, or one per
  // output channel or column), nullopt when it broadcasts otherwise; `expected_bias` names the
  // shapes it takes, `bias_reason` the decision text of its Add (`summed`: onto a bias).
  std::function<std::optional<std::vector<float>>(const Value& c, size_t rank)> bias_of{};
  std::string expected_bias{};
  std::function<std::string(const Value& c, bool summed)> bias_reason{};
  // A first bias of rank 1 is used as it is; otherwise a new constant holds every bias.
  bool reuse_rank1_bias = false;
  // Whether `add` may fold `z` as the residual (explaining when not); `note` ends its decision text.
  std::function<bool(const Node& add, const Value& z, std::string& note)> residual_ok{};
  // The decision text of the activation step at `op` (m.act and the bounds are set).
  std::function<std::string(const Node& op, const EpilogueMatch& m)> activation_reason{};
  // Ops of steps the pass matches itself: `other_step` extends the match from `u` on and returns
  // the step's last node, or nullptr to end the walk.
  std::vector<std::string> other_ops{};
  std::function<Node*(Node& u)> other_step{};
};

// The activation attribute of a fused op (none when absent); nullopt when it names none of
// core/epilogue.h's.
std::optional<Activation> FusedActivation(const Node& n);

// Starts `m` at `root`, to become `fused_op`. When `root` is one already, `m` takes over its bias
// (input 2), residual (input 3), activation and decisions, so that the walk extends it; false when
// its activation is not one of core/epilogue.h's (nothing to match).
bool StartEpilogue(Node* root, const std::string& fused_op, EpilogueMatch& m);

// Extends `m` by the epilogue ops after m.out while the fusion stays exact.
void MatchEpilogue(const RuleSweep& sweep, const EpilogueSpec& spec, EpilogueMatch& m);

// Writes the activation of `m` and the Clip bounds it has into `attrs` (an old epilogue is dropped).
void WriteEpilogueAttributes(const EpilogueMatch& m, Attributes& attrs);

// The fused node of `m`, named after the root: reads `operands`, then the bias (a new constant
// when folded) and the residual; `attrs` with the epilogue written in; the origins of `parts`; the
// decisions of the fused op extended and the fusion decision. InternalError (naming `pass`) when
// its inferred shape is not that of m.out.
absl::StatusOr<Node*> CreateFusedNode(RuleSweep& sweep, const EpilogueMatch& m, std::vector<Value*> operands,
                                      Attributes attrs, const std::vector<const Node*>& parts, const std::string& pass);

// Every use of m.out reads `fused` instead, and the matched nodes are erased.
absl::Status ReplaceMatch(RuleSweep& sweep, const EpilogueMatch& m, Node* fused);

}  // namespace gcomp::passes
