// Small string helpers shared by every stage.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stepscope {

std::vector<std::string> Split(std::string_view s, char sep);
std::string Join(const std::vector<std::string>& parts, std::string_view sep);
bool StartsWith(std::string_view s, std::string_view prefix);
bool EndsWith(std::string_view s, std::string_view suffix);
std::string Trim(std::string_view s);

// Human-readable duration from nanoseconds: "812 ns", "3.41 us", "16.80 ms", "2.10 s".
std::string FormatDuration(int64_t ns);
// Human-readable bytes: "512 B", "3.2 KiB", "1.50 GiB".
std::string FormatBytes(uint64_t bytes);
// Fixed-point with the given number of decimals ("%.*f").
std::string FormatFixed(double v, int decimals);
// Integer with thousands separators: 1234567 -> "1,234,567".
std::string FormatCount(int64_t v);

// Parses "10", "1.5s", "250ms", "3us", "40ns" into nanoseconds (plain numbers are seconds).
bool ParseDurationNs(std::string_view s, int64_t* out_ns);
bool ParseInt64(std::string_view s, int64_t* out);
bool ParseDouble(std::string_view s, double* out);

// Value of one hexadecimal digit, or -1 when c is not one.
int HexDigitValue(char c);
// Appends the UTF-8 encoding of a Unicode code point (<= 0x10FFFF) to *out.
void AppendUtf8(std::string* out, uint32_t code_point);

// Length of the well-formed UTF-8 sequence at s[i] (i < s.size()) and its code
// point; 0 when ill-formed (Unicode 15, table 3-7).
size_t DecodeUtf8(std::string_view s, size_t i, uint32_t* code_point);
// Valid UTF-8: every ill-formed sequence (RFC 3629: overlong, surrogate,
// past U+10FFFF, cut short) becomes U+FFFD; everything else is kept.
std::string ValidUtf8(std::string_view s);
// The Unicode bidirectional controls (U+061C, U+200E, U+200F, U+202A..U+202E,
// U+2066..U+2069): invisible, they reorder the text around them, so a name
// can show as another ("Trojan Source").
bool IsBidiControl(uint32_t code_point);
// Text safe for a terminal and for one table cell: ValidUtf8, and tab,
// newline and CR become a space, other control characters (C0, DEL, C1,
// so escape sequences) U+FFFD, and bidirectional controls are escaped as
// "<U+202E>". The trace reader applies it to every name and meta value, so
// text, CSV, JSON and the HTML report never carry them.
std::string PrintableText(std::string_view s);

// Demangles an Itanium C++ name; returns the input unchanged when it is not mangled.
std::string Demangle(const std::string& mangled);

}  // namespace stepscope
