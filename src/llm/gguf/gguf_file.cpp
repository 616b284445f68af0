#include "llm/gguf/gguf_file.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "base/error.h"
#include "llm/gguf/gguf_byte_reader.h"

namespace nvhcq::llm {
namespace {

// The fewest bytes one metadata entry can take: key length (8), type (4), a 1-byte value.
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;
// The fewest bytes one tensor description can take: name length (8), n_dims (4),
// one dimension (8), type (4), offset (8).
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;

std::string quote(std::string_view s) {
  // Keys and names come from the file: show them safely and not unboundedly.
  std::string out = "'";
  const size_t n = std::min<size_t>(s.size(), 80);
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (n < s.size()) out += "...";
  return out + "'";
}

uint32_t byteswap32(uint32_t v) {
  return (v >> 24) | ((v >> 8) & 0xff00) | ((v << 8) & 0xff0000) | (v << 24);
}

GgufType read_type(GgufByteReader& in, const std::string& what) {
  const uint32_t id = in.read<uint32_t>("type of " + what);
  auto type = gguf_type_from_id(id);
  if (!type) in.fail(what + " has unknown value type id " + std::to_string(id));
  return *type;
}

void check_bool(GgufByteReader& in, uint8_t b, const std::string& what) {
  if (b > 1) in.fail(what + " holds bool byte " + std::to_string(b) + " (expected 0 or 1)");
}

GgufValue read_scalar(GgufByteReader& in, GgufType type, const std::string& what) {
  switch (type) {
    case GgufType::U8: return GgufValue::scalar(in.read<uint8_t>(what));
    case GgufType::I8: return GgufValue::scalar(in.read<int8_t>(what));
    case GgufType::U16: return GgufValue::scalar(in.read<uint16_t>(what));
    case GgufType::I16: return GgufValue::scalar(in.read<int16_t>(what));
    case GgufType::U32: return GgufValue::scalar(in.read<uint32_t>(what));
    case GgufType::I32: return GgufValue::scalar(in.read<int32_t>(what));
    case GgufType::U64: return GgufValue::scalar(in.read<uint64_t>(what));
    case GgufType::I64: return GgufValue::scalar(in.read<int64_t>(what));
    case GgufType::F32: return GgufValue::scalar(in.read<float>(what));
    case GgufType::F64: return GgufValue::scalar(in.read<double>(what));
    case GgufType::BOOL: {
      const uint8_t b = in.read<uint8_t>(what);
      check_bool(in, b, what);
      return GgufValue::scalar(b != 0);
    }
    case GgufType::STRING: return GgufValue::string(in.read_string(what));
    case GgufType::ARRAY: break;
  }
  in.fail(what + ": internal error, not a scalar type");
}

GgufValue read_array(GgufByteReader& in, const std::string& what) {
  const GgufType element = read_type(in, "elements of " + what);
  if (element == GgufType::ARRAY) {
    in.fail(what + " is an array of arrays, which GGUF readers do not support");
  }
  const uint64_t count = in.read<uint64_t>("element count of " + what);
  // Bound the count by the bytes left before allocating anything for it.
  const uint64_t min_size = gguf_type_min_encoded_size(element);
  if (count > in.remaining() / min_size) {
    in.fail(what + " claims " + std::to_string(count) + " " +
            std::string(gguf_type_name(element)) + " elements, more than the " +
            std::to_string(in.remaining()) + " bytes left in the file can hold");
  }
  const std::string element_what = "an element of " + what;
  if (element == GgufType::STRING) {
    std::vector<std::string> strings;
    strings.reserve(count);
    for (uint64_t i = 0; i < count; ++i) strings.push_back(in.read_string(element_what));
    return GgufValue::string_array(std::move(strings));
  }
  auto raw = in.read_bytes(count * min_size, "elements of " + what);
  if (element == GgufType::BOOL) {
    for (uint64_t i = 0; i < count; ++i) check_bool(in, raw[i], element_what);
  }
  return GgufValue::raw_array(element, count, std::vector<uint8_t>(raw.begin(), raw.end()));
}

}  // namespace

GgufFile GgufFile::open(const std::string& path) {
  GgufFile file;
  file.name_ = path;
  file.mapping_ = std::make_unique<MappedFile>(MappedFile::open(path));
  file.bytes_ = file.mapping_->bytes();
  file.parse();
  return file;
}

GgufFile GgufFile::from_bytes(std::span<const uint8_t> bytes, std::string name) {
  GgufFile file;
  file.name_ = std::move(name);
  file.bytes_ = bytes;
  file.parse();
  return file;
}

GgufFile GgufFile::from_owned_bytes(std::vector<uint8_t> bytes, std::string name) {
  GgufFile file;
  file.name_ = std::move(name);
  file.owned_ = std::move(bytes);
  file.bytes_ = file.owned_;
  file.parse();
  return file;
}

void GgufFile::parse() {
  try {
    GgufByteReader in(bytes_);
    if (in.size() < 4) {
      in.fail("not a GGUF file: only " + std::to_string(in.size()) + " bytes long");
    }
    auto magic = in.read_bytes(4, "magic");
    if (std::memcmp(magic.data(), kGgufMagic, 4) != 0) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%02x %02x %02x %02x", magic[0], magic[1], magic[2],
                    magic[3]);
      in.fail(std::string("not a GGUF file: it starts with bytes ") + buf +
              ", not \"GGUF\"");
    }
    version_ = in.read<uint32_t>("version");
    if (version_ < kGgufMinVersion || version_ > kGgufMaxVersion) {
      const uint32_t swapped = byteswap32(version_);
      if (swapped >= 1 && swapped <= kGgufMaxVersion) {
        in.fail("big-endian GGUF files are not supported (version " + std::to_string(swapped) +
                ")");
      }
      if (version_ == 1) in.fail("GGUF version 1 is not supported; convert the model again");
      in.fail("GGUF version " + std::to_string(version_) + " is not supported (versions " +
              std::to_string(kGgufMinVersion) + " and " + std::to_string(kGgufMaxVersion) +
              " are)");
    }
    const uint64_t n_tensors = in.read<uint64_t>("tensor count");
    const uint64_t n_kv = in.read<uint64_t>("metadata count");
    if (n_kv > in.remaining() / kMinKvBytes) {
      in.fail("metadata count " + std::to_string(n_kv) + " is impossible in a file of " +
              std::to_string(in.size()) + " bytes");
    }
    if (n_tensors > (in.remaining() - n_kv * kMinKvBytes) / kMinTensorInfoBytes) {
      in.fail("tensor count " + std::to_string(n_tensors) + " is impossible in a file of " +
              std::to_string(in.size()) + " bytes");
    }

