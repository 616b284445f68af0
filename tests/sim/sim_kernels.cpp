#include "sim/sim_kernels.h"

#include <cmath>
#include <map>
#include <mutex>

#include "base/error.h"
#include "compile/compiler.h"

namespace nvhcq::sim {
namespace {

// ---- the bodies of src/kernels/selftest.cu, launch by launch ----

// out[i] = a * i + b for i < n (the compiler contracts this into one FFMA).
void affine_fill(const KernelCall& k) {
  uint64_t out = k.param<uint64_t>(0);
  float a = k.param<float>(1), b = k.param<float>(2);
  uint64_t n = std::min<uint64_t>(k.param<uint32_t>(3), k.threads_x());
  std::vector<float> v(n);
  for (uint64_t i = 0; i < n; ++i)
    v[i] = std::fma(a, static_cast<float>(static_cast<uint32_t>(i)), b);
  k.memory->write_array(out, v);
}

void add_f32(const KernelCall& k) {
  uint64_t out = k.param<uint64_t>(0), x = k.param<uint64_t>(1), y = k.param<uint64_t>(2);
  uint64_t n = std::min<uint64_t>(k.param<uint32_t>(3), k.threads_x());
  auto xs = k.memory->read_array<float>(x, n);
  auto ys = k.memory->read_array<float>(y, n);
  for (uint64_t i = 0; i < n; ++i) xs[i] += ys[i];
  k.memory->write_array(out, xs);
}

void increment(const KernelCall& k) {
  uint64_t counter = k.param<uint64_t>(0);
  uint32_t v = k.memory->read_array<uint32_t>(counter, 1)[0];
  k.memory->write_array(counter, std::vector<uint32_t>{v + 1});
}

void empty_kernel(const KernelCall&) {}

void report_geometry(const KernelCall& k) {
  std::vector<uint32_t> g = {k.block[0], k.block[1], k.block[2], k.grid[0], k.grid[1], k.grid[2]};
  k.memory->write_array(k.param<uint64_t>(0), g);
}

// Per block: a tree reduction in dynamic shared memory, in the kernel's order.
void block_sum(const KernelCall& k) {
  uint32_t bd = k.block[0];
  if (uint64_t{bd} * 4 > k.dynamic_shared_bytes) {
    throw KernelException{"block_sum indexes " + std::to_string(bd * 4) +
                          " bytes of dynamic shared memory; the launch has " +
                          std::to_string(k.dynamic_shared_bytes) + " (shared memory out of range)"};
  }
  uint64_t out = k.param<uint64_t>(0), in = k.param<uint64_t>(1);
  for (uint32_t b = 0; b < k.grid[0]; ++b) {
    auto partial = k.memory->read_array<float>(in + uint64_t{b} * bd * 4, bd);
    for (uint32_t s = bd / 2; s > 0; s >>= 1) {
      for (uint32_t t = 0; t < s; ++t) partial[t] += partial[t + s];
    }
    k.memory->write_array(out + uint64_t{b} * 4, std::vector<float>{partial[0]});
  }
}

void local_memory_walk(const KernelCall& k) {
  uint64_t out = k.param<uint64_t>(0);
  uint32_t seed = k.param<uint32_t>(1);
  uint64_t threads = k.threads_x();
  std::vector<uint32_t> v(threads);
  for (uint64_t ti = 0; ti < threads; ++ti) {
    uint32_t t = static_cast<uint32_t>(ti);
    uint32_t scratch[64];
    for (uint32_t i = 0; i < 64; ++i) scratch[i] = (seed + t) * (i + 1);
    uint32_t idx = (seed ^ t) & 63, acc = 0;
    for (uint32_t i = 0; i < 64; ++i) {
      acc += scratch[idx];
      idx = (idx * 5 + 1) & 63;
    }
    v[ti] = acc;
  }
  k.memory->write_array(out, v);
}

// Per block, each half of 64 values reduced as the kernel does.
void named_barrier_halves(const KernelCall& k) {
  uint64_t out = k.param<uint64_t>(0), in = k.param<uint64_t>(1);
  for (uint32_t b = 0; b < k.grid[0]; ++b) {
    auto part = k.memory->read_array<float>(in + uint64_t{b} * 128 * 4, 128);
    for (uint32_t half = 0; half < 2; ++half) {
      for (uint32_t s = 32; s > 0; s >>= 1) {
        for (uint32_t i = 0; i < s; ++i) part[64 * half + i] += part[64 * half + i + s];
      }
    }
    k.memory->write_array(out + uint64_t{b} * 8, std::vector<float>{part[0], part[64]});
  }
}

// Clusters of two along x exchange their indices (a plain launch: each block
// finds its own).
void cluster_partners(const KernelCall& k) {
  if (k.cluster[0] != 1 && k.cluster[0] != 2) {
    throw KernelException{"cluster_partners runs in clusters of two, not " + std::to_string(k.cluster[0])};
  }
  std::vector<uint32_t> v;
  for (uint32_t b = 0; b < k.grid[0]; ++b) {
    const uint32_t rank = b % k.cluster[0];
    v.insert(v.end(), {rank, k.grid[0], k.cluster[0] == 2 ? b ^ 1u : b});
  }
  k.memory->write_array(k.param<uint64_t>(0), v);
}

void store_to(const KernelCall& k) {
  k.memory->write_array(k.param<uint64_t>(0), std::vector<uint32_t>{k.param<uint32_t>(1)});
}

const std::map<std::string, KernelBody>& bodies() {
  static const std::map<std::string, KernelBody> b = {
      {"affine_fill", affine_fill},
      {"add_f32", add_f32},
      {"increment", increment},
      {"empty_kernel", empty_kernel},
      {"report_geometry", report_geometry},
      {"block_sum", block_sum},
      {"local_memory_walk", local_memory_walk},
      {"store_to", store_to},
      {"cluster_partners", cluster_partners},
      {"named_barrier_halves", named_barrier_halves},
  };
  return b;
}

}  // namespace

void GlobalMemory::check(uint64_t va, uint64_t n, bool write) const {
  for (uint64_t w : {shared_, local_}) {
    if (w != 0 && va < w + window_bytes_ && w < va + n) {
      // The SM takes it for a shared/local access: an SM exception
      // (hww_global_esr MISALIGNED_ADDR on Orin, the seed's P0 bug), not an MMU fault.
      uint64_t at = std::max(va, w);
      throw KernelException{"global " + std::string(write ? "store to " : "load from ") + hex(at) +
                            " lies inside the shader " + (w == shared_ ? "shared" : "local") +
                            "-memory window at " + hex(w) + " (misaligned/out-of-range address)"};
    }
  }
}

void GlobalMemory::read(uint64_t va, void* dst, uint64_t n) const {
  if (n == 0) return;
  check(va, n, false);
  as_.read(va, dst, n);
}

void GlobalMemory::write(uint64_t va, const void* src, uint64_t n) const {
  if (n == 0) return;
  check(va, n, true);
  as_.write(va, src, n);
}

KernelCatalog::KernelCatalog(uint32_t sm_version) {
  compile::CompileOptions options;
  options.arch =
      "sm_" + std::to_string((sm_version >> 8) & 0xff) + std::to_string(sm_version & 0xff);
  auto module = compile::compile_embedded("selftest.cu", options);
  gpu::Cubin cubin(module.cubin);
  for (const auto& [name, info] : cubin.kernels()) {
    auto body = bodies().find(name);
    if (body == bodies().end()) continue;  // a kernel the simulator cannot run
    KernelDef d;
    d.name = name;
    d.info = info;
    d.code.assign(
        cubin.image().begin() + static_cast<std::ptrdiff_t>(info.text_offset),
        cubin.image().begin() + static_cast<std::ptrdiff_t>(info.text_offset + info.text_size));
    d.body = body->second;
    kernels_.push_back(std::move(d));
  }
}

const KernelCatalog& KernelCatalog::for_sm(uint32_t sm_version) {
  static std::mutex mutex;
  static std::map<uint32_t, std::unique_ptr<KernelCatalog>> catalogs;
  std::lock_guard<std::mutex> lock(mutex);
  auto& c = catalogs[sm_version];
  if (!c) c.reset(new KernelCatalog(sm_version));
  return *c;
}

const KernelDef* KernelCatalog::identify(const AddressSpace& as, uint64_t pc) const {
  std::vector<uint8_t> bytes;
  for (const auto& d : kernels_) {
    if (bytes.size() < d.code.size()) {
      bytes.resize(d.code.size());
      try {
        as.read(pc, bytes.data(), bytes.size());
      } catch (const SimFault&) {
        bytes.clear();
        continue;  // shorter kernels may still fit in what is mapped
      }
    }
    if (std::equal(d.code.begin(), d.code.end(), bytes.begin())) return &d;
  }
  return nullptr;
}

const KernelDef* KernelCatalog::find(const std::string& name) const {
  for (const auto& d : kernels_) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

}  // namespace nvhcq::sim
