#pragma once
// A whole file mapped read-only into memory. Model weights are used in place from
// this mapping, so a multi-GB model is never copied into the heap; pages the model
// does not touch are never read from disk.

#include <cstdint>
#include <span>
#include <string>

namespace nvhcq::llm {

class MappedFile {
 public:
  // Maps `path`; throws nvhcq::Error naming the path and the failing call.
  static MappedFile open(const std::string& path);

  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Hints that [offset, offset + length) will be read soon (a prefetch).
  void will_need(uint64_t offset, uint64_t length) const;

 private:
  void release();

  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  std::string path_;
};

}  // namespace nvhcq::llm