    for (uint64_t i = 0; i < n_kv; ++i) {
      std::string key = in.read_string("key of metadata entry " + std::to_string(i));
      const std::string what = "metadata " + quote(key);
      if (metadata_.contains(key)) in.fail("duplicate " + what);
      const GgufType type = read_type(in, what);
      GgufValue value = type == GgufType::ARRAY ? read_array(in, what) : read_scalar(in, type, what);
      metadata_.set(std::move(key), std::move(value));
    }

    alignment_ = kGgufDefaultAlignment;
    if (const GgufValue* a = metadata_.find(kGgufAlignmentKey)) {
      if (a->type() != GgufType::U32) {
        in.fail(std::string(kGgufAlignmentKey) + " is " + std::string(gguf_type_name(a->type())) +
                ", expected u32");
      }
      const uint32_t align = a->as_int<uint32_t>();
      if (align == 0 || (align & (align - 1)) != 0) {
        in.fail(std::string(kGgufAlignmentKey) + " is " + std::to_string(align) +
                ", expected a power of two");
      }
      alignment_ = align;
    }

    tensors_.reserve(n_tensors);
    for (uint64_t i = 0; i < n_tensors; ++i) {
      GgufTensorInfo t;
      t.name = in.read_string("name of tensor " + std::to_string(i));
      const std::string what = "tensor " + quote(t.name);
      if (tensor_index_.count(t.name)) in.fail("duplicate " + what);
      const uint32_t n_dims = in.read<uint32_t>("dimension count of " + what);
      if (n_dims == 0 || n_dims > kGgufMaxDims) {
        in.fail(what + " has " + std::to_string(n_dims) + " dimensions (1 to " +
                std::to_string(kGgufMaxDims) + " allowed)");
      }
      t.dims.resize(n_dims);
      for (uint32_t d = 0; d < n_dims; ++d) {
        t.dims[d] = in.read<uint64_t>("dimension " + std::to_string(d) + " of " + what);
      }
      const uint32_t type_id = in.read<uint32_t>("type of " + what);
      if (!ggml_type_traits(type_id)) {
        in.fail(what + " has unknown ggml type id " + std::to_string(type_id));
      }
      t.type = static_cast<GgmlType>(type_id);
      t.offset = in.read<uint64_t>("data offset of " + what);
      gguf_tensor_size(t.name, t.type, t.dims, &t.n_elements, &t.n_bytes);
      if (t.offset % alignment_ != 0) {
        in.fail(what + " data offset " + std::to_string(t.offset) +
                " is not a multiple of the alignment " + std::to_string(alignment_));
      }
      tensor_index_.emplace(t.name, tensors_.size());
      tensors_.push_back(std::move(t));
    }

