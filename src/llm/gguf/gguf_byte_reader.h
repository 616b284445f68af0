#pragma once
// A cursor over untrusted bytes: every read checks the bytes that remain first and
// throws FormatError naming what was being read and where, so a truncated or
// corrupt file can never make the parser read past its end.

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "base/error.h"

namespace nvhcq::llm {

class GgufByteReader {
 public:
  explicit GgufByteReader(std::span<const uint8_t> data) : data_(data) {}

  uint64_t offset() const { return pos_; }
  uint64_t remaining() const { return data_.size() - pos_; }
  uint64_t size() const { return data_.size(); }

  template <typename T>
  T read(std::string_view what) {
    require(sizeof(T), what);
    T v;
    std::memcpy(&v, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  std::span<const uint8_t> read_bytes(uint64_t n, std::string_view what) {
    require(n, what);
    auto out = data_.subspan(pos_, n);
    pos_ += n;
    return out;
  }

  // A GGUF string: u64 length then that many bytes. The length is checked against
  // the bytes that remain before anything is allocated.
  std::string read_string(std::string_view what) {
    const uint64_t n = read<uint64_t>(what);
    if (n > remaining()) {
      fail("length " + std::to_string(n) + " of " + std::string(what) + " at offset " +
           std::to_string(pos_ - 8) + " exceeds the " + std::to_string(remaining()) +
           " bytes left in the file");
    }
    std::string s(reinterpret_cast<const char*>(data_.data() + pos_), n);
    pos_ += n;
    return s;
  }

  [[noreturn]] void fail(const std::string& message) const { throw FormatError(message); }

 private:
  void require(uint64_t n, std::string_view what) const {
    if (n > remaining()) {
      fail("file truncated: " + std::string(what) + " needs " + std::to_string(n) +
           " bytes at offset " + std::to_string(pos_) + ", only " + std::to_string(remaining()) +
           " remain");
    }
  }

  std::span<const uint8_t> data_;
  uint64_t pos_ = 0;
};

}  // namespace nvhcq::llm
