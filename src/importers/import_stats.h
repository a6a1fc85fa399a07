// ImportStats: the named counters an importer keeps while it reads ("bad
// input becomes data"). They land in the trace's `stats` table, where the
// user, `stepscope import`'s summary and the report read them.
//
// Counters are registered once (name + what it counts) and then bumped
// through a stable index, so the per-event path is an array increment.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stepscope {

class TraceWriter;

class ImportStats {
 public:
  // Registers a counter (or returns the existing one) and returns its index.
  size_t Add(const std::string& name, const std::string& doc);
  void Bump(size_t idx, int64_t by = 1) { counters_[idx].value += by; }
  void Set(size_t idx, int64_t v) { counters_[idx].value = v; }
  int64_t value(size_t idx) const { return counters_[idx].value; }
  // Value by name; 0 when no such counter.
  int64_t Get(const std::string& name) const;

  struct Counter {
    std::string name;
    std::string doc;
    int64_t value = 0;
  };
  const std::vector<Counter>& counters() const { return counters_; }

  // Import warnings: events dropped (how many, why: each names its counter),
  // evidence missing, no GPU activity from a file that has events. `import`
  // prints them to stderr; they are never silent.
  void Warn(std::string message) { warnings_.push_back(std::move(message)); }
  const std::vector<std::string>& warnings() const { return warnings_; }

  // Writes every counter (zeros included, so the table documents what was
  // checked) into the trace's stats table.
  void WriteTo(TraceWriter* w) const;

 private:
  std::vector<Counter> counters_;
  std::vector<std::string> warnings_;
};

}  // namespace stepscope
