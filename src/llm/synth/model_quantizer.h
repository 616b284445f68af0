#pragma once
// Converts a GGUF model to another file type with llama.cpp's rules
// (llama_tensor_type in ftype_mix.h): metadata is copied, general.file_type set,
// every tensor either copied as it is or converted row by row (to f32, then to
// its new type with the reference quantizer), in parallel and streamed to disk.

#include <cstdint>
#include <functional>
#include <string>

#include "cpu/thread_pool.h"
#include "llm/quant/ftype_mix.h"

namespace nvhcq::llm {

struct QuantizeOptions {
  LlamaFtype ftype = LlamaFtype::MOSTLY_Q4_K_M;
  // Called before each tensor: its name, old and new type, fraction of bytes written.
  std::function<void(const std::string& tensor, GgmlType from, GgmlType to, double fraction)>
      progress;
};

struct QuantizeResult {
  uint64_t input_bytes = 0, output_bytes = 0;
  size_t tensors = 0, converted = 0;
  size_t requantized = 0;  // converted from an already quantized type (quality loss)
};

// FormatError for an input that is not a GGUF model, or a tensor whose type nvhcq
// cannot convert.
QuantizeResult quantize_model(const std::string& input, const std::string& output,
                              const QuantizeOptions& options, cpu::ThreadPool& pool);

}  // namespace nvhcq::llm
