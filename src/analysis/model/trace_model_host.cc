// TraceModel's host-model helpers: stacks of callsites, the Python line of a
// CUDA call, thread names (docs/host.md).
#include <algorithm>

#include "analysis/model/trace_model.h"
#include "store/callsite_interner.h"

namespace stepscope {

const std::string& TraceModel::ThreadName(uint32_t tid) const {
  static const std::string kEmpty;
  auto it = r_.thread_names.find(tid);
  return it == r_.thread_names.end() ? kEmpty : it->second;
}

const FrameRecord* TraceModel::Frame(uint32_t id) const {
  const auto& f = r_.frames;
  if (id == 0) return nullptr;
  if (id - 1 < f.size() && f[id - 1].id == id) return &f[id - 1];
  auto it = std::lower_bound(f.begin(), f.end(), id,
                             [](const FrameRecord& r, uint32_t v) { return r.id < v; });
  return it != f.end() && it->id == id ? &*it : nullptr;
}

std::vector<const FrameRecord*> TraceModel::Stack(uint32_t callsite) const {
  std::vector<const FrameRecord*> out;
  for (uint32_t id : chains_->Expand(callsite)) {
    if (const FrameRecord* f = Frame(id)) out.push_back(f);
  }
  return out;
}

const FrameRecord* TraceModel::PythonLeaf(uint32_t callsite) const {
  std::vector<const FrameRecord*> stack = Stack(callsite);
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
    if ((*it)->kind == static_cast<uint8_t>(FrameKind::kPython)) return *it;
  }
  return nullptr;
}

std::string TraceModel::FrameLabel(const FrameRecord& f) const {
  std::string file = String(f.file);
  const size_t slash = file.find_last_of('/');
  if (slash != std::string::npos) file = file.substr(slash + 1);
  std::string out;
  if (!file.empty()) {
    out = file;
    if (f.line > 0) out += ":" + std::to_string(f.line);
    out += " ";
  }
  return out + (f.function != kNoString ? String(f.function) : std::string("?"));
}

uint32_t TraceModel::ApiCallsite(uint32_t correlation) const {
  const auto& v = r_.api_callsites;
  auto it =
      std::lower_bound(v.begin(), v.end(), correlation,
                       [](const ApiCallsiteRecord& r, uint32_t c) { return r.correlation < c; });
  return it != v.end() && it->correlation == correlation ? it->callsite : 0;
}

std::string TraceModel::ApiPythonLine(uint32_t correlation) const {
  if (correlation == 0) return "";
  const FrameRecord* f = PythonLeaf(ApiCallsite(correlation));
  return f == nullptr ? "" : FrameLabel(*f);
}

const std::vector<uint32_t>& TraceModel::ApisOfThread(uint32_t tid) const {
  if (!by_tid_built_) {
    for (uint32_t i = 0; i < r_.apis.size(); ++i) apis_by_tid_[r_.apis[i].tid].push_back(i);
    for (uint32_t i = 0; i < r_.osrt.size(); ++i) osrt_by_tid_[r_.osrt[i].tid].push_back(i);
    for (uint32_t i = 0; i < r_.sched.size(); ++i) sched_by_tid_[r_.sched[i].tid].push_back(i);
    by_tid_built_ = true;
  }
  static const std::vector<uint32_t> kEmpty;
  auto it = apis_by_tid_.find(tid);
  return it == apis_by_tid_.end() ? kEmpty : it->second;
}

const std::vector<uint32_t>& TraceModel::OsrtOfThread(uint32_t tid) const {
  ApisOfThread(tid);  // builds both indices
  static const std::vector<uint32_t> kEmpty;
  auto it = osrt_by_tid_.find(tid);
  return it == osrt_by_tid_.end() ? kEmpty : it->second;
}

const std::vector<uint32_t>& TraceModel::SchedOfThread(uint32_t tid) const {
  ApisOfThread(tid);  // builds every index
  static const std::vector<uint32_t> kEmpty;
  auto it = sched_by_tid_.find(tid);
  return it == sched_by_tid_.end() ? kEmpty : it->second;
}

}  // namespace stepscope
