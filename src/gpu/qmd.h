#pragma once
// A QMD in the making: raw bytes plus the layout that names its bit fields.

#include <array>
#include <cstddef>
#include <cstdint>

#include "gpu/hw/qmd_layout.h"

namespace nvhcq::gpu {

class Qmd {
 public:
  static constexpr size_t kMaxBytes = 384;
  static constexpr uint32_t kConstantBuffers = 8;

  explicit Qmd(const hw::QmdLayout& layout);
  const hw::QmdLayout& layout() const { return *layout_; }
  const uint8_t* data() const { return bytes_.data(); }
  size_t size() const { return layout_->size_bytes; }

  // Writes `value` into a field; throws Error if it does not fit the field's width
  // or the field does not lie inside this QMD.
  void set(hw::QmdField field, uint64_t value);
  uint64_t get(hw::QmdField field) const;

  void set_constant_buffer(uint32_t index, uint64_t gpu_va, uint32_t size_bytes);
  void set_program_address(uint64_t gpu_va);
  // Has the launch prefetch `bytes` of code from `gpu_va` (rounded out to
  // 256-byte blocks; a layout's size field caps how much).
  void set_program_prefetch(uint64_t gpu_va, uint64_t bytes);
  void set_grid(uint32_t x, uint32_t y, uint32_t z);
  void set_block(uint32_t x, uint32_t y, uint32_t z);
  // Makes this QMD schedule `next` (a QMD at a 256-byte aligned GPU VA) when it completes.
  void chain_to(uint64_t next_qmd_va);
  // Makes the QMD write a 64-bit semaphore (value, then timestamp) when it completes.
  void set_release(uint64_t signal_va, uint64_t value);

 private:
  const hw::QmdLayout* layout_;
  std::array<uint8_t, kMaxBytes> bytes_{};
};

// Reads/writes bit ranges [hi:lo] of a buffer seen as little-endian 32-bit words.
void write_bits(uint8_t* base, hw::QmdField field, uint64_t value);
uint64_t read_bits(const uint8_t* base, hw::QmdField field);

}  // namespace nvhcq::gpu