    // The data section starts at the next multiple of the alignment. A file with no
    // tensors may end right after its metadata, without that padding.
    const uint64_t end = in.offset();
    data_offset_ = end + (alignment_ - end % alignment_) % alignment_;
    if (tensors_.empty()) {
      data_offset_ = std::min<uint64_t>(data_offset_, in.size());
    } else if (data_offset_ > in.size()) {
      in.fail("file truncated: tensor data should start at offset " +
              std::to_string(data_offset_) + " but the file has " + std::to_string(in.size()) +
              " bytes");
    }
    const uint64_t data_size = in.size() - data_offset_;
    for (const auto& t : tensors_) {
      if (t.offset > data_size || t.n_bytes > data_size - t.offset) {
        in.fail("tensor " + quote(t.name) + " data [" + std::to_string(t.offset) + ", " +
                std::to_string(t.offset) + " + " + std::to_string(t.n_bytes) +
                ") lies outside the data section of " + std::to_string(data_size) +
                " bytes (file truncated?)");
      }
    }
    std::vector<size_t> order(tensors_.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return tensors_[a].offset < tensors_[b].offset;
    });
    const GgufTensorInfo* prev = nullptr;
    for (size_t idx : order) {
      const GgufTensorInfo& t = tensors_[idx];
      if (t.n_bytes == 0) continue;
      if (prev != nullptr && t.offset < prev->offset + prev->n_bytes) {
        in.fail("tensors " + quote(prev->name) + " and " + quote(t.name) +
                " overlap in the data section (offsets " + std::to_string(prev->offset) + " and " +
                std::to_string(t.offset) + ")");
      }
      prev = &t;
    }
  } catch (const FormatError& e) {
    throw FormatError(name_ + ": " + e.message());
  }
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const GgufTensorInfo& GgufFile::tensor_info(std::string_view name) const {
  const GgufTensorInfo* t = find_tensor(name);
  if (t == nullptr) throw FormatError(name_ + ": missing tensor '" + std::string(name) + "'");
  return *t;
}

std::span<const uint8_t> GgufFile::tensor_data(const GgufTensorInfo& info) const {
  return bytes_.subspan(data_offset_ + info.offset, info.n_bytes);
}

GgufTensorView GgufFile::tensor(std::string_view name) const {
  const GgufTensorInfo& info = tensor_info(name);
  return {&info, tensor_data(info)};
}

void GgufFile::will_need(const GgufTensorInfo& info) const {
  if (mapping_) mapping_->will_need(data_offset_ + info.offset, info.n_bytes);
}

}  // namespace nvhcq::llm
