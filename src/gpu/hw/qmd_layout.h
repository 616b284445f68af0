#pragma once
// QMD (queue meta data: the compute launch descriptor) layouts, as bit ranges
// [hi:lo] over the QMD read as little-endian 32-bit words. V03 is Ampere and Ada
// (clc6c0qmd.h), V04 is Hopper (clcbc0qmd.h); the fields Hopper's public header
// leaves out (shared memory size and SM config) sit where Mesa NVK and the
// Blackwell header (clcec0qmd.h V04_01) put them. V04's program prefetch fields
// are where libcuda 580 writes them on an H200: the kernel's code address >> 8
// in word 42, then address >> 40 (17 bits) and the prefetch size in 256-byte
// units (growing with the kernel's code) in word 43.

#include <array>
#include <cstdint>

namespace nvhcq::gpu::hw {

struct QmdField {
  uint16_t hi = 0, lo = 0;
  constexpr bool present() const { return hi != 0 || lo != 0; }
};

// Fields that repeat per constant buffer i = base + i * stride.
struct QmdIndexedField {
  QmdField first;
  uint16_t stride = 0;
  constexpr QmdField at(uint32_t i) const {
    return QmdField{static_cast<uint16_t>(first.hi + i * stride),
                    static_cast<uint16_t>(first.lo + i * stride)};
  }
};

struct QmdLayout {
  uint32_t major_version;
  uint32_t size_bytes;
  bool cbuf_addr_shifted6;  // V04 stores constant buffer addresses >> 6
  QmdField qmd_major_version, qmd_minor_version, qmd_type;
  QmdField api_visible_call_limit, sampler_index, sm_global_caching_enable;
  QmdField invalidate_texture_header_cache, invalidate_texture_sampler_cache,
      invalidate_texture_data_cache, invalidate_shader_data_cache,
      invalidate_instruction_cache, invalidate_shader_constant_cache;
  QmdField grid_width, grid_height, grid_depth;
  QmdField cta_thread_dimension0, cta_thread_dimension1, cta_thread_dimension2;
  QmdField register_count, barrier_count;
  QmdField shared_memory_size, min_sm_config_shared_mem_size, max_sm_config_shared_mem_size,
      target_sm_config_shared_mem_size;
  QmdField shader_local_memory_low_size, shader_local_memory_high_size;
  QmdField program_address_lower, program_address_upper;
  // The scheduler fetches this much of the kernel's code into the instruction
  // caches as the launch starts, instead of each SM missing its way through it.
  QmdField program_prefetch_addr_lower_shifted, program_prefetch_addr_upper_shifted,
      program_prefetch_size;
  QmdField sass_version, cwd_membar_type;
  QmdField dependent_qmd0_pointer, dependent_qmd0_enable, dependent_qmd0_action,
      dependent_qmd0_prefetch;
  QmdField release0_enable, release0_address_lower, release0_address_upper,
      release0_payload_lower, release0_payload_upper, release0_payload64b,
      release0_structure_size;
  QmdIndexedField cbuf_addr_lower, cbuf_addr_upper, cbuf_size_shifted4, cbuf_valid,
      cbuf_invalidate;
  // The caches a launch drops as it starts when these bits are set: the
  // SMs' L1 data, texture and constant caches (program.cpp sets them in
  // every QMD, queue.cpp clears them where a launch keeps the caches).
  constexpr std::array<QmdField, 5> launch_cache_invalidations() const {
    return {invalidate_texture_header_cache, invalidate_texture_sampler_cache, invalidate_texture_data_cache,
            invalidate_shader_data_cache, invalidate_shader_constant_cache};
  }
  // Thread-block clusters (Hopper's "GPC CGA"s): a GRID_GPC_CGA launch counts
  // its grid in clusters of these dimensions. Absent before V04.
  QmdField gpc_cga_width, gpc_cga_height, gpc_cga_depth, cga_cta_distribution_mode;
};

// Field values shared by the layouts.
constexpr uint32_t kQmdTypeGridCta = 2;
constexpr uint32_t kQmdTypeGridGpcCga = 3;  // a grid of thread-block clusters
// The largest thread-block cluster Hopper runs (non-portable; 8 portable).
constexpr uint32_t kMaxClusterBlocks = 16;
// What libcuda 580 writes into a cluster launch's QMD on an H200 (found in its
// pushbuffer memory next to a plain launch's): the multicast distribution.
constexpr uint32_t kCgaCtaDistributionMulticast = 1;
constexpr uint32_t kApiVisibleCallLimitNoCheck = 1;
constexpr uint32_t kCwdMembarTypeL1Sysmembar = 1;
constexpr uint32_t kCwdMembarTypeL1Membar = 3;  // GPU scope: enough for a kernel that follows
constexpr uint32_t kDependentQmdActionSchedule = 1;
constexpr uint32_t kReleaseStructureSizeFourWords = 0;

constexpr QmdLayout kQmdV03 = {
    .major_version = 3,
    .size_bytes = 256,
    .cbuf_addr_shifted6 = false,
    .qmd_major_version = {583, 580},
    .qmd_minor_version = {579, 576},
    .qmd_type = {},
    .api_visible_call_limit = {378, 378},
    .sampler_index = {382, 382},
    .sm_global_caching_enable = {134, 134},
    .invalidate_texture_header_cache = {186, 186},
    .invalidate_texture_sampler_cache = {187, 187},
    .invalidate_texture_data_cache = {188, 188},
    .invalidate_shader_data_cache = {189, 189},
    .invalidate_instruction_cache = {190, 190},
    .invalidate_shader_constant_cache = {191, 191},
    .grid_width = {415, 384},
    .grid_height = {431, 416},
    .grid_depth = {463, 448},
    .cta_thread_dimension0 = {607, 592},
    .cta_thread_dimension1 = {623, 608},
    .cta_thread_dimension2 = {639, 624},
    .register_count = {656, 648},
    .barrier_count = {767, 763},
    .shared_memory_size = {561, 544},
    .min_sm_config_shared_mem_size = {567, 562},
    .max_sm_config_shared_mem_size = {574, 569},
    .target_sm_config_shared_mem_size = {662, 657},
    .shader_local_memory_low_size = {759, 736},
    .shader_local_memory_high_size = {1623, 1600},
    .program_address_lower = {1567, 1536},
    .program_address_upper = {1584, 1568},
    .program_prefetch_addr_lower_shifted = {287, 256},
    .program_prefetch_addr_upper_shifted = {1640, 1632},
    .program_prefetch_size = {1649, 1641},
    .sass_version = {1663, 1656},
    .cwd_membar_type = {369, 368},
    .dependent_qmd0_pointer = {511, 480},
    .dependent_qmd0_enable = {512, 512},
    .dependent_qmd0_action = {515, 513},
    .dependent_qmd0_prefetch = {516, 516},
    .release0_enable = {823, 823},
    .release0_address_lower = {799, 768},
    .release0_address_upper = {807, 800},
    .release0_payload_lower = {863, 832},
    .release0_payload_upper = {895, 864},
    .release0_payload64b = {829, 829},
    .release0_structure_size = {831, 830},
    .cbuf_addr_lower = {{1055, 1024}, 64},
    .cbuf_addr_upper = {{1072, 1056}, 64},
    .cbuf_size_shifted4 = {{1087, 1075}, 64},
    .cbuf_valid = {{640, 640}, 1},
    .cbuf_invalidate = {{1074, 1074}, 64},
};

constexpr QmdLayout kQmdV04 = {
    .major_version = 4,
    .size_bytes = 384,
    .cbuf_addr_shifted6 = true,
    .qmd_major_version = {583, 580},
    .qmd_minor_version = {579, 576},
    .qmd_type = {25, 23},
    .api_visible_call_limit = {568, 568},
    .sampler_index = {569, 569},
    .sm_global_caching_enable = {},
    .invalidate_texture_header_cache = {602, 602},
    .invalidate_texture_sampler_cache = {603, 603},
    .invalidate_texture_data_cache = {604, 604},
    .invalidate_shader_data_cache = {605, 605},
    .invalidate_instruction_cache = {606, 606},
    .invalidate_shader_constant_cache = {607, 607},
    .grid_width = {1055, 1024},
    .grid_height = {1071, 1056},
    .grid_depth = {1103, 1088},
    .cta_thread_dimension0 = {1167, 1152},
    .cta_thread_dimension1 = {1183, 1168},
    .cta_thread_dimension2 = {1191, 1184},
    .register_count = {1208, 1200},
    .barrier_count = {1215, 1211},
    .shared_memory_size = {601, 584},
    .min_sm_config_shared_mem_size = {613, 608},
    .max_sm_config_shared_mem_size = {619, 614},
    .target_sm_config_shared_mem_size = {625, 620},
    .shader_local_memory_low_size = {535, 512},
    .shader_local_memory_high_size = {567, 544},
    .program_address_lower = {1247, 1216},
    .program_address_upper = {1272, 1248},
    .program_prefetch_addr_lower_shifted = {1375, 1344},
    .program_prefetch_addr_upper_shifted = {1392, 1376},
    .program_prefetch_size = {1401, 1393},
    .sass_version = {543, 536},
    .cwd_membar_type = {1137, 1136},
    .dependent_qmd0_pointer = {479, 448},
    .dependent_qmd0_enable = {368, 368},
    .dependent_qmd0_action = {371, 369},
    .dependent_qmd0_prefetch = {372, 372},
    .release0_enable = {320, 320},
    .release0_address_lower = {671, 640},
    .release0_address_upper = {696, 672},
    .release0_payload_lower = {735, 704},
    .release0_payload_upper = {767, 736},
    .release0_payload64b = {332, 332},
    .release0_structure_size = {322, 321},
    .cbuf_addr_lower = {{1567, 1536}, 64},
    .cbuf_addr_upper = {{1586, 1568}, 64},
    .cbuf_size_shifted4 = {{1599, 1587}, 64},
    .cbuf_valid = {{416, 416}, 4},
    .cbuf_invalidate = {{419, 419}, 4},
    .gpc_cga_width = {2149, 2144},
    .gpc_cga_height = {2157, 2152},
    .gpc_cga_depth = {2165, 2160},
    .cga_cta_distribution_mode = {2207, 2207},
};

// The layout for a compute class, or nullptr when nvhcq has none.
const QmdLayout* qmd_layout_for_class(uint32_t compute_class);

}  // namespace nvhcq::gpu::hw
