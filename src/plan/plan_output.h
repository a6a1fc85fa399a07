// Text and JSON views of a plan (stepscope plan), with the fitting settings
// and the best-practice warnings.
#pragma once

#include <string>
#include <vector>

#include "plan/plan.h"
#include "plan/select.h"

namespace stepscope::plan {

struct PlanReport {
  Plan plan;
  std::vector<std::string> warnings;
  bool has_capacity = false;
  int64_t capacity_bytes = 0;
  std::vector<Candidate> candidates;  // settings that fit, fastest first
};

std::string RenderPlanText(const PlanReport& r);
std::string RenderPlanJson(const PlanReport& r);

}  // namespace stepscope::plan
