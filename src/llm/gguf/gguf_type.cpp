#include "llm/gguf/gguf_type.h"

namespace nvhcq::llm {

std::optional<GgufType> gguf_type_from_id(uint32_t id) {
  if (id > static_cast<uint32_t>(GgufType::F64)) return std::nullopt;
  return static_cast<GgufType>(id);
}

std::string_view gguf_type_name(GgufType type) {
  switch (type) {
    case GgufType::U8: return "u8";
    case GgufType::I8: return "i8";
    case GgufType::U16: return "u16";
    case GgufType::I16: return "i16";
    case GgufType::U32: return "u32";
    case GgufType::I32: return "i32";
    case GgufType::F32: return "f32";
    case GgufType::BOOL: return "bool";
    case GgufType::STRING: return "string";
    case GgufType::ARRAY: return "array";
    case GgufType::U64: return "u64";
    case GgufType::I64: return "i64";
    case GgufType::F64: return "f64";
  }
  return "unknown";
}

size_t gguf_type_size(GgufType type) {
  switch (type) {
    case GgufType::U8:
    case GgufType::I8:
    case GgufType::BOOL: return 1;
    case GgufType::U16:
    case GgufType::I16: return 2;
    case GgufType::U32:
    case GgufType::I32:
    case GgufType::F32: return 4;
    case GgufType::U64:
    case GgufType::I64:
    case GgufType::F64: return 8;
    case GgufType::STRING:
    case GgufType::ARRAY: return 0;
  }
  return 0;
}

size_t gguf_type_min_encoded_size(GgufType type) {
  if (type == GgufType::STRING) return 8;
  if (type == GgufType::ARRAY) return 12;
  return gguf_type_size(type);
}

}  // namespace nvhcq::llm
