// The registry of the rules (rule.h). A rule is one file, rules/<id>.cc,
// that defines `extern const Rule k<Name>Rule`, and one line in the list
// below (docs/rules.md, "Adding a rule"). The list is the report order:
// findings of equal cost rank in it, `analyze --rules` prints it, and the
// rules detect in it (their "undecided" lines come in this order).
#include "analysis/rules/rule.h"

namespace stepscope {

#define STEPSCOPE_RULES(X)  \
  X(kCollectiveWaitRule)    \
  X(kDataLoadingRule)       \
  X(kHostSyncRule)          \
  X(kDataDependentSyncRule) \
  X(kLaunchBoundRule)       \
  X(kHostWaitRule)          \
  X(kPageableMemcpyRule)    \
  X(kSyncMemcpyRule)        \
  X(kOffloadCopiesRule)     \
  X(kFp32GemmRule)          \
  X(kMemoryCapacityRule)    \
  X(kUmFaultsRule)          \
  X(kRecomputeRule)         \
  X(kPerParamOptimizerRule) \
  X(kHostBoundRule)         \
  X(kOomRule)               \
  X(kTensorIdleRule)        \
  X(kMemoryBoundRule)

#define STEPSCOPE_DECLARE_RULE(name) extern const Rule name;
STEPSCOPE_RULES(STEPSCOPE_DECLARE_RULE)
#define STEPSCOPE_LIST_RULE(name) &name,

const std::vector<const Rule*>& Rules() {
  static const std::vector<const Rule*> kRules = {STEPSCOPE_RULES(STEPSCOPE_LIST_RULE)};
  return kRules;
}

const Rule* FindRule(const std::string& id) {
  for (const Rule* r : Rules()) {
    if (id == r->id) return r;
  }
  return nullptr;
}

const std::vector<RuleInfo>& RuleList() {
  static const std::vector<RuleInfo> kList = [] {
    std::vector<RuleInfo> v;
    for (const Rule* r : Rules()) v.push_back({r->id, r->summary});
    return v;
  }();
  return kList;
}

}  // namespace stepscope
