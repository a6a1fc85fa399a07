#include "importers/import_util.h"

#include "store/sqlite_util.h"
#include "store/trace_writer.h"

namespace stepscope {

StringId StringCache::Get(std::string_view s) {
  auto it = map_.find(s);
  if (it != map_.end()) return it->second;
  StringId id = w_->Intern(s);
  map_.emplace(std::string(s), id);
  return id;
}

uint8_t RangeDepthTracker::Depth(uint64_t key, int64_t start, int64_t end) {
  Stack& s = stacks_[key];
  if (start < s.last_start || (start == s.last_start && end > s.last_end)) {
    ++out_of_order_;
    unordered_.insert(key);
  }
  while (!s.ends.empty() && s.ends.back() <= start) s.ends.pop_back();
  if (!s.ends.empty() && end > s.ends.back()) ++s.partial;
  size_t depth = s.ends.size();
  s.ends.push_back(end);
  s.last_start = start;
  s.last_end = end;
  return depth > 255 ? 255 : static_cast<uint8_t>(depth);
}

uint64_t RangeDepthTracker::partial_overlaps() const {
  uint64_t n = 0;
  for (const auto& [key, s] : stacks_) {
    if (!unordered_.count(key)) n += s.partial;
  }
  return n;
}

Status RecomputeNvtxDepth(sqlite3* db, uint32_t tid, const std::vector<StringId>& domains,
                          uint64_t* partial) {
  std::string in;
  for (size_t i = 0; i < domains.size(); ++i) in += (i ? ",?" : "?");
  ASSIGN_OR_RETURN(
      Statement sel,
      Prepare(db,
              "SELECT id, start_ns, end_ns, depth FROM nvtx WHERE kind = 1 AND tid = ? "
              "AND domain_id IN (" +
                  in + ") ORDER BY start_ns, end_ns DESC, id"));
  ASSIGN_OR_RETURN(Statement upd, Prepare(db, "UPDATE nvtx SET depth = ? WHERE id = ?"));
  sel.BindInt(1, tid);
  for (size_t i = 0; i < domains.size(); ++i) sel.BindInt(static_cast<int>(i) + 2, domains[i]);
  std::vector<int64_t> ends;
  while (sel.Step()) {
    int64_t start = sel.Int(1), end = sel.Int(2);
    while (!ends.empty() && ends.back() <= start) ends.pop_back();
    if (!ends.empty() && end > ends.back()) ++*partial;
    int64_t depth = ends.size() > 255 ? 255 : static_cast<int64_t>(ends.size());
    ends.push_back(end);
    if (depth != sel.Int(3)) {
      upd.BindInt(1, depth);
      upd.BindInt(2, sel.Int(0));
      upd.Step();
      if (!upd.ok()) return upd.status();
      upd.Reset();
    }
  }
  return sel.status();
}

}  // namespace stepscope
