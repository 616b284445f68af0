#include "gpu/qmd.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"

namespace nvhcq::gpu {

void write_bits(uint8_t* base, hw::QmdField f, uint64_t value) {
  uint32_t width = f.hi - f.lo + 1u;
  if (width < 64 && (value >> width) != 0) {
    throw Error("value " + std::to_string(value) + " does not fit the " + std::to_string(width) +
                "-bit QMD field at bit " + std::to_string(f.lo));
  }
  for (uint32_t bit = 0; bit < width;) {
    uint32_t pos = f.lo + bit;
    uint32_t word_index = pos / 32, shift = pos % 32;
    uint32_t take = std::min(32u - shift, width - bit);
    uint32_t mask = (take == 32 ? 0xffffffffu : ((1u << take) - 1u)) << shift;
    uint32_t word;
    std::memcpy(&word, base + word_index * 4, 4);
    word = (word & ~mask) | ((static_cast<uint32_t>(value >> bit) << shift) & mask);
    std::memcpy(base + word_index * 4, &word, 4);
    bit += take;
  }
}

uint64_t read_bits(const uint8_t* base, hw::QmdField f) {
  uint32_t width = f.hi - f.lo + 1u;
  uint64_t value = 0;
  for (uint32_t bit = 0; bit < width;) {
    uint32_t pos = f.lo + bit;
    uint32_t word_index = pos / 32, shift = pos % 32;
    uint32_t take = std::min(32u - shift, width - bit);
    uint32_t word;
    std::memcpy(&word, base + word_index * 4, 4);
    uint64_t part = (word >> shift) & (take == 32 ? 0xffffffffu : ((1u << take) - 1u));
    value |= part << bit;
    bit += take;
  }
  return value;
}

Qmd::Qmd(const hw::QmdLayout& layout) : layout_(&layout) {}

namespace {

// A field must lie inside the QMD and hold at most 64 bits: write_bits and
// read_bits trust their caller.
void check_field(hw::QmdField f, size_t size_bytes) {
  if (f.lo > f.hi || f.hi >= size_bytes * 8 || f.hi - f.lo >= 64) {
    throw Error("QMD field [" + std::to_string(f.hi) + ":" + std::to_string(f.lo) + "] lies outside the " +
                std::to_string(size_bytes) + "-byte QMD");
  }
}

}  // namespace

void Qmd::set(hw::QmdField field, uint64_t value) {
  if (!field.present()) return;  // this layout has no such field
  check_field(field, size());
  write_bits(bytes_.data(), field, value);
}

uint64_t Qmd::get(hw::QmdField field) const {
  if (!field.present()) return 0;
  check_field(field, size());
  return read_bits(bytes_.data(), field);
}

void Qmd::set_constant_buffer(uint32_t index, uint64_t va, uint32_t size_bytes) {
  const auto& l = *layout_;
  if (index >= kConstantBuffers) {
    throw Error("constant buffer " + std::to_string(index) + " does not exist (a QMD has " +
                std::to_string(kConstantBuffers) + ")");
  }
  if (l.cbuf_addr_shifted6) {
    if (va % 64 != 0) throw Error("constant buffer address must be 64-byte aligned");
    uint64_t s = va >> 6;
    set(l.cbuf_addr_lower.at(index), s & 0xffffffffu);
    set(l.cbuf_addr_upper.at(index), s >> 32);
  } else {
    if (va % 256 != 0) throw Error("constant buffer address must be 256-byte aligned");
    set(l.cbuf_addr_lower.at(index), va & 0xffffffffu);
    set(l.cbuf_addr_upper.at(index), va >> 32);
  }
  set(l.cbuf_size_shifted4.at(index), (size_bytes + 15) / 16);
  set(l.cbuf_valid.at(index), 1);
  set(l.cbuf_invalidate.at(index), 1);
}

void Qmd::set_program_address(uint64_t va) {
  set(layout_->program_address_lower, va & 0xffffffffu);
  set(layout_->program_address_upper, va >> 32);
}

void Qmd::set_program_prefetch(uint64_t va, uint64_t bytes) {
  const auto& l = *layout_;
  if (!l.program_prefetch_size.present()) return;
  constexpr uint64_t kBlock = 256;
  const uint64_t first = va / kBlock, blocks = (va + bytes + kBlock - 1) / kBlock - first;
  const uint64_t most = (uint64_t{1} << (l.program_prefetch_size.hi - l.program_prefetch_size.lo + 1)) - 1;
  set(l.program_prefetch_addr_lower_shifted, first & 0xffffffffu);
  set(l.program_prefetch_addr_upper_shifted, first >> 32);
  set(l.program_prefetch_size, std::min(blocks, most));
}

void Qmd::set_grid(uint32_t x, uint32_t y, uint32_t z) {
  set(layout_->grid_width, x);
  set(layout_->grid_height, y);
  set(layout_->grid_depth, z);
}

void Qmd::set_block(uint32_t x, uint32_t y, uint32_t z) {
  set(layout_->cta_thread_dimension0, x);
  set(layout_->cta_thread_dimension1, y);
  set(layout_->cta_thread_dimension2, z);
}

void Qmd::chain_to(uint64_t next_qmd_va) {
  if (next_qmd_va % 256 != 0) throw Error("a chained QMD must be 256-byte aligned");
  set(layout_->dependent_qmd0_pointer, next_qmd_va >> 8);
  set(layout_->dependent_qmd0_action, hw::kDependentQmdActionSchedule);
  set(layout_->dependent_qmd0_prefetch, 1);
  set(layout_->dependent_qmd0_enable, 1);
}

void Qmd::set_release(uint64_t signal_va, uint64_t value) {
  const auto& l = *layout_;
  set(l.release0_address_lower, signal_va & 0xffffffffu);
  set(l.release0_address_upper, signal_va >> 32);
  set(l.release0_payload_lower, value & 0xffffffffu);
  set(l.release0_payload_upper, value >> 32);
  set(l.release0_payload64b, 1);
  set(l.release0_structure_size, hw::kReleaseStructureSizeFourWords);
  set(l.release0_enable, 1);
}

}  // namespace nvhcq::gpu
