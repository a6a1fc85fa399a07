// Pricing by replay: the findings' fixes (each rule's, rules/rule.h) and the
// what-if questions that analyze and the whatif command both ask, answered
// one way.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/rules/rules.h"
#include "analysis/whatif/transforms.h"

namespace stepscope {

// An n times larger batch, as host_bound prices it (docs/whatif.md): every GPU
// op of the steady steps takes n times as long; host time does not change,
// except the host spans of the findings whose rule says they grow with the
// batch (um_faults: the CPU's fault bursts of managed memory touch the batch's
// data). `bursts`, if given, receives how many such spans grew.
whatif::Prediction PriceLargerBatch(const whatif::WhatIfEngine& e, const StepSet& steps,
                                    const std::vector<Finding>& findings, double n,
                                    size_t* bursts = nullptr);

// "1.23x the time for 4x the samples[; the 3 CPU fault bursts of managed
// memory grow with it]": a larger batch's price in words, n with `digits`.
std::string LargerBatchNote(const whatif::Prediction& p, double n, int digits, size_t bursts);

// The fix of pageable copies (the pageable_memcpy rule, `whatif --pin`):
// pinned, non-blocking copies for the given gpu_ops rows, each at its bytes
// over this machine's pinned bandwidth of its direction (MachineConstants;
// unknown: its own time, and `what` says why), with a pageable upload's own
// stream synchronization (PageableUploadSyncs). `what` receives the fix in
// words, with the bandwidths and where they came from.
std::vector<whatif::PinnedCopy> PinnedCopiesOf(const TraceModel& m, const whatif::Graph& g,
                                               const std::vector<uint32_t>& ops,
                                               const MachineConstants& mc,
                                               const std::vector<uint32_t>& upload_sync,
                                               std::string* what);

// What the prices lean on where the host bounds a step, for `analyze`'s text:
// the replay runs the host at the traced process's speed, and a traced host
// runs host-bound steps slower than an untraced one (docs/whatif.md, "The
// tracer's speed"). Both are empty when the host was scaled to an untraced
// step (`host_scaled`).
// The header's note when the traced step is host-bound: prices of host work
// can be high.
std::string HostBoundStepNote(bool host_bound, bool host_scaled);
// A finding's note when its fix turns a step the GPU bounds into one the host
// bounds: the fixed step is replayed slow, the saving can be larger.
std::string HostSpeedCaveat(bool host_bound_before, bool host_bound_after, bool host_scaled);

}  // namespace stepscope
