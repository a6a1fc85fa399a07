#include "capture/pystack/py_layout.h"

#include <algorithm>

namespace stepscope::pystack {
namespace {

// Field order as in PyLayout.
constexpr PyLayout k311 = {11, 40, 0,   16,  360, -1, 208, 8,   160, 56, 8,  -1, 32, 48, 56,
                           69, -1, 112, 120, 128, 72, 136, 184, 48,  72, 16, 32, 16, 32, -1};
constexpr PyLayout k312 = {12, 40, 0,   72,  -1,  384, 208, 8,   144, 56, 0,  -1, 0,  8,  56,
                           70, 3,  112, 120, 128, 68,  136, 192, 40,  56, 16, 32, 16, 32, 1040};
constexpr PyLayout k313 = {13, 632, 7264, 7344, -1,  16, 208, 8,   160, -1, 0,  72, 0,  8,  56,
                           70, 3,   112,  120,  128, 68, 136, 200, 40,  56, 16, 32, 16, 32, 7752};

// Location table varints: 6-bit chunks, least significant first, bit 6 set
// on every chunk but the last.
struct Cursor {
  const uint8_t* p;
  const uint8_t* end;
  bool ok = true;
  uint32_t Varint() {
    uint32_t v = 0;
    int shift = 0;
    while (true) {
      if (p >= end || shift > 28) {
        ok = false;
        return 0;
      }
      const uint8_t b = *p++;
      v |= static_cast<uint32_t>(b & 63) << shift;
      shift += 6;
      if (!(b & 64)) return v;
    }
  }
  int32_t Svarint() {
    const uint32_t v = Varint();
    return (v & 1) ? -static_cast<int32_t>(v >> 1) : static_cast<int32_t>(v >> 1);
  }
  void Skip(int n) {
    if (end - p < n) {
      ok = false;
      p = end;
    } else {
      p += n;
    }
  }
};

}  // namespace

const PyLayout* LayoutFor(uint32_t hexversion) {
  if ((hexversion >> 24) != 3) return nullptr;
  switch ((hexversion >> 16) & 0xff) {
    case 11:
      return &k311;
    case 12:
      return &k312;
    case 13:
      return &k313;
    default:
      return nullptr;
  }
}

namespace {

// The location table's entries in order: `entry(begin, length, line)` for
// each, `line` -1 where the entry has no location, until `entry` returns
// false, the table ends, or an entry is malformed (not an entry's first
// byte, a varint past the end): that entry and all after it are not given.
template <typename Entry>
void ForEachLocation(const uint8_t* table, size_t size, int firstlineno, Entry entry) {
  Cursor c{table, table + size};
  int64_t line = firstlineno;  // 64 bits: a hostile table's deltas cannot overflow it
  int64_t addr = 0;
  while (c.p < c.end && c.ok) {
    const uint8_t first = *c.p++;
    if (!(first & 0x80)) return;  // not the start of an entry: malformed
    const int code = (first >> 3) & 15;
    const int length = (first & 7) + 1;  // in code units
    bool has_location = true;
    if (code == 15) {
      has_location = false;  // no location
    } else if (code == 14) {
      line += c.Svarint();  // long form: line delta, end line, columns
      c.Varint();
      c.Varint();
      c.Varint();
    } else if (code == 13) {
      line += c.Svarint();  // no column
    } else if (code >= 10) {
      line += code - 10;  // one-line forms: start and end column bytes
      c.Skip(2);
    } else {
      c.Skip(1);  // short forms: same line, one column byte
    }
    if (!c.ok || addr > INT32_MAX - length) return;
    if (!entry(addr, length, has_location ? static_cast<int>(line) : -1)) return;
    addr += length;
  }
}

}  // namespace

int LineForInstruction(const uint8_t* table, size_t size, int firstlineno, int index) {
  int found = -1;
  if (index < 0) return -1;
  ForEachLocation(table, size, firstlineno, [&](int64_t begin, int length, int line) {
    if (index >= begin + length) return true;
    found = line;
    return false;
  });
  return found;
}

void DecodeLineTable(const uint8_t* table, size_t size, int firstlineno,
                     std::vector<LineSpan>* out) {
  out->clear();
  ForEachLocation(table, size, firstlineno, [&](int64_t begin, int length, int line) {
    const auto end = static_cast<int32_t>(begin + length);
    if (!out->empty() && out->back().line == line) {
      out->back().end = end;
    } else {
      out->push_back({end, line});
    }
    return true;
  });
  out->shrink_to_fit();
}

int LineInSpans(const std::vector<LineSpan>& spans, int index) {
  if (index < 0) return -1;
  auto it = std::upper_bound(spans.begin(), spans.end(), index,
                             [](int i, const LineSpan& s) { return i < s.end; });
  return it == spans.end() ? -1 : it->line;
}

}  // namespace stepscope::pystack
