#pragma once
// A model's weights on the GPU: every matrix repacked (weight_repack.h) into one
// device allocation, the 1-D tensors (norms, biases) as f32 in another. Upload
// streams row ranges from the file's mapping through a bounded host buffer and
// releases the file pages it has read, so host memory stays small while a large
// model loads.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cpu/thread_pool.h"
#include "gpu/accelerator.h"
#include "kernels/llm_formats.cuh"
#include "llm/model/model_weights.h"

namespace nvhcq::llm {

struct GpuMatrix {
  LlmGpuMatrix desc{};
  GgmlType type = GgmlType::F32;
  std::string name;
};

struct GpuLayer {
  GpuMatrix wq, wk, wv, wo, gate, up, down;
  uint64_t attn_norm = 0, ffn_norm = 0;  // f32 device addresses
  uint64_t bq = 0, bk = 0, bv = 0;       // 0 without biases
};

class GpuWeights {
 public:
  // progress(fraction of bytes uploaded) is called now and then.
  static std::unique_ptr<GpuWeights> upload(const ModelWeights& weights, gpu::Accelerator& acc, cpu::ThreadPool& pool,
                                            const std::function<void(double)>& progress = {});

  GpuMatrix token_embd, output;
  uint64_t output_norm = 0;
  std::vector<GpuLayer> layers;

  // Device bytes the weights take (matrices and vectors).
  uint64_t bytes() const;
  // Bytes the GGUF file's matrices take, for comparison.
  uint64_t file_matrix_bytes() const { return file_matrix_bytes_; }

 private:
  std::unique_ptr<gpu::DeviceMemory> matrices_, vectors_;
  uint64_t file_matrix_bytes_ = 0;
};

}  // namespace nvhcq::llm
