// Time intervals [start, end): merging and intersecting lists of them.
#pragma once

#include <cstdint>
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

}  // namespace stepscope
