// What-if questions that analyze's pricing (pricing.cc) and the whatif
// command both ask, answered one way.
#pragma once

#include <cstddef>
#include <vector>

#include "analysis/rules.h"
#include "analysis/whatif/transforms.h"

namespace stepscope {

// The host spans a finding's fix acts on (Finding::host_spans), by thread and
// start, without repeats.
std::vector<whatif::HostSpan> FindingHostSpans(const Finding& f);

// An n times larger batch, as host_bound prices it (docs/whatif.md): every GPU
// op of the steady steps takes n times as long; host time does not change,
// except the CPU fault bursts of managed memory of the um_faults finding among
// `findings`, which touch the batch's data and grow n times too. `bursts`, if
// given, receives how many such bursts grew.
whatif::Prediction PriceLargerBatch(const whatif::WhatIfEngine& e, const StepSet& steps,
                                    const std::vector<Finding>& findings, double n,
                                    size_t* bursts = nullptr);

}  // namespace stepscope
