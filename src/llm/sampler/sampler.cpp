#include "llm/sampler/sampler.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_set>

#include "base/error.h"

namespace nvhcq::llm {
namespace {

// Higher logit first; the lower id first among equals, so ties break the same way
// on every run.
bool better(const Sampler::Candidate& a, const Sampler::Candidate& b) {
  if (a.logit != b.logit) return a.logit > b.logit;
  return a.id < b.id;
}

}  // namespace

void SamplerParams::validate() const {
  if (!std::isfinite(temperature)) throw UsageError("--temp must be a finite number");
  if (!(top_p > 0.0f && top_p <= 1.0f)) {
    throw UsageError("--top-p must be in (0, 1] (1 turns it off)");
  }
  if (!(min_p >= 0.0f && min_p <= 1.0f))
    throw UsageError("--min-p must be in [0, 1] (0 turns it off)");
  if (!(repeat_penalty > 0.0f) || !std::isfinite(repeat_penalty)) {
    throw UsageError("--repeat-penalty must be a positive number (1 turns it off)");
  }
  if (repeat_last_n < 0) throw UsageError("--repeat-last-n must not be negative");
}

std::string SamplerParams::describe() const {
  char buf[200];
  if (temperature <= 0.0f) {
    std::snprintf(buf, sizeof(buf), "greedy, repeat-penalty %.2f", repeat_penalty);
  } else {
    std::snprintf(buf, sizeof(buf),
                  "temp %.2f, top-k %d, top-p %.2f, min-p %.2f, repeat-penalty %.2f, seed %llu",
                  temperature, top_k, top_p, min_p, repeat_penalty,
                  static_cast<unsigned long long>(seed));
  }
  return buf;
}

Sampler::Sampler(const SamplerParams& params) : params_(params), rng_(params.seed) {
  params_.validate();
}

void Sampler::reset() {
  history_.clear();
  rng_.reseed(params_.seed);
}

void Sampler::accept(int32_t token) {
  if (params_.repeat_last_n == 0) return;
  history_.push_back(token);
  while (history_.size() > static_cast<size_t>(params_.repeat_last_n)) history_.pop_front();
}

void Sampler::apply_penalty() {
  if (params_.repeat_penalty == 1.0f || history_.empty()) return;
  // Each distinct recent token once, as llama.cpp does.
  std::unordered_set<int32_t> seen(history_.begin(), history_.end());
  for (int32_t id : seen) {
    if (id < 0 || static_cast<size_t>(id) >= candidates_.size()) continue;
    float& l = candidates_[static_cast<size_t>(id)].logit;
    l = l <= 0.0f ? l * params_.repeat_penalty : l / params_.repeat_penalty;
  }
}

void Sampler::softmax() {
  // Candidates are sorted best first, so the first logit is the largest.
  const double max = candidates_.front().logit;
  double sum = 0.0;
  for (Candidate& c : candidates_) {
    const double e = std::isfinite(c.logit) ? std::exp(static_cast<double>(c.logit) - max) : 0.0;
    c.p = static_cast<float>(e);
    sum += e;
  }
  for (Candidate& c : candidates_) c.p = static_cast<float>(c.p / sum);
}

int32_t Sampler::sample(std::span<const float> logits) {
  if (logits.empty()) throw UsageError("sampler: no logits");
  candidates_.resize(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    // A NaN can never be chosen: it sorts as the lowest logit.
    const float l = std::isnan(logits[i]) ? -INFINITY : logits[i];
    candidates_[i] = Candidate{static_cast<int32_t>(i), l, 0.0f};
  }
  apply_penalty();

  if (params_.temperature <= 0.0f) {
    const auto best = std::min_element(candidates_.begin(), candidates_.end(), better);
    const Candidate c = *best;
    candidates_.assign(1, Candidate{c.id, c.logit, 1.0f});
    return c.id;
  }

  // top-k (and the sort every later step relies on).
  const int k = params_.top_k;
  if (k > 0 && static_cast<size_t>(k) < candidates_.size()) {
    std::partial_sort(candidates_.begin(), candidates_.begin() + k, candidates_.end(), better);
    candidates_.resize(static_cast<size_t>(k));
  } else {
    std::sort(candidates_.begin(), candidates_.end(), better);
  }
  if (!std::isfinite(candidates_.front().logit)) {
    // Every logit was -inf or NaN: nothing to weigh, take the first.
    candidates_.resize(1);
    candidates_[0].p = 1.0f;
    return candidates_[0].id;
  }
  softmax();

  // top-p: the smallest head of the list whose probability reaches top_p.
  if (params_.top_p < 1.0f) {
    double cum = 0.0;
    size_t keep = candidates_.size();
    for (size_t i = 0; i < candidates_.size(); ++i) {
      cum += candidates_[i].p;
      if (cum >= params_.top_p) {
        keep = i + 1;
        break;
      }
    }
    candidates_.resize(keep);
  }
  // min-p: drop tokens less likely than min_p times the most likely one.
  if (params_.min_p > 0.0f) {
    const float threshold = candidates_.front().p * params_.min_p;
    size_t keep = 1;
    while (keep < candidates_.size() && candidates_[keep].p >= threshold) ++keep;
    candidates_.resize(keep);
  }

  // Temperature, then a draw.
  for (Candidate& c : candidates_) c.logit /= params_.temperature;
  softmax();
  const double u = rng_.uniform();
  double cum = 0.0;
  for (const Candidate& c : candidates_) {
    cum += c.p;
    if (u < cum) return c.id;
  }
  return candidates_.back().id;  // u landed in the rounding slack past the last sum
}

}  // namespace nvhcq::llm
