// Writes the seed corpus of the GGUF reader fuzzer into the folder given as the
// only argument: small valid files covering every metadata type, several tensor
// types and shapes, both versions and a custom alignment. (The Makefile adds the
// vocab files of tests/data/vocab to the seeds.)

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "llm/gguf/gguf_writer.h"

namespace {

using nvhcq::llm::GgmlType;
using nvhcq::llm::GgufWriter;

void save(const std::string& dir, const std::string& name, const GgufWriter& w) {
  std::vector<std::vector<uint8_t>> data;
  std::vector<std::span<const uint8_t>> spans;
  for (size_t i = 0; i < w.tensors().size(); ++i) {
    data.emplace_back(w.tensors()[i].n_bytes, static_cast<uint8_t>(0x11 * (i + 1)));
  }
  for (const auto& d : data) spans.emplace_back(d);
  const std::vector<uint8_t> bytes = w.to_bytes(spans);
  std::ofstream out(dir + "/" + name, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];

  GgufWriter empty;
  save(dir, "empty.gguf", empty);

  GgufWriter scalars(2);
  scalars.set_scalar<uint8_t>("u8", 1);
  scalars.set_scalar<int8_t>("i8", -1);
  scalars.set_scalar<uint16_t>("u16", 2);
  scalars.set_scalar<int16_t>("i16", -2);
  scalars.set_scalar<uint32_t>("u32", 3);
  scalars.set_scalar<int32_t>("i32", -3);
  scalars.set_scalar<uint64_t>("u64", 4);
  scalars.set_scalar<int64_t>("i64", -4);
  scalars.set_scalar<float>("f32", 0.5f);
  scalars.set_scalar<double>("f64", 0.25);
  scalars.set_scalar<bool>("bool", true);
  scalars.set_string("string", "text");
  save(dir, "scalars_v2.gguf", scalars);

  GgufWriter arrays;
  arrays.set_array<uint8_t>("a.u8", {1, 2});
  arrays.set_array<int16_t>("a.i16", {-1, 1});
  arrays.set_array<int32_t>("a.i32", {1, -2, 3});
  arrays.set_array<uint64_t>("a.u64", {9});
  arrays.set_array<float>("a.f32", {1.0f, -1.0f});
  arrays.set_array<double>("a.f64", {2.0});
  arrays.set_array<bool>("a.bool", {true, false});
  arrays.set_string_array("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a", "b", "ab"});
  arrays.set_string_array("tokenizer.ggml.merges", {"a b"});
  arrays.set_string("tokenizer.ggml.model", "gpt2");
  save(dir, "arrays.gguf", arrays);

  GgufWriter model;
  model.set_string("general.architecture", "llama");
  model.set_scalar<uint32_t>("llama.block_count", 1);
  model.add_tensor("token_embd.weight", GgmlType::F16, {8, 4});
  model.add_tensor("blk.0.attn_q.weight", GgmlType::Q4_0, {32, 2});
  model.add_tensor("blk.0.ffn_down.weight", GgmlType::Q6_K, {256, 1});
  model.add_tensor("output_norm.weight", GgmlType::F32, {8});
  save(dir, "model.gguf", model);

  GgufWriter aligned;
  aligned.set_alignment(64);
  aligned.add_tensor("a", GgmlType::F32, {3});
  aligned.add_tensor("b", GgmlType::Q8_0, {32, 1, 1, 2});
  aligned.add_tensor("c", GgmlType::I8, {0});
  save(dir, "aligned64.gguf", aligned);
  return 0;
}
