// CallsiteInterner: turns host call stacks into the trace's frames/callsites
// trie (schema 1.5, docs/host.md), emitting each new frame and callsite row
// once. Every producer of stacks uses it: the collector, the nsys importer
// and the torch.profiler importer.
//
//   CallsiteInterner in(&writer);               // or any CallsiteSink
//   uint32_t leaf = in.Intern({{kPython, fn, file, 152}, ...});  // root first
//   sample.callsite = leaf;
//
// Ids are dense and 1-based (0 = no stack), in order of first appearance.
// Stacks deeper than kMaxDepth keep their outermost kMaxDepth - 1 frames and
// the leaf (the leaf is what findings name).
//
// Also here: CallsiteChains, the reader's side (a callsite id back to its
// frames, root first), shared by analysis and export.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "format/records.h"

namespace stepscope {

class TraceWriter;

// Where new rows go (TraceWriter implements it through WriterSink).
class CallsiteSink {
 public:
  virtual ~CallsiteSink() = default;
  virtual void AddFrame(const FrameRecord& r) = 0;
  virtual void AddCallsite(const CallsiteRecord& r) = 0;
};

// One frame of a stack to intern (its id is assigned by the interner).
struct FrameKey {
  FrameKind kind = FrameKind::kPython;
  StringId function = kNoString;
  StringId file = kNoString;
  int32_t line = 0;
  bool operator==(const FrameKey& o) const {
    return kind == o.kind && function == o.function && file == o.file && line == o.line;
  }
};

class CallsiteInterner {
 public:
  static constexpr size_t kMaxDepth = 256;

  explicit CallsiteInterner(CallsiteSink* sink) : sink_(sink) {}
  // Writes straight to `writer` (AddFrame / AddCallsite).
  explicit CallsiteInterner(TraceWriter* writer);
  ~CallsiteInterner();
  CallsiteInterner(const CallsiteInterner&) = delete;
  CallsiteInterner& operator=(const CallsiteInterner&) = delete;

  // Frame id of one frame (emitting the row when new).
  uint32_t Frame(const FrameKey& f);
  // Callsite id of `frame` under `parent` (0: a root).
  uint32_t Child(uint32_t parent, uint32_t frame);
  // Leaf callsite id of a root-to-leaf stack; 0 for an empty stack.
  uint32_t Intern(const std::vector<FrameKey>& stack);

  // Continue numbering after rows already in the trace (ids up to these);
  // call before the first Intern.
  void StartAfter(uint32_t last_frame, uint32_t last_callsite) {
    next_frame_ = last_frame + 1;
    callsite_base_ = last_callsite;
  }

  uint32_t frames() const { return next_frame_ - 1; }
  uint32_t callsites() const { return callsite_base_ + static_cast<uint32_t>(depth_.size()); }

 private:
  struct FrameHash {
    size_t operator()(const FrameKey& f) const;
  };
  CallsiteSink* sink_;
  CallsiteSink* owned_ = nullptr;
  uint32_t next_frame_ = 1;
  std::unordered_map<FrameKey, uint32_t, FrameHash> frame_ids_;
  std::unordered_map<uint64_t, uint32_t> child_ids_;  // (parent << 32 | frame) -> id
  uint32_t callsite_base_ = 0;                        // callsite ids before this interner's
  std::vector<uint16_t> depth_;                       // by callsite id - 1 - callsite_base_
};

// The reader's side: every callsite's chain, walked once. Built in time
// linear in the rows, without recursion (a chain may be 200k rows deep in a
// damaged or hostile trace); a damaged chain (a cycle, a missing parent row)
// ends where it breaks. Expand gives a stack in O(kMaxDepth): a chain deeper
// than kMaxDepth is read as its outermost kMaxDepth - 1 frames and its leaf,
// the writer's rule (CallsiteInterner::Intern), and counted in cut().
class CallsiteChains {
 public:
  // `callsites` ordered by id (TraceReader::Callsites()); must outlive this.
  explicit CallsiteChains(const std::vector<CallsiteRecord>* callsites);
  // Frame ids of a callsite's stack, root first; empty for 0 or an unknown id.
  std::vector<uint32_t> Expand(uint32_t callsite) const;
  // Callsites whose chain is deeper than kMaxDepth (read cut, as above).
  size_t cut() const { return cut_; }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  const std::vector<CallsiteRecord>* rows_;
  std::vector<uint32_t> parent_;  // row index of the parent, kNone for a root or a break
  std::vector<uint32_t> depth_;   // 0 for a root
  std::vector<uint32_t> keep_;    // deep rows: their ancestor at depth kMaxDepth - 2
  size_t cut_ = 0;
};

// The row of callsite `id` in `callsites` (ordered by id), or nullptr.
const CallsiteRecord* FindCallsite(const std::vector<CallsiteRecord>& callsites, uint32_t id);

}  // namespace stepscope
