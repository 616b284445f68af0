#pragma once
// The generated Unicode tables (unicode_tables.cpp, made by
// scripts/gen_unicode_tables.py). Use them through unicode.h.

#include <cstdint>
#include <span>

namespace nvhcq::llm::unicode {

// Flags that hold from `first` up to the next range's first code point.
struct CategoryRange {
  uint32_t first;
  uint8_t flags;
};

struct CaseMapping {
  uint32_t from, to;
};

extern const char* const kUnicodeVersion;  // "14.0.0"
std::span<const CategoryRange> category_ranges();  // sorted by first, starts at 0
std::span<const CaseMapping> lowercase_mappings();  // sorted by from

}  // namespace nvhcq::llm::unicode
