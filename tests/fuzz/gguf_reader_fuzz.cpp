// libFuzzer target for the GGUF reader: any byte string must either parse or be a
// FormatError; nothing else (a crash, a sanitizer report, another exception, a
// huge allocation caught by -malloc_limit_mb) is allowed. A parsed file is then
// walked completely, every accessor exercised, so that what the parser accepted
// is also safe to use.

#include <cstddef>
#include <cstdint>
#include <span>

#include "base/error.h"
#include "llm/gguf/gguf_file.h"

namespace {

using nvhcq::FormatError;
using nvhcq::llm::GgufFile;
using nvhcq::llm::GgufType;
using nvhcq::llm::GgufValue;

// Reads a value through every typed accessor; type mismatches are FormatErrors.
uint64_t exercise(const GgufValue& v, std::string_view key) {
  uint64_t sink = v.size() + v.encoded_size() + v.to_display_string().size();
  auto attempt = [&](auto&& read) {
    try {
      sink += static_cast<uint64_t>(read());
    } catch (const FormatError&) {
    }
  };
  attempt([&] { return v.as_int<uint32_t>(key); });
  attempt([&] { return v.as_int<int64_t>(key); });
  attempt([&] { return v.as_int<int8_t>(key); });
  attempt([&] { return v.as_float(key) != 0.0; });
  attempt([&] { return v.as_bool(key); });
  attempt([&] { return v.as_string(key).size(); });
  attempt([&] { return v.as_strings(key).size(); });
  attempt([&] { return v.as_array<int32_t>(key).size(); });
  attempt([&] { return v.as_array<uint64_t>(key).size(); });
  attempt([&] { return v.as_array<float>(key).size(); });
  attempt([&] { return v.as_array<bool>(key).size(); });
  std::vector<uint8_t> encoded;
  v.encode(encoded);
  sink += encoded.size() == v.encoded_size();
  return sink;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    GgufFile file = GgufFile::from_bytes(std::span<const uint8_t>(data, size), "fuzz");
    volatile uint64_t sink = file.alignment() + file.data_offset();
    for (const auto& [key, value] : file.metadata().entries()) sink = sink + exercise(value, key);
    for (const auto& info : file.tensors()) {
      auto bytes = file.tensor_data(info);
      // Touch both ends of every tensor: ASan reports any view outside the input.
      if (!bytes.empty()) sink = sink + bytes.front() + bytes.back();
      sink = sink + (file.find_tensor(info.name) == &info) + info.shape_string().size();
    }
  } catch (const FormatError&) {
    // Rejected cleanly: the expected outcome for most inputs.
  }
  return 0;
}
