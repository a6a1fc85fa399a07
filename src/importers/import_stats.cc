#include "importers/import_stats.h"

#include "store/trace_writer.h"

namespace stepscope {

size_t ImportStats::Add(const std::string& name, const std::string& doc) {
  for (size_t i = 0; i < counters_.size(); ++i) {
    if (counters_[i].name == name) return i;
  }
  counters_.push_back({name, doc, 0});
  return counters_.size() - 1;
}

int64_t ImportStats::Get(const std::string& name) const {
  for (const Counter& c : counters_) {
    if (c.name == name) return c.value;
  }
  return 0;
}

void ImportStats::WriteTo(TraceWriter* w) const {
  for (const Counter& c : counters_) w->SetStat(c.name, c.value, c.doc);
}

}  // namespace stepscope
