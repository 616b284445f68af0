#include "gpu/qmd.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "gpu/hw/arch.h"

namespace nvhcq::gpu {
namespace {

TEST(QmdBits, WritesAndReadsAcrossWordBoundaries) {
  uint8_t buf[16] = {};
  write_bits(buf, hw::QmdField{40, 25}, 0xabcd);
  EXPECT_EQ(read_bits(buf, hw::QmdField{40, 25}), 0xabcdu);
  write_bits(buf, hw::QmdField{95, 64}, 0xdeadbeef);
  EXPECT_EQ(read_bits(buf, hw::QmdField{95, 64}), 0xdeadbeefu);
  EXPECT_EQ(read_bits(buf, hw::QmdField{40, 25}), 0xabcdu) << "neighbouring fields untouched";
  EXPECT_EQ(buf[3] >> 1, 0xcd >> 0 & 0x7f) << "bit 25 is bit 1 of byte 3";
  EXPECT_THROW(write_bits(buf, hw::QmdField{3, 0}, 16), Error) << "16 needs 5 bits";
}

// Every field of a layout, for the overlap check.
std::vector<std::pair<const char*, hw::QmdField>> fields_of(const hw::QmdLayout& l) {
  std::vector<std::pair<const char*, hw::QmdField>> f = {
      {"major", l.qmd_major_version}, {"minor", l.qmd_minor_version}, {"type", l.qmd_type},
      {"call_limit", l.api_visible_call_limit}, {"sampler", l.sampler_index},
      {"caching", l.sm_global_caching_enable}, {"inv_th", l.invalidate_texture_header_cache},
      {"inv_ts", l.invalidate_texture_sampler_cache}, {"inv_td", l.invalidate_texture_data_cache},
      {"inv_sd", l.invalidate_shader_data_cache}, {"inv_i", l.invalidate_instruction_cache},
      {"inv_sc", l.invalidate_shader_constant_cache}, {"grid_w", l.grid_width},
      {"grid_h", l.grid_height}, {"grid_d", l.grid_depth}, {"cta0", l.cta_thread_dimension0},
      {"cta1", l.cta_thread_dimension1}, {"cta2", l.cta_thread_dimension2},
      {"regs", l.register_count}, {"barriers", l.barrier_count}, {"smem", l.shared_memory_size},
      {"smem_min", l.min_sm_config_shared_mem_size}, {"smem_max", l.max_sm_config_shared_mem_size},
      {"smem_target", l.target_sm_config_shared_mem_size},
      {"slm_low", l.shader_local_memory_low_size}, {"slm_high", l.shader_local_memory_high_size},
      {"prog_lo", l.program_address_lower}, {"prog_hi", l.program_address_upper},
      {"prefetch_lo", l.program_prefetch_addr_lower_shifted},
      {"prefetch_hi", l.program_prefetch_addr_upper_shifted},
      {"prefetch_size", l.program_prefetch_size},
      {"sass", l.sass_version}, {"membar", l.cwd_membar_type},
      {"dep_ptr", l.dependent_qmd0_pointer}, {"dep_en", l.dependent_qmd0_enable},
      {"dep_act", l.dependent_qmd0_action}, {"dep_pf", l.dependent_qmd0_prefetch},
      {"rel_en", l.release0_enable}, {"rel_lo", l.release0_address_lower},
      {"rel_hi", l.release0_address_upper}, {"rel_pl", l.release0_payload_lower},
      {"rel_ph", l.release0_payload_upper}, {"rel_64", l.release0_payload64b},
      {"rel_size", l.release0_structure_size}, {"cga_w", l.gpc_cga_width},
      {"cga_h", l.gpc_cga_height}, {"cga_d", l.gpc_cga_depth},
      {"cga_mode", l.cga_cta_distribution_mode}};
  for (uint32_t i = 0; i < 8; ++i) {
    f.push_back({"cb_lo", l.cbuf_addr_lower.at(i)});
    f.push_back({"cb_hi", l.cbuf_addr_upper.at(i)});
    f.push_back({"cb_size", l.cbuf_size_shifted4.at(i)});
    f.push_back({"cb_valid", l.cbuf_valid.at(i)});
    f.push_back({"cb_inv", l.cbuf_invalidate.at(i)});
  }
  return f;
}

void expect_no_overlap(const hw::QmdLayout& l) {
  auto f = fields_of(l);
  for (size_t a = 0; a < f.size(); ++a) {
    if (!f[a].second.present()) continue;
    EXPECT_LT(f[a].second.hi, l.size_bytes * 8) << f[a].first << " lies outside the QMD";
    EXPECT_LE(f[a].second.lo, f[a].second.hi) << f[a].first;
    for (size_t b = a + 1; b < f.size(); ++b) {
      if (!f[b].second.present()) continue;
      bool overlap = f[a].second.lo <= f[b].second.hi && f[b].second.lo <= f[a].second.hi;
      EXPECT_FALSE(overlap) << f[a].first << " overlaps " << f[b].first;
    }
  }
}

TEST(QmdLayouts, FieldsDoNotOverlap) {
  expect_no_overlap(hw::kQmdV03);
  expect_no_overlap(hw::kQmdV04);
}

TEST(QmdLayouts, HopperConstantBufferAddressIsShiftedBy6) {
  Qmd q(hw::kQmdV04);
  uint64_t va = 0x7598fa280000ull;
  q.set_constant_buffer(0, va, 0x218);
  EXPECT_EQ(q.get(hw::kQmdV04.cbuf_addr_lower.at(0)), (va >> 6) & 0xffffffffu);
  EXPECT_EQ(q.get(hw::kQmdV04.cbuf_addr_upper.at(0)), (va >> 6) >> 32);
  EXPECT_EQ(q.get(hw::kQmdV04.cbuf_size_shifted4.at(0)), (0x218u + 15) / 16);
  EXPECT_EQ(q.get(hw::kQmdV04.cbuf_valid.at(0)), 1u);
  EXPECT_THROW(q.set_constant_buffer(1, va + 8, 16), Error) << "must be 64-byte aligned";
}

TEST(QmdLayouts, AmpereConstantBufferAddressIsPlain) {
  Qmd q(hw::kQmdV03);
  q.set_constant_buffer(0, 0x12345600ull, 0x170);
  EXPECT_EQ(q.get(hw::kQmdV03.cbuf_addr_lower.at(0)), 0x12345600u);
  EXPECT_EQ(q.get(hw::kQmdV03.cbuf_size_shifted4.at(0)), 0x17u);
}

// Words 42 and 43 of the QMD libcuda 580 built on an H200 for a kernel whose
// code sits at 0x7f3bf77a0000 and which it prefetched 2,816 bytes of.
TEST(QmdLayouts, HopperProgramPrefetchMatchesLibcuda) {
  Qmd q(hw::kQmdV04);
  q.set_program_prefetch(0x7f3bf77a0000ull, 2816);
  uint32_t words[2];
  std::memcpy(words, q.data() + 42 * 4, sizeof(words));
  EXPECT_EQ(words[0], 0x3bf77a00u);
  EXPECT_EQ(words[1], 0x0016007fu);
}

TEST(QmdLayouts, ProgramPrefetchCoversTheCodeInWholeBlocks) {
  for (const hw::QmdLayout* l : {&hw::kQmdV03, &hw::kQmdV04}) {
    Qmd q(*l);
    q.set_program_prefetch(0x12345680ull, 0x200);  // 0x...5680 to 0x...5880: three 256-byte blocks
    EXPECT_EQ(q.get(l->program_prefetch_addr_lower_shifted), 0x123456u);
    EXPECT_EQ(q.get(l->program_prefetch_addr_upper_shifted), 0u);
    EXPECT_EQ(q.get(l->program_prefetch_size), 3u);
    q.set_program_prefetch(0x7f0000000000ull, 1ull << 20);
    EXPECT_EQ(q.get(l->program_prefetch_addr_upper_shifted), 0x7fu);
    EXPECT_EQ(q.get(l->program_prefetch_size), 0x1ffu) << "capped at what the field holds";
  }
}

TEST(QmdLayouts, ChainingPointsAtTheNextQmd) {
  for (const hw::QmdLayout* l : {&hw::kQmdV03, &hw::kQmdV04}) {
    Qmd q(*l);
    q.chain_to(0x10000200ull);
    EXPECT_EQ(q.get(l->dependent_qmd0_pointer), 0x100002u);
    EXPECT_EQ(q.get(l->dependent_qmd0_enable), 1u);
    EXPECT_EQ(q.get(l->dependent_qmd0_action), hw::kDependentQmdActionSchedule);
    EXPECT_THROW(q.chain_to(0x10000210ull), Error) << "QMDs are 256-byte aligned";
  }
}

TEST(QmdLayouts, GridAndBlockFieldsHoldTheirLimits) {
  const auto& hopper = hw::arch_params(0x900);
  Qmd q(*hopper.qmd);
  q.set_grid(hopper.max_grid_x, hopper.max_grid_y, hopper.max_grid_z);
  q.set_block(hopper.max_block_x, hopper.max_block_y, hopper.max_block_z);
  EXPECT_EQ(q.get(hopper.qmd->grid_width), hopper.max_grid_x);
  EXPECT_EQ(q.get(hopper.qmd->cta_thread_dimension2), hopper.max_block_z);
}

TEST(ArchParams, WindowsSitAtTheTopOfTheVaSpace) {
  auto tegra = hw::shader_windows(1ull << 40);
  EXPECT_EQ(tegra.local, 0xFD00000000ull) << "the seeds' Orin window addresses";
  EXPECT_EQ(tegra.shared, 0xFE00000000ull);
  auto rm = hw::shader_windows(0x1fffffb001000ull);
  EXPECT_EQ(rm.shared % (4ull << 30), 0u) << "Hopper needs a 4 GiB-aligned shared window";
  EXPECT_LT(rm.shared + hw::ShaderWindows::kSize, 0x1fffffb001000ull);
  EXPECT_THROW(hw::arch_params(0x700), Error);
  EXPECT_EQ(hw::arch_params(0x900).sass_version, 0x90u);
  EXPECT_EQ(hw::arch_params(0x807).sass_version, 0x87u);
}

}  // namespace
}  // namespace nvhcq::gpu
