#include "llm/gguf/gguf_writer.h"

#include <cstring>

#include "base/error.h"

namespace nvhcq::llm {
namespace {

template <typename T>
void append(std::vector<uint8_t>& out, T v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

void append_string(std::vector<uint8_t>& out, const std::string& s) {
  append<uint64_t>(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

}  // namespace

GgufWriter::GgufWriter(uint32_t version) : version_(version) {
  if (version < kGgufMinVersion || version > kGgufMaxVersion) {
    throw UsageError("cannot write GGUF version " + std::to_string(version));
  }
}

void GgufWriter::set(std::string key, GgufValue value) {
  if (key == kGgufAlignmentKey) {
    if (value.type() != GgufType::U32) {
      throw FormatError(std::string(kGgufAlignmentKey) + " must be a u32");
    }
    const uint32_t a = value.as_int<uint32_t>();
    if (a == 0 || (a & (a - 1)) != 0) {
      throw FormatError(std::string(kGgufAlignmentKey) + " must be a power of two, not " +
                        std::to_string(a));
    }
    alignment_ = a;
    metadata_.set(std::move(key), std::move(value));
    lay_out();
    return;
  }
  metadata_.set(std::move(key), std::move(value));
}

void GgufWriter::copy_metadata(const GgufMetadata& other) {
  for (const auto& [key, value] : other.entries()) set(key, value);
}

bool GgufWriter::erase(std::string_view key) {
  const bool erased = metadata_.erase(key);
  if (erased && key == kGgufAlignmentKey) {
    alignment_ = kGgufDefaultAlignment;
    lay_out();
  }
  return erased;
}

const GgufTensorInfo& GgufWriter::add_tensor(std::string name, GgmlType type,
                                             std::vector<uint64_t> dims) {
  if (name.empty() || name.size() > kGgufMaxTensorNameBytes) {
    throw FormatError("tensor name '" + name + "' must be 1 to " +
                      std::to_string(kGgufMaxTensorNameBytes) + " bytes long");
  }
  for (const auto& t : tensors_) {
    if (t.name == name) throw FormatError("duplicate tensor '" + name + "'");
  }
  if (dims.empty() || dims.size() > kGgufMaxDims) {
    throw FormatError("tensor '" + name + "' has " + std::to_string(dims.size()) +
                      " dimensions (1 to " + std::to_string(kGgufMaxDims) + " allowed)");
  }
  if (!ggml_type_traits(static_cast<uint32_t>(type))) {
    throw FormatError("tensor '" + name + "' has unknown ggml type id " +
                      std::to_string(static_cast<uint32_t>(type)));
  }
  GgufTensorInfo t;
  t.name = std::move(name);
  t.type = type;
  t.dims = std::move(dims);
  gguf_tensor_size(t.name, t.type, t.dims, &t.n_elements, &t.n_bytes);
  tensors_.push_back(std::move(t));
  lay_out();
  return tensors_.back();
}

void GgufWriter::lay_out() {
  uint64_t offset = 0;
  for (auto& t : tensors_) {
    t.offset = offset;
    offset = gguf_align(offset + t.n_bytes, alignment_);
  }
}

uint64_t GgufWriter::header_size() const {
  uint64_t n = 4 + 4 + 8 + 8;
  for (const auto& [key, value] : metadata_.entries()) n += 8 + key.size() + 4 + value.encoded_size();
  for (const auto& t : tensors_) n += 8 + t.name.size() + 4 + 8 * t.dims.size() + 4 + 8;
  return n;
}

uint64_t GgufWriter::data_offset() const { return gguf_align(header_size(), alignment_); }

uint64_t GgufWriter::file_size() const {
  if (tensors_.empty()) return data_offset();
  const auto& last = tensors_.back();
  return data_offset() + gguf_align(last.offset + last.n_bytes, alignment_);
}

std::vector<uint8_t> GgufWriter::header_bytes() const {
  std::vector<uint8_t> out;
  out.reserve(data_offset());
  out.insert(out.end(), kGgufMagic, kGgufMagic + 4);
  append<uint32_t>(out, version_);
  append<uint64_t>(out, tensors_.size());
  append<uint64_t>(out, metadata_.size());
  for (const auto& [key, value] : metadata_.entries()) {
    append_string(out, key);
    append<uint32_t>(out, static_cast<uint32_t>(value.type()));
    value.encode(out);
  }
  for (const auto& t : tensors_) {
    append_string(out, t.name);
    append<uint32_t>(out, static_cast<uint32_t>(t.dims.size()));
    for (uint64_t d : t.dims) append<uint64_t>(out, d);
    append<uint32_t>(out, static_cast<uint32_t>(t.type));
    append<uint64_t>(out, t.offset);
  }
  out.resize(data_offset(), 0);
  return out;
}

std::vector<uint8_t> GgufWriter::to_bytes(std::span<const std::span<const uint8_t>> data) const {
  if (data.size() != tensors_.size()) {
    throw UsageError("to_bytes got data for " + std::to_string(data.size()) + " tensors, the file has " +
                     std::to_string(tensors_.size()));
  }
  std::vector<uint8_t> out = header_bytes();
  const uint64_t base = out.size();
  out.resize(file_size(), 0);
  for (size_t i = 0; i < tensors_.size(); ++i) {
    if (data[i].size() != tensors_[i].n_bytes) {
      throw UsageError("tensor '" + tensors_[i].name + "' needs " +
                       std::to_string(tensors_[i].n_bytes) + " bytes, got " +
                       std::to_string(data[i].size()));
    }
    if (!data[i].empty()) std::memcpy(out.data() + base + tensors_[i].offset, data[i].data(), data[i].size());
  }
  return out;
}

}  // namespace nvhcq::llm
