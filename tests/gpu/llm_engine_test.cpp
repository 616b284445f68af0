// The GPU LLM engine against the CPU path on synthetic models: logits of a
// prompt within a tolerance, and the same 64 greedy tokens, on "nv" and "cuda",
// for every weight format the GPU kernels take and the three architectures.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <system_error>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "compile/nvrtc_api.h"
#include "cpu/thread_pool.h"
#include "cuda/cuda_accelerator.h"
#include "llm/gpu/gpu_llama.h"
#include "llm/model/llama_model.h"
#include "llm/synth/model_synthesizer.h"
#include "support/gpu_env.h"

namespace nvhcq::llm {
namespace {

struct ModelCase {
  std::string arch;
  LlamaFtype ftype;
  std::string preset = "tiny";
  bool llama3_rope = false;
};

std::string case_name(const ModelCase& c) {
  std::string n = c.arch + "_" + std::string(llama_ftype_name(c.ftype)) + "_" + c.preset + (c.llama3_rope ? "_rope3" : "");
  std::replace(n.begin(), n.end(), '-', '_');
  std::replace(n.begin(), n.end(), '.', '_');
  return n;
}

// The synthetic models of this test process, removed at exit.
struct ModelDir {
  std::filesystem::path path;
  ModelDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "nvhcq-gpu-llm-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw Error("mkdtemp failed");
    path = tmpl;
  }
  ~ModelDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

const std::string& model_file(const ModelCase& c) {
  static std::map<std::string, std::string> made;
  static const ModelDir models;
  const std::filesystem::path& dir = models.path;
  const std::string key = case_name(c);
  auto it = made.find(key);
  if (it != made.end()) return it->second;
  SynthOptions o;
  o.arch = c.arch;
  o.preset = *find_synth_preset(c.preset);
  if (c.llama3_rope) o.preset.llama3_factor = 8.0f;
  o.ftype = c.ftype;
  o.seed = 7;
  o.output_path = (dir / (key + ".gguf")).string();
  cpu::ThreadPool pool(cpu::default_thread_count());
  synthesize_model(o, pool);
  return made.emplace(key, o.output_path).first->second;
}

int32_t argmax(const std::vector<float>& v) {
  return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

struct EngineParam {
  std::string backend;
  ModelCase model;
};

class GpuLlmEngine : public ::testing::TestWithParam<EngineParam> {
 protected:
  void SetUp() override {
    NVHCQ_REQUIRE_RM_GPU();
    if (GetParam().backend == "cuda") NVHCQ_REQUIRE_CUDA();
    if (!compile::nvrtc_available()) GTEST_SKIP() << "NVRTC is not installed";
    acc_ = cuda::open_accelerator(GetParam().backend);
  }
  std::unique_ptr<gpu::Accelerator> acc_;
};

std::vector<int32_t> prompt_tokens(int n, uint32_t vocab) {
  std::vector<int32_t> t;
  for (int i = 0; i < n; ++i) t.push_back(static_cast<int32_t>((1 + 37 * i + i * i) % vocab));
  return t;
}

// Prompt logits within a tolerance of the CPU's, then 64 greedy tokens equal.
void check_against_cpu(gpu::Accelerator& acc, const ModelCase& mc, int prompt_len, int splits) {
  cpu::ThreadPool pool(cpu::default_thread_count());
  auto model = LlamaModel::open(model_file(mc));
  const ModelConfig& c = model->config();
  const int steps = 64;
  const auto prompt = prompt_tokens(prompt_len, c.n_vocab);

  KvCache cache = model->make_cache(prompt_len + steps + 1);
  std::vector<float> cpu_logits;
  model->forward(prompt, cache, pool, cpu_logits);

  GpuLlamaOptions o;
  o.context = prompt_len + steps + 1;
  o.attention_splits = splits;
  GpuLlama gpu(*model, acc, pool, o);
  gpu.forward(prompt);
  std::vector<float> gpu_logits;
  gpu.logits(gpu_logits);
  ASSERT_EQ(gpu_logits.size(), cpu_logits.size());

  double max_diff = 0.0, sq = 0.0;
  for (size_t i = 0; i < cpu_logits.size(); ++i) {
    ASSERT_TRUE(std::isfinite(gpu_logits[i])) << "logit " << i;
    max_diff = std::max(max_diff, std::fabs(static_cast<double>(gpu_logits[i]) - cpu_logits[i]));
    sq += static_cast<double>(cpu_logits[i]) * cpu_logits[i];
  }
  const double rms = std::sqrt(sq / cpu_logits.size());
  ASSERT_GT(rms, 0.1);
  // GPU and CPU quantize activations identically and take the same integer
  // products; what differs is float summation order (and f16 rounding of keys).
  EXPECT_LT(max_diff, 1e-3 * rms + 1e-4) << "max |gpu - cpu| " << max_diff << " (logit rms " << rms << ")";
  EXPECT_EQ(gpu.greedy_token(), argmax(cpu_logits));

  std::vector<int32_t> cpu_tokens{argmax(cpu_logits)};
  while (static_cast<int>(cpu_tokens.size()) < steps) {
    model->forward(std::vector<int32_t>{cpu_tokens.back()}, cache, pool, cpu_logits);
    cpu_tokens.push_back(argmax(cpu_logits));
  }
  std::vector<int32_t> gpu_tokens{gpu.greedy_token()};
  const auto rest = gpu.generate_greedy(gpu_tokens.back(), steps - 1);
  gpu_tokens.insert(gpu_tokens.end(), rest.begin(), rest.end());
  EXPECT_EQ(gpu_tokens, cpu_tokens);
  EXPECT_EQ(gpu.position(), prompt_len + steps - 1);
}

TEST_P(GpuLlmEngine, MatchesCpuLogitsAndGreedyTokens) {
  check_against_cpu(*acc_, GetParam().model, 9, 0);
}

std::vector<EngineParam> engine_params() {
  const std::vector<ModelCase> models = {
      {"llama", LlamaFtype::ALL_F32},      {"llama", LlamaFtype::MOSTLY_F16},
      {"llama", LlamaFtype::MOSTLY_BF16},  {"llama", LlamaFtype::MOSTLY_Q8_0},
      {"llama", LlamaFtype::MOSTLY_Q4_0},  {"llama", LlamaFtype::MOSTLY_Q4_1},
      {"llama", LlamaFtype::MOSTLY_Q5_0},  {"llama", LlamaFtype::MOSTLY_Q5_1},
      {"llama", LlamaFtype::MOSTLY_Q4_K_M}, {"llama", LlamaFtype::MOSTLY_Q5_K_M},
      {"llama", LlamaFtype::MOSTLY_Q6_K},  {"llama", LlamaFtype::MOSTLY_Q4_K_S},
      {"qwen2", LlamaFtype::MOSTLY_Q8_0},  {"mistral", LlamaFtype::MOSTLY_Q4_K_M},
      {"llama", LlamaFtype::MOSTLY_Q6_K, "tiny", true},
      {"llama", LlamaFtype::MOSTLY_Q4_K_M, "small"},
  };
  std::vector<EngineParam> out;
  for (const char* b : {"nv", "cuda"}) {
    for (const ModelCase& m : models) out.push_back({b, m});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Models, GpuLlmEngine, ::testing::ValuesIn(engine_params()),
                         [](const auto& info) { return info.param.backend + "_" + case_name(info.param.model); });

// Long contexts: one attention block walks several tiles of positions, and many
// splits are merged; both against the CPU.
class GpuLlmAttention : public GpuLlmEngine {};

TEST_P(GpuLlmAttention, LongPromptsWithOneSplitAndWithMany) {
  const ModelCase mc{"llama", LlamaFtype::MOSTLY_Q8_0};
  check_against_cpu(*acc_, mc, 300, 1);
  check_against_cpu(*acc_, mc, 300, 7);
}

INSTANTIATE_TEST_SUITE_P(Backends, GpuLlmAttention,
                         ::testing::Values(EngineParam{"nv", {}}, EngineParam{"cuda", {}}),
                         [](const auto& info) { return info.param.backend; });

class GpuLlmErrors : public GpuLlmEngine {};

TEST_P(GpuLlmErrors, RefusesTokensOutsideTheVocabularyAndAFullContext) {
  cpu::ThreadPool pool(2);
  auto model = LlamaModel::open(model_file({"llama", LlamaFtype::MOSTLY_Q8_0}));
  GpuLlamaOptions o;
  o.context = 8;
  GpuLlama gpu(*model, *acc_, pool, o);
  EXPECT_THROW(gpu.forward(std::vector<int32_t>{1, -1}), UsageError);
  EXPECT_THROW(gpu.forward(std::vector<int32_t>{static_cast<int32_t>(model->config().n_vocab)}), UsageError);
  EXPECT_EQ(gpu.position(), 0) << "a refused batch must leave the cache as it was";
  EXPECT_THROW(gpu.forward(prompt_tokens(9, model->config().n_vocab)), UsageError);
  gpu.forward(prompt_tokens(5, model->config().n_vocab));
  EXPECT_THROW(gpu.generate_greedy(1, 4), UsageError);
  EXPECT_EQ(gpu.generate_greedy(1, 3).size(), 3u);
  EXPECT_EQ(gpu.position(), 8);
}

TEST_P(GpuLlmErrors, ProfileNamesEveryKernelClass) {
  cpu::ThreadPool pool(2);
  auto model = LlamaModel::open(model_file({"llama", LlamaFtype::MOSTLY_Q4_K_M}));
  GpuLlama gpu(*model, *acc_, pool, GpuLlamaOptions{64});
  gpu.forward(prompt_tokens(3, model->config().n_vocab));
  const auto classes = gpu.profile_decode(4);
  std::vector<std::string> names;
  double total = 0.0;
  for (const auto& k : classes) {
    names.push_back(k.what);
    EXPECT_GT(k.microseconds, 0.0) << k.what;
    total += k.microseconds;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"embed", "qkv", "attention", "wo", "ffn_gate_up", "ffn_down",
                                             "logits", "step"}));
  EXPECT_GT(total, 1.0);
  EXPECT_EQ(gpu.position(), 7);
}

INSTANTIATE_TEST_SUITE_P(Backends, GpuLlmErrors, ::testing::Values(EngineParam{"nv", {}}, EngineParam{"cuda", {}}),
                         [](const auto& info) { return info.param.backend; });

}  // namespace
}  // namespace nvhcq::llm
