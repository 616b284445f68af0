#pragma once
// The scale searches of ggml's K-format reference quantizers, reproduced so
// that our Q2_K..Q6_K bytes equal llama.cpp's for the same input. Internal to
// llm/quant. Each takes a group of n values and writes their integer levels L.

#include <cstdint>

namespace nvhcq::llm::detail {

// Symmetric levels L in [0, 2*nmax) for x ~ scale * (L - nmax); returns the scale.
// rmse_type 0 just scales by the extreme value; 1..4 refine the scale by a
// weighted least-squares fit (weights x^2, 1, |x|, sqrt|x|) over 19 candidate
// inverse scales; a negative type stops after the first fit. Used by Q6_K (type 1).
float make_qx_quants(int n, int nmax, const float* x, int8_t* L, int rmse_type);

// Symmetric levels in [0, 2*nmax) refined one value at a time (up to 5 sweeps)
// with weights x^2, as Q3_K uses (do_rmse true).
float make_q3_quants(int n, int nmax, const float* x, int8_t* L, bool do_rmse);

// Asymmetric levels L in [0, nmax] for x ~ scale * L - the_min, minimising the
// weighted squared (or absolute, use_mad) error over nstep + 1 candidate scales
// (nmax + rmin + rdelta * i) / (max - min). Laux is scratch of n bytes. Returns
// the scale; *the_min receives the (non-negative) offset. Used by Q2_K, Q4_K, Q5_K.
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L,
                       float* the_min, uint8_t* Laux, float rmin, float rdelta, int nstep,
                       bool use_mad);

}  // namespace nvhcq::llm::detail
