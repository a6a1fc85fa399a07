// The what-if questions of `stepscope whatif` (docs/whatif.md), answered by
// replaying the steps with a transformation of transforms.h applied. A rule's
// fix (--prefetch, --tensor-cores, --no-recompute) is answered by the rule's
// finding as analyze priced it, so both commands print the same number; a
// larger batch (--batch) is priced as the host_bound rule prices it. The
// other questions select their calls or copies themselves, over every steady
// step (a rule's finding holds only the calls or copies that cost time).
#pragma once

#include <string>
#include <vector>

#include "analysis/rules/rules.h"
#include "analysis/whatif/transforms.h"

namespace stepscope {

struct WhatifAnswer {
  std::string question;  // "pinned copies"
  whatif::Prediction p;
  std::string note;  // what was changed: "12 copies", the fix's own words
};

struct WhatifQuestions {
  const TraceModel& m;
  const Analysis& a;  // analyze's findings, priced with the same options
  const whatif::WhatIfEngine& e;

  // --remove-sync NAME [--in RANGE]: the host no longer waits in the blocking
  // calls named NAME ('all': every one), only inside ranges named RANGE if
  // given.
  WhatifAnswer RemoveSync(const std::string& name, const std::string& in) const;
  // A rule's fix, as analyze priced the rule's finding ("no <rule> finding in
  // this trace" without one).
  WhatifAnswer RuleFix(const std::string& rule, const std::string& question) const;
  // --pin: pinned instead of pageable copies; --side-stream / --no-copies: the
  // other host<->device copies on a side stream / without them.
  WhatifAnswer PinCopies() const;
  WhatifAnswer SideStream() const;
  WhatifAnswer NoCopies() const;
  // --graph RANGE: CUDA graphs over every steady instance of the NVTX range
  // ('steps': the step ranges).
  WhatifAnswer CudaGraphs(const std::string& range) const;
  // --batch N, as host_bound prices it (PriceLargerBatch).
  WhatifAnswer LargerBatch(double n) const;

 private:
  bool Steady(int32_t step) const { return step >= 0 && a.steps.steps[step].steady(); }
  // The host<->device copies of the steady steps (graph nodes): pageable ones
  // or the others.
  std::vector<uint32_t> Copies(bool pageable) const;
};

}  // namespace stepscope
