#include "llm/gguf/gguf_file_writer.h"

#include <cerrno>
#include <cstdio>
#include <vector>

#include "base/error.h"

namespace nvhcq::llm {

GgufFileWriter::GgufFileWriter(const GgufWriter& plan, std::string path)
    : plan_(plan), path_(std::move(path)), tmp_path_(path_ + ".tmp") {
  file_ = std::fopen(tmp_path_.c_str(), "wb");
  check_errno(file_ != nullptr, "cannot create " + tmp_path_, "fopen");
  // Large sequential writes: a big buffer keeps the syscall count low.
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
  try {
    const std::vector<uint8_t> header = plan_.header_bytes();
    data_offset_ = header.size();
    put(header.data(), header.size());
  } catch (...) {
    // The destructor does not run for a constructor that throws: clean up here.
    close_file();
    std::remove(tmp_path_.c_str());
    throw;
  }
  // Zero-byte tensors at the start are complete already.
  while (tensor_ < plan_.tensors().size() && plan_.tensors()[tensor_].n_bytes == 0) ++tensor_;
}

GgufFileWriter::~GgufFileWriter() {
  if (!finished_) {
    close_file();
    std::remove(tmp_path_.c_str());
  }
}

const GgufTensorInfo* GgufFileWriter::current_tensor() const {
  return tensor_ < plan_.tensors().size() ? &plan_.tensors()[tensor_] : nullptr;
}

void GgufFileWriter::write(std::span<const uint8_t> bytes) {
  if (finished_) throw UsageError("GGUF file " + path_ + " is already finished");
  if (bytes.empty()) return;
  const GgufTensorInfo* t = current_tensor();
  if (t == nullptr) {
    throw UsageError("GGUF file " + path_ + ": " + std::to_string(bytes.size()) +
                     " bytes written after the last tensor");
  }
  if (bytes.size() > t->n_bytes - tensor_done_) {
    throw UsageError("tensor '" + t->name + "' has " + std::to_string(t->n_bytes - tensor_done_) +
                     " bytes left, got " + std::to_string(bytes.size()));
  }
  if (tensor_done_ == 0) pad_to(data_offset_ + t->offset);
  put(bytes.data(), bytes.size());
  tensor_done_ += bytes.size();
  while (current_tensor() != nullptr && tensor_done_ == current_tensor()->n_bytes) {
    ++tensor_;
    tensor_done_ = 0;
  }
}

void GgufFileWriter::write_tensor(std::string_view name, std::span<const uint8_t> bytes) {
  const GgufTensorInfo* t = current_tensor();
  if (t == nullptr || t->name != name || tensor_done_ != 0) {
    throw UsageError("tensor '" + std::string(name) + "' written out of order (expected '" +
                     (t ? t->name : std::string("<none>")) + "')");
  }
  if (bytes.size() != t->n_bytes) {
    throw UsageError("tensor '" + t->name + "' needs " + std::to_string(t->n_bytes) +
                     " bytes, got " + std::to_string(bytes.size()));
  }
  write(bytes);
}

void GgufFileWriter::finish() {
  if (finished_) return;
  if (const GgufTensorInfo* t = current_tensor()) {
    throw UsageError("GGUF file " + path_ + ": tensor '" + t->name + "' got " +
                     std::to_string(tensor_done_) + " of its " + std::to_string(t->n_bytes) +
                     " bytes");
  }
  pad_to(plan_.file_size());
  const bool flushed = std::fflush(file_) == 0;
  check_errno(flushed, "cannot write " + tmp_path_, "fflush");
  const int rc = std::fclose(file_);
  file_ = nullptr;
  check_errno(rc == 0, "cannot close " + tmp_path_, "fclose");
  check_errno(std::rename(tmp_path_.c_str(), path_.c_str()) == 0,
              "cannot rename " + tmp_path_ + " to " + path_, "rename");
  finished_ = true;
}

void GgufFileWriter::put(const void* data, size_t n) {
  if (n == 0) return;
  const size_t done = std::fwrite(data, 1, n, file_);
  check_errno(done == n, "cannot write " + tmp_path_, "fwrite");
  written_ += n;
}

void GgufFileWriter::pad_to(uint64_t file_offset) {
  static const uint8_t kZeros[64] = {};
  while (written_ < file_offset) {
    const uint64_t n = std::min<uint64_t>(sizeof(kZeros), file_offset - written_);
    put(kZeros, static_cast<size_t>(n));
  }
}

void GgufFileWriter::close_file() {
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
}

}  // namespace nvhcq::llm
