#pragma once
// Picks the next token from a model's logits, in llama.cpp's order:
//   repetition penalty -> top-k -> top-p -> min-p -> temperature -> random draw.
// A temperature of 0 (or less) is greedy: the highest logit after the penalty.
// Top-k, top-p and min-p act on the probabilities at temperature 1, as llama.cpp's
// default chain does; temperature then reshapes what is left.
//
// Draws come from a seeded xoshiro256** (rng.h): the same seed, logits and history
// give the same tokens everywhere.

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <vector>

#include "llm/sampler/rng.h"

namespace nvhcq::llm {

struct SamplerParams {
  float temperature = 0.8f;     // <= 0: greedy
  int top_k = 40;               // <= 0: off
  float top_p = 0.95f;          // >= 1: off
  float min_p = 0.05f;          // <= 0: off
  float repeat_penalty = 1.0f;  // 1: off; > 1 discourages recent tokens
  int repeat_last_n = 64;       // how many recent tokens the penalty looks at
  uint64_t seed = 0;

  // UsageError naming the parameter for a value outside its range.
  void validate() const;
  // "temp 0.80, top-k 40, top-p 0.95, min-p 0.05, repeat-penalty 1.00, seed 42"
  std::string describe() const;
};

class Sampler {
 public:
  explicit Sampler(const SamplerParams& params);

  const SamplerParams& params() const { return params_; }

  // The next token for `logits` (one value per vocabulary entry). Does not record
  // it: call accept() with the token actually used.
  int32_t sample(std::span<const float> logits);
  // Records a token of the context (prompt tokens too) for the repetition penalty.
  void accept(int32_t token);
  // Forgets the history and restarts the random sequence from the seed.
  void reset();

  // The candidates that survived the last sample(), best first, with their
  // probabilities after temperature (for tests and diagnostics).
  struct Candidate {
    int32_t id;
    float logit;
    float p;
  };
  const std::vector<Candidate>& last_candidates() const { return candidates_; }

 private:
  void apply_penalty();
  void softmax();

  SamplerParams params_;
  SamplerRng rng_;
  std::deque<int32_t> history_;
  std::vector<Candidate> candidates_;
};

}  // namespace nvhcq::llm
