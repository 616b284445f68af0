#pragma once
// llama.cpp's quantization mixes: a file type ("Q4_K_M") names a default tensor
// type plus rules that give some tensors more bits (e.g. Q4_K_M keeps the output
// tensor and some layers' attn_v / ffn_down in Q6_K). Facts from llama.cpp's
// llama_tensor_get_type (src/llama-quant.cpp), reproduced for the file types
// that use no IQ format and need no importance matrix.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "llm/ggml_type.h"

namespace nvhcq::llm {

// llama.cpp's LLAMA_FTYPE values, stored in GGUF as general.file_type.
enum class LlamaFtype : uint32_t {
  ALL_F32 = 0,
  MOSTLY_F16 = 1,
  MOSTLY_Q4_0 = 2,
  MOSTLY_Q4_1 = 3,
  MOSTLY_Q8_0 = 7,
  MOSTLY_Q5_0 = 8,
  MOSTLY_Q5_1 = 9,
  MOSTLY_Q2_K = 10,
  MOSTLY_Q3_K_S = 11,
  MOSTLY_Q3_K_M = 12,
  MOSTLY_Q3_K_L = 13,
  MOSTLY_Q4_K_S = 14,
  MOSTLY_Q4_K_M = 15,
  MOSTLY_Q5_K_S = 16,
  MOSTLY_Q5_K_M = 17,
  MOSTLY_Q6_K = 18,
  MOSTLY_BF16 = 32,
};

// "Q4_K_M", "q8_0", "F16", "BF16", "F32" (llama-quantize's names, any case).
std::optional<LlamaFtype> llama_ftype_from_name(std::string_view name);
std::string_view llama_ftype_name(LlamaFtype ftype);  // e.g. "Q4_K_M"
// The file type of a general.file_type value, if it is one of those above.
std::optional<LlamaFtype> llama_ftype_from_id(uint32_t id);
// The type most tensors get (Q4_K for Q4_K_M, F16 for F16, ...).
GgmlType llama_ftype_default_type(LlamaFtype ftype);

// What the rules need to know about the model besides the tensor itself.
struct QuantMixModel {
  int n_layer = 0;          // transformer blocks ("blk.N." tensors)
  int n_gqa = 1;            // n_head / n_head_kv
  int n_expert = 0;         // experts per MoE layer (0 or 1: dense)
  bool has_output = true;   // false: token_embd is tied to the output and quantized like it
  bool falcon = false;      // llama.cpp applies a few Falcon-specific rules
  bool llama_70b = false;   // llama.cpp's LLM_TYPE_70B: attn_v gets Q5_K instead of Q3_K/Q4_K
  int n_attention_wv = -1;  // attn_v-like tensors in the model; -1: one per layer
};

struct QuantMixOptions {
  bool pure = false;                        // every quantizable tensor gets the default type
  bool quantize_output = true;              // false: output.weight keeps its type
  std::optional<GgmlType> output_type;      // llama-quantize --output-tensor-type
  std::optional<GgmlType> token_embd_type;  // --token-embedding-type
};

// True when llama.cpp would quantize this tensor at all: 2-D or more, named
// "*weight", not a norm, not an MoE router, ... (others keep their type).
bool tensor_is_quantizable(std::string_view name, std::span<const int64_t> shape,
                           const QuantMixOptions& options = {});

// The type llama-quantize gives tensor `name` of shape `shape` (ggml order: shape[0]
// is the row length) under `ftype`, including llama.cpp's fallbacks when a row is
// not a whole number of blocks (Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0,
// Q2_K/Q3_K -> Q4_0, then F16). `current` is the tensor's type in the input file,
// kept for tensors that are not quantized. Throws FormatError where llama.cpp
// refuses (a 32-element format on a row that is not a multiple of 32).
GgmlType llama_tensor_type(LlamaFtype ftype, std::string_view name, std::span<const int64_t> shape,
                           const QuantMixModel& model, GgmlType current = GgmlType::F32,
                           const QuantMixOptions& options = {});

}  // namespace nvhcq::llm
