// `gcomp inspect PLAN`: a plan as text or JSON: header, memory figures (arena sizes, the peak-live
// lower bound and their ratio), inputs/outputs, and every step with its kernel, the reason it was
// chosen, and where each operand lives (arena offset, weight section, caller, alias).
#pragma once

#include <string>

#include "plan/plan.h"

namespace gcomp::plan {

std::string PlanToText(const Plan& plan);
std::string PlanToJson(const Plan& plan);  // schema_version 1

}  // namespace gcomp::plan
