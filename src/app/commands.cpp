#include "app/commands.h"

namespace nvhcq::app {

std::span<const Command> commands() {
  static const Command kCommands[] = {
      {"info", "describe this machine: CPU, GPU driver interfaces, GPUs, NVRTC, libcuda", run_info},
      {"run", "generate text with a GGUF model", run_run},
      {"bench", "measure prompt and generation speed of GGUF models", run_bench},
      {"synth", "write a GGUF model with seeded random weights at a real model's shape", run_synth},
      {"quantize", "convert a GGUF model to another weight type", run_quantize},
      {"tokenize", "print the token ids of a text under a GGUF file's tokenizer", run_tokenize},
      {"serve", "serve a GGUF model over HTTP", run_serve},
      {"kernel-log", "the GPU drivers' kernel-log messages, classified (Xid codes, faults)",
       run_kernel_log},
  };
  return kCommands;
}

}  // namespace nvhcq::app
