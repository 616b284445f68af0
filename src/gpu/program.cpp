#include "gpu/program.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "gpu/device.h"
#include "gpu/hw/barrier.h"

namespace nvhcq::gpu {
namespace {

uint64_t round_up(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}

}  // namespace

Program::Program(Device& device, std::span<const uint8_t> cubin_bytes, const std::string& name)
    : device_(&device), template_(*device.arch().qmd) {
  Cubin cubin(cubin_bytes);
  kernel_ = cubin.kernel(name);
  const hw::ArchParams& arch = device.arch();
  if (cubin.sm_arch() != 0 && device.info().sm_version != 0) {
    uint32_t want =
        ((device.info().sm_version >> 8) & 0xff) * 10 + (device.info().sm_version & 0xff);
    if (cubin.sm_arch() != want) {
      throw Error("CUBIN for sm_" + std::to_string(cubin.sm_arch()) + " cannot run on this " +
                  device.info().arch() + " GPU");
    }
  }

  image_ = device.code_heap().alloc(cubin.image().size());
  std::vector<uint8_t> image = cubin.relocated_image(image_.va());
  std::memcpy(image_.cpu(), image.data(), image.size());
  hw::flush_writes_before_doorbell();
  device.note_code_upload();
  device.ensure_local_memory(kernel_.local_bytes_per_thread + arch.stack_reserved_bytes);

  param_base_ = kernel_.param_base != 0 ? kernel_.param_base : arch.default_param_base;
  uint32_t regs = std::max<uint32_t>(kernel_.registers, 1);
  uint32_t per_warp = static_cast<uint32_t>(round_up(regs * 32ull, arch.register_alloc_unit));
  max_threads_ = std::min<uint32_t>(arch.max_threads_per_block,
                                    (arch.registers_per_sm / per_warp) / 4 * 4 * 32);
  if (kernel_.max_threads != 0) max_threads_ = std::min(max_threads_, kernel_.max_threads);

  const hw::QmdLayout& l = *arch.qmd;
  Qmd& q = template_;
  q.set(l.qmd_major_version, l.major_version);
  q.set(l.qmd_minor_version, 0);
  const uint32_t* cluster = kernel_.cluster_dims;
  if (cluster[0] * cluster[1] * cluster[2] > 1) {
    if (!l.gpc_cga_width.present()) {
      throw Error("kernel " + name +
                  " is compiled for thread-block clusters, which this GPU's QMD cannot launch");
    }
    // The grid fields then count clusters (queue.cpp divides).
    q.set(l.qmd_type, hw::kQmdTypeGridGpcCga);
    q.set(l.gpc_cga_width, cluster[0]);
    q.set(l.gpc_cga_height, cluster[1]);
    q.set(l.gpc_cga_depth, cluster[2]);
    q.set(l.cga_cta_distribution_mode, hw::kCgaCtaDistributionMulticast);
  } else {
    q.set(l.qmd_type, hw::kQmdTypeGridCta);
  }
  q.set(l.api_visible_call_limit, hw::kApiVisibleCallLimitNoCheck);
  q.set(l.sampler_index, 0);
  q.set(l.sm_global_caching_enable, 1);
  // Every launch starts with clean L1 data and constant caches: buffers and
  // argument memory are rewritten by the CPU and the copy engine between launches.
  for (hw::QmdField f : l.launch_cache_invalidations()) q.set(f, 1);
  q.set_program_address(code_va());
  // As libcuda does: without it every SM misses its way through the code of a
  // kernel whose predecessor evicted it; pp512 on the H200 was 7-21% lower, and
  // below the same CUBINs on CUDA (docs/perf-notes.md).
  q.set_program_prefetch(code_va(), kernel_.text_size);
  q.set(l.register_count, regs);
  // A kernel using named barriers 1.. must be granted them (an id past the
  // count is an Illegal Instruction Parameter fault).
  q.set(l.barrier_count, std::max<uint32_t>(1, kernel_.barriers));
  q.set(l.sass_version, arch.sass_version);
  q.set(l.cwd_membar_type, hw::kCwdMembarTypeL1Sysmembar);
  for (const auto& [bank, where] : kernel_.constant_banks) {
    if (bank >= 8) throw Error("kernel " + name + " uses constant bank " + std::to_string(bank));
    q.set_constant_buffer(bank, image_.va() + where.first, static_cast<uint32_t>(where.second));
  }
}

Program Program::from_source(Device& device, const std::string& source, const std::string& name,
                             const std::string& kernel, compile::CompileOptions options) {
  if (options.arch.empty() || options.arch == "sm_90") options.arch = device.info().arch();
  auto module = compile::compile(source, name, options);
  return Program(device, module.cubin, kernel);
}

Program Program::embedded(Device& device, const std::string& file, const std::string& kernel,
                          compile::CompileOptions options) {
  if (options.arch.empty() || options.arch == "sm_90") options.arch = device.info().arch();
  auto module = compile::compile_embedded(file, options);
  return Program(device, module.cubin, kernel);
}

uint32_t Program::cbuf0_bytes() const {
  return static_cast<uint32_t>(round_up(param_base_ + kernel_.param_bytes, 16));
}

std::vector<uint8_t> Program::pack(const KernelArgs& args) const {
  std::vector<uint8_t> out(kernel_.param_bytes, 0);
  const auto& given = args.args();
  if (!kernel_.param_sizes.empty()) {
    if (given.size() != kernel_.param_sizes.size()) {
      throw Error("kernel " + kernel_.name + " takes " +
                  std::to_string(kernel_.param_sizes.size()) + " arguments, got " +
                  std::to_string(given.size()));
    }
    for (size_t i = 0; i < given.size(); ++i) {
      if (given[i].size != kernel_.param_sizes[i]) {
        throw Error("argument " + std::to_string(i) + " of kernel " + kernel_.name + " is " +
                    std::to_string(kernel_.param_sizes[i]) + " bytes, got " +
                    std::to_string(given[i].size));
      }
      std::memcpy(out.data() + kernel_.param_offsets[i], given[i].bytes, given[i].size);
    }
    return out;
  }
  // No per-parameter info: lay arguments out in order at their natural alignment.
  size_t off = 0;
  for (const auto& a : given) {
    size_t align = std::min<uint32_t>(a.size, 8);
    off = (off + align - 1) / align * align;
    if (off + a.size > out.size()) {
      throw Error("arguments overrun the " + std::to_string(out.size()) +
                  "-byte parameter block of " + kernel_.name);
    }
    std::memcpy(out.data() + off, a.bytes, a.size);
    off += a.size;
  }
  return out;
}

uint32_t Program::shared_bytes(const LaunchDims& dims) const {
  // Every CTA gets the reserved bytes; sm_90 compilers already count them in the
  // kernel's .nv.shared section, earlier ones do not.
  const auto& arch = device_->arch();
  uint32_t base = arch.shared_section_includes_reserved
                      ? std::max(kernel_.static_shared_bytes, arch.reserved_shared_bytes)
                      : kernel_.static_shared_bytes + arch.reserved_shared_bytes;
  return static_cast<uint32_t>(round_up(uint64_t{base} + dims.dynamic_shared_bytes, 256));
}

void Program::check_launch(const LaunchDims& d) const {
  const auto& a = device_->arch();
  uint64_t threads = uint64_t{d.block[0]} * d.block[1] * d.block[2];
  auto dims = [&] {
    return "grid (" + std::to_string(d.grid[0]) + "," + std::to_string(d.grid[1]) + "," +
           std::to_string(d.grid[2]) + "), block (" + std::to_string(d.block[0]) + "," +
           std::to_string(d.block[1]) + "," + std::to_string(d.block[2]) + ")";
  };
  if (threads == 0 || d.grid[0] == 0 || d.grid[1] == 0 || d.grid[2] == 0) {
    throw Error("kernel " + kernel_.name + ": empty launch " + dims());
  }
  if (d.block[0] > a.max_block_x || d.block[1] > a.max_block_y || d.block[2] > a.max_block_z ||
      threads > max_threads_) {
    throw Error("kernel " + kernel_.name + " can run at most " + std::to_string(max_threads_) +
                " threads per block (it uses " + std::to_string(kernel_.registers) +
                " registers); asked for " + dims());
  }
  if (d.grid[0] > a.max_grid_x || d.grid[1] > a.max_grid_y || d.grid[2] > a.max_grid_z) {
    throw Error("kernel " + kernel_.name + ": grid too large: " + dims());
  }
  for (int i = 0; i < 3; ++i) {
    if (d.grid[i] % kernel_.cluster_dims[i] != 0) {
      throw Error("kernel " + kernel_.name + " runs in clusters of (" +
                  std::to_string(kernel_.cluster_dims[0]) + "," +
                  std::to_string(kernel_.cluster_dims[1]) + "," +
                  std::to_string(kernel_.cluster_dims[2]) +
                  ") blocks; its grid must be a multiple: " + dims());
    }
    if (kernel_.required_threads[i] != 0 && kernel_.required_threads[i] != d.block[i]) {
      throw Error("kernel " + kernel_.name + " requires a block of exactly (" +
                  std::to_string(kernel_.required_threads[0]) + "," +
                  std::to_string(kernel_.required_threads[1]) + "," +
                  std::to_string(kernel_.required_threads[2]) + "); got " + dims());
    }
  }
  uint64_t user_shared =
      uint64_t{shared_bytes(d)} - std::min(shared_bytes(d), a.reserved_shared_bytes);
  if (user_shared > a.max_shared_per_block) {
    throw Error("kernel " + kernel_.name + " asks for " + std::to_string(user_shared) +
                " bytes of shared memory; at most " + std::to_string(a.max_shared_per_block));
  }
}

}  // namespace nvhcq::gpu
