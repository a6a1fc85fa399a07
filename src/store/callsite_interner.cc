#include "store/callsite_interner.h"

#include <algorithm>

#include "store/trace_writer.h"

namespace stepscope {
namespace {

class WriterSink : public CallsiteSink {
 public:
  explicit WriterSink(TraceWriter* w) : w_(w) {}
  void AddFrame(const FrameRecord& r) override { w_->AddFrame(r); }
  void AddCallsite(const CallsiteRecord& r) override { w_->AddCallsite(r); }

 private:
  TraceWriter* w_;
};

}  // namespace

CallsiteInterner::CallsiteInterner(TraceWriter* writer) : sink_(new WriterSink(writer)) {
  owned_ = sink_;
}

CallsiteInterner::~CallsiteInterner() { delete owned_; }

size_t CallsiteInterner::FrameHash::operator()(const FrameKey& f) const {
  uint64_t h = static_cast<uint64_t>(f.function) * 0x9e3779b97f4a7c15ull;
  h ^=
      (static_cast<uint64_t>(f.file) << 20) + static_cast<uint64_t>(f.line) * 0xff51afd7ed558ccdull;
  h ^= static_cast<uint64_t>(f.kind) << 56;
  return static_cast<size_t>(h ^ (h >> 29));
}

uint32_t CallsiteInterner::Frame(const FrameKey& f) {
  auto [it, added] = frame_ids_.emplace(f, next_frame_);
  if (!added) return it->second;
  FrameRecord r{};
  r.id = next_frame_++;
  r.kind = static_cast<uint8_t>(f.kind);
  r.function = f.function;
  r.file = f.file;
  r.line = f.line;
  sink_->AddFrame(r);
  return r.id;
}

uint32_t CallsiteInterner::Child(uint32_t parent, uint32_t frame) {
  const uint64_t key = (static_cast<uint64_t>(parent) << 32) | frame;
  auto [it, added] = child_ids_.emplace(key, 0);
  if (!added) return it->second;
  const uint16_t depth =
      parent <= callsite_base_ || parent - callsite_base_ > depth_.size()
          ? 0
          : static_cast<uint16_t>(std::min<int>(depth_[parent - callsite_base_ - 1] + 1, 0xffff));
  depth_.push_back(depth);
  CallsiteRecord r{};
  r.id = callsite_base_ + static_cast<uint32_t>(depth_.size());
  r.parent = parent;
  r.frame = frame;
  r.depth = depth;
  it->second = r.id;
  sink_->AddCallsite(r);
  return r.id;
}

uint32_t CallsiteInterner::Intern(const std::vector<FrameKey>& stack) {
  uint32_t node = 0;
  const size_t n = stack.size();
  for (size_t i = 0; i < n; ++i) {
    // Over-deep stacks: the outermost frames, then the leaf.
    if (n > kMaxDepth && i >= kMaxDepth - 1 && i + 1 < n) continue;
    node = Child(node, Frame(stack[i]));
  }
  return node;
}

const CallsiteRecord* FindCallsite(const std::vector<CallsiteRecord>& callsites, uint32_t id) {
  if (id == 0) return nullptr;
  // Dense ids (every writer): row id - 1 holds id.
  if (id - 1 < callsites.size() && callsites[id - 1].id == id) return &callsites[id - 1];
  auto it = std::lower_bound(callsites.begin(), callsites.end(), id,
                             [](const CallsiteRecord& c, uint32_t v) { return c.id < v; });
  return it != callsites.end() && it->id == id ? &*it : nullptr;
}

CallsiteChains::CallsiteChains(const std::vector<CallsiteRecord>* callsites) : rows_(callsites) {
  const std::vector<CallsiteRecord>& rows = *rows_;
  const size_t n = rows.size();
  parent_.assign(n, kNone);
  depth_.assign(n, 0);
  keep_.assign(n, kNone);
  for (size_t i = 0; i < n; ++i) {
    const CallsiteRecord* p =
        rows[i].parent == rows[i].id ? nullptr : FindCallsite(rows, rows[i].parent);
    if (p != nullptr) parent_[i] = static_cast<uint32_t>(p - rows.data());
  }
  // Each row once: climb to a row already placed (or a root), then place the
  // climbed path from its outermost row down. A cycle is cut where the climb
  // meets its own path.
  enum : uint8_t { kNew, kOnPath, kPlaced };
  std::vector<uint8_t> state(n, kNew);
  std::vector<uint32_t> path;
  constexpr uint32_t kKeepDepth = CallsiteInterner::kMaxDepth - 2;
  for (size_t i = 0; i < n; ++i) {
    path.clear();
    uint32_t j = static_cast<uint32_t>(i);
    for (; j != kNone && state[j] == kNew; j = parent_[j]) {
      state[j] = kOnPath;
      path.push_back(j);
    }
    if (j != kNone && state[j] == kOnPath) parent_[path.back()] = kNone;
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
      const uint32_t k = *it, p = parent_[k];
      depth_[k] = p == kNone ? 0 : depth_[p] + 1;
      keep_[k] = depth_[k] == kKeepDepth ? k : depth_[k] > kKeepDepth ? keep_[p] : kNone;
      if (depth_[k] >= CallsiteInterner::kMaxDepth) ++cut_;
      state[k] = kPlaced;
    }
  }
}

std::vector<uint32_t> CallsiteChains::Expand(uint32_t callsite) const {
  std::vector<uint32_t> frames;
  const CallsiteRecord* c = FindCallsite(*rows_, callsite);
  if (c == nullptr) return frames;
  const uint32_t leaf = static_cast<uint32_t>(c - rows_->data());
  const bool cut = depth_[leaf] >= CallsiteInterner::kMaxDepth;
  for (uint32_t j = cut ? keep_[leaf] : leaf; j != kNone; j = parent_[j]) {
    frames.push_back((*rows_)[j].frame);
  }
  std::reverse(frames.begin(), frames.end());
  if (cut) frames.push_back(c->frame);
  return frames;
}

}  // namespace stepscope
