#include "llm/gguf/gguf_metadata.h"

#include "base/error.h"

namespace nvhcq::llm {

void GgufMetadata::set(std::string key, GgufValue value) {
  auto it = index_.find(key);
  if (it != index_.end()) {
    entries_[it->second].second = std::move(value);
    return;
  }
  index_.emplace(key, entries_.size());
  entries_.emplace_back(std::move(key), std::move(value));
}

bool GgufMetadata::erase(std::string_view key) {
  auto it = index_.find(key);
  if (it == index_.end()) return false;
  const size_t pos = it->second;
  index_.erase(it);
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(pos));
  for (auto& [k, i] : index_) {
    if (i > pos) --i;
  }
  return true;
}

const GgufValue* GgufMetadata::find(std::string_view key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

const GgufValue& GgufMetadata::at(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) throw FormatError("missing metadata key '" + std::string(key) + "'");
  return *v;
}

std::optional<std::string> GgufMetadata::find_string(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) return std::nullopt;
  return v->as_string(key);
}

uint64_t GgufMetadata::get_array_size(std::string_view key) const {
  const GgufValue& v = at(key);
  if (!v.is_array()) {
    throw FormatError("metadata '" + std::string(key) + "' is " +
                      std::string(gguf_type_name(v.type())) + ", expected an array");
  }
  return v.size();
}

}  // namespace nvhcq::llm
