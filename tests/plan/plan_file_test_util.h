// A fixed plan with every buffer kind, attributes of every kind and odd-sized weights, shared by
// plan_file_test.cc and write_plan (which writes it from another process).
#pragma once

#include "plan/plan.h"

namespace gcomp::plan::testing {

// The plan's weights point into its own owned_weights (still true after a move, not a copy).
Plan MakeTestPlan();

// Points plan->weights at plan->owned_weights (after copying a plan).
void PointWeightsAtOwned(Plan* plan);

}  // namespace gcomp::plan::testing
