#include "llm/synth/model_quantizer.h"

#include <cstdlib>
#include <set>
#include <vector>

#include "base/error.h"
#include "llm/gguf/gguf_file.h"
#include "llm/gguf/gguf_file_writer.h"
#include "llm/gguf/gguf_writer.h"
#include "llm/quant/quant_registry.h"
#include "llm/synth/tensor_streamer.h"

namespace nvhcq::llm {
namespace {

// What llama.cpp's rules need to know about the model, from its metadata and names.
QuantMixModel mix_model_of(const GgufFile& f) {
  const GgufMetadata& m = f.metadata();
  const std::string arch = m.find_string("general.architecture").value_or("");
  QuantMixModel mix;
  std::set<int> layers;
  int wv = 0;
  for (const GgufTensorInfo& t : f.tensors()) {
    if (t.name.starts_with("blk.")) {
      layers.insert(std::atoi(t.name.c_str() + 4));
      if (t.name.find("attn_v.weight") != std::string::npos ||
          t.name.find("attn_qkv.weight") != std::string::npos ||
          t.name.find("attn_kv_b.weight") != std::string::npos) {
        ++wv;
      }
    }
  }
  mix.n_layer = static_cast<int>(
      m.find_u32(arch + ".block_count").value_or(static_cast<uint32_t>(layers.size())));
  const uint32_t n_head = m.find_u32(arch + ".attention.head_count").value_or(1);
  const GgufValue* kv = m.find(arch + ".attention.head_count_kv");
  uint32_t n_head_kv = n_head;
  if (kv != nullptr && !kv->is_array()) n_head_kv = kv->as_int<uint32_t>();
  mix.n_gqa = n_head_kv > 0 && n_head % n_head_kv == 0 ? static_cast<int>(n_head / n_head_kv) : 1;
  mix.n_expert = static_cast<int>(m.find_u32(arch + ".expert_count").value_or(0));
  mix.has_output = f.find_tensor("output.weight") != nullptr;
  mix.falcon = arch == "falcon";
  mix.llama_70b = arch == "llama" && mix.n_layer == 80;
  mix.n_attention_wv = wv;
  return mix;
}

}  // namespace

QuantizeResult quantize_model(const std::string& input, const std::string& output,
                              const QuantizeOptions& o, cpu::ThreadPool& pool) {
  if (input == output) throw UsageError("the output file must differ from the input file");
  const GgufFile in = GgufFile::open(input);
  if (in.tensors().empty()) throw FormatError(input + " holds no tensors: not a model");
  const QuantMixModel mix = mix_model_of(in);

  GgufWriter w(in.version() < 3 ? 3 : in.version());
  w.copy_metadata(in.metadata());
  w.set_scalar("general.file_type", static_cast<uint32_t>(o.ftype));
  w.set_scalar("general.quantization_version", static_cast<uint32_t>(2));
  QuantizeResult res;
  res.input_bytes = in.file_size();
  for (const GgufTensorInfo& t : in.tensors()) {
    std::vector<int64_t> shape(t.dims.begin(), t.dims.end());
    const GgmlType to = llama_tensor_type(o.ftype, t.name, shape, mix, t.type);
    if (to != t.type) {
      if (find_quant_ops(t.type) == nullptr) {
        throw FormatError(input + ": tensor '" + t.name + "' has type " +
                          std::string(traits(t.type).name) + ", which nvhcq cannot convert");
      }
      quant_ops(to);  // FormatError now for a target nvhcq cannot write
    }
    w.add_tensor(t.name, to, t.dims);
  }

  GgufFileWriter out(w, output);
  TensorStreamer streamer(out, pool);
  const uint64_t total = w.file_size();
  for (size_t i = 0; i < in.tensors().size(); ++i) {
    const GgufTensorInfo& src = in.tensors()[i];
    const GgufTensorInfo& dst = w.tensors()[i];
    if (o.progress) {
      o.progress(src.name, src.type, dst.type,
                 static_cast<double>(w.data_offset() + dst.offset) / static_cast<double>(total));
    }
    const std::span<const uint8_t> bytes = in.tensor_data(src);
    if (dst.type == src.type) {
      streamer.write_bytes(dst, bytes);
      continue;
    }
    ++res.converted;
    if (traits(src.type).quantized) ++res.requantized;
    const QuantOps& from = quant_ops(src.type);
    const int64_t cols = static_cast<int64_t>(src.dims[0]);
    const uint64_t src_row_bytes = from.row_bytes(cols);
    streamer.write_rows(dst, [&](int64_t row, float* values) {
      from.to_float(bytes.data() + static_cast<uint64_t>(row) * src_row_bytes, values, cols);
    });
  }
  streamer.flush();
  out.finish();
  res.tensors = in.tensors().size();
  res.output_bytes = total;
  return res;
}

}  // namespace nvhcq::llm
