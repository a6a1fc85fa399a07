// Time intervals [start, end): merging and intersecting lists of them; the
// one rule for times a trace cannot hold.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stepscope {

struct Interval {
  int64_t start, end;
};

// Sorts and merges intervals in place (overlapping or touching ones become one, empty
// ones go); returns the total covered length, the length of their union.
int64_t MergeIntervals(std::vector<Interval>* v);

// Length of the intersection of two merged (sorted, disjoint) interval lists.
int64_t IntersectionLength(const std::vector<Interval>& a, const std::vector<Interval>& b);

// Times a trace cannot hold, made harmless: every reader that computes with
// record times applies these (the analysis model, summarize), so no
// difference or per-name total can overflow. Times are kept in [0, 2^62),
// durations in [0, 2^44 ns] (4.9 hours): a start outside the range moves to
// its edge, unless that leaves an impossible duration: then the record is
// zero-length at its end (an INT64_MIN start before a real end is no
// 4.9-hour kernel); an end before its start makes it zero-length at its
// start; a longer duration is cut. Each returns whether it changed anything
// (the reader counts them).
inline constexpr int64_t kMaxTraceTime = int64_t{1} << 62;
inline constexpr int64_t kMaxRecordDuration = int64_t{1} << 44;
bool ClampRecordTimes(int64_t* start, int64_t* end);
bool ClampInstant(int64_t* ts);
// The one line every reader prints when it changed `records` records (none
// when 0): "TRACE: N records with negative or impossible times were clamped ...".
void WarnClampedTimes(const std::string& path, int64_t records);

}  // namespace stepscope
