#include "llm/gpu/gpu_weights.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

#include "base/error.h"
#include "llm/gpu/weight_repack.h"

namespace nvhcq::llm {
namespace {

constexpr uint64_t kArrayAlign = 256;
// Host staging per upload step: large enough to keep the copy efficient, small
// next to any model.
constexpr uint64_t kStagingBytes = 64ull << 20;

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

struct PlannedMatrix {
  const WeightMatrix* source;
  GpuMatrix* target;
  GpuMatrixLayout layout;
  uint64_t offset[kGpuArrayCount];  // in the matrix allocation
};

// Tells the kernel it may drop the file pages of [p, p + n) (a private read-only
// mapping: they come back from the file if the CPU path ever reads them again).
void release_pages(const uint8_t* p, uint64_t n) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  uint64_t begin = align_up(reinterpret_cast<uint64_t>(p), page);
  uint64_t end = (reinterpret_cast<uint64_t>(p) + n) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace

uint64_t GpuWeights::bytes() const {
  return (matrices_ ? matrices_->size() : 0) + (vectors_ ? vectors_->size() : 0);
}

std::unique_ptr<GpuWeights> GpuWeights::upload(const ModelWeights& weights, gpu::Accelerator& acc, cpu::ThreadPool& pool,
                                               const std::function<void(double)>& progress) {
  auto w = std::make_unique<GpuWeights>();
  w->layers.resize(weights.layers.size());

  // Plan: every matrix's arrays, 256-byte aligned, back to back.
  std::vector<PlannedMatrix> plan;
  uint64_t total = 0;
  auto add = [&](const WeightMatrix& src, GpuMatrix& dst) {
    PlannedMatrix p{&src, &dst, gpu_matrix_layout(src.type(), src.rows, src.cols), {}};
    for (int a = 0; a < kGpuArrayCount; ++a) {
      p.offset[a] = total;
      total += align_up(p.layout.array_bytes(static_cast<GpuArray>(a), src.rows), kArrayAlign);
    }
    dst.type = src.type();
    dst.name = src.info != nullptr ? src.info->name : std::string("?");
    w->file_matrix_bytes_ += src.row_bytes * static_cast<uint64_t>(src.rows);
    plan.push_back(p);
  };
  add(weights.token_embd, w->token_embd);
  if (!weights.tied_output) add(weights.output, w->output);
  for (size_t i = 0; i < weights.layers.size(); ++i) {
    const LayerWeights& s = weights.layers[i];
    GpuLayer& d = w->layers[i];
    add(s.wq, d.wq);
    add(s.wk, d.wk);
    add(s.wv, d.wv);
    add(s.wo, d.wo);
    add(s.w_gate, d.gate);
    add(s.w_up, d.up);
    add(s.w_down, d.down);
  }
  w->matrices_ = acc.alloc(total);
  const uint64_t base = w->matrices_->va();

  std::vector<uint8_t> staging[kGpuArrayCount];
  uint64_t done = 0;
  for (PlannedMatrix& p : plan) {
    const GpuMatrixLayout& l = p.layout;
    LlmGpuMatrix& desc = p.target->desc;
    desc.format = l.format;
    desc.rows = static_cast<int32_t>(l.rows);
    desc.cols = static_cast<int32_t>(l.cols);
    uint64_t* addr[kGpuArrayCount] = {&desc.qs, &desc.qh, &desc.scales, &desc.super};
    uint64_t row_total = 0;
    for (int a = 0; a < kGpuArrayCount; ++a) {
      *addr[a] = l.row_bytes[a] != 0 ? base + p.offset[a] : 0;
      row_total += l.row_bytes[a];
    }
    const int64_t chunk_rows = std::max<int64_t>(1, static_cast<int64_t>(kStagingBytes / std::max<uint64_t>(row_total, 1)));
    for (int64_t r0 = 0; r0 < l.rows; r0 += chunk_rows) {
      const int64_t n = std::min(chunk_rows, l.rows - r0);
      for (int a = 0; a < kGpuArrayCount; ++a) staging[a].resize(l.array_bytes(static_cast<GpuArray>(a), n));
      const WeightMatrix& src = *p.source;
      pool.parallel_for(0, n, 64, [&](int64_t lo, int64_t hi) {
        RepackTarget t;
        for (int a = 0; a < kGpuArrayCount; ++a) {
          t.array[a] = l.row_bytes[a] != 0 ? staging[a].data() + static_cast<uint64_t>(lo) * l.row_bytes[a] : nullptr;
        }
        repack_rows(src.type(), l, src.row(r0 + lo), hi - lo, t);
      });
      for (int a = 0; a < kGpuArrayCount; ++a) {
        if (l.row_bytes[a] == 0) continue;
        acc.upload(*w->matrices_, p.offset[a] + static_cast<uint64_t>(r0) * l.row_bytes[a], staging[a].data(),
                   staging[a].size());
      }
      release_pages(src.row(r0), src.row_bytes * static_cast<uint64_t>(n));
      done += src.row_bytes * static_cast<uint64_t>(n);
      if (progress) progress(static_cast<double>(done) / static_cast<double>(w->file_matrix_bytes_));
    }
  }
  if (weights.tied_output) w->output = w->token_embd;

  // The f32 vectors.
  std::vector<float> host;
  std::vector<std::pair<uint64_t*, size_t>> fixups;  // (address field, offset in floats)
  auto vec = [&](const std::vector<float>& v, uint64_t* field) {
    if (v.empty()) return;
    while (host.size() % 64 != 0) host.push_back(0.0f);
    fixups.emplace_back(field, host.size());
    host.insert(host.end(), v.begin(), v.end());
  };
  vec(weights.output_norm, &w->output_norm);
  for (size_t i = 0; i < weights.layers.size(); ++i) {
    const LayerWeights& s = weights.layers[i];
    GpuLayer& d = w->layers[i];
    vec(s.attn_norm, &d.attn_norm);
    vec(s.ffn_norm, &d.ffn_norm);
    vec(s.bq, &d.bq);
    vec(s.bk, &d.bk);
    vec(s.bv, &d.bv);
  }
  w->vectors_ = acc.alloc(std::max<size_t>(host.size(), 1) * sizeof(float));
  acc.upload(*w->vectors_, 0, host.data(), host.size() * sizeof(float));
  for (auto& [field, offset] : fixups) *field = w->vectors_->va() + offset * sizeof(float);
  return w;
}

}  // namespace nvhcq::llm
