#pragma once
// How the persistent decode step (kernels/llm_decode_step.cu) cuts a
// matrix-vector phase into chunks of whole rows, each staged in one
// shared-memory slot by bulk copies: every array's part of a chunk must be a
// multiple of 16 bytes, a chunk must fit its slot, and the chunks should spread
// evenly over the CTAs (chunk c goes to CTA c % ctas).

#include <cstdint>
#include <string>

#include "kernels/llm_jobs.cuh"

namespace nvhcq::llm {

// Bytes one row of m occupies in a slot (all its arrays).
uint64_t staged_row_bytes(const LlmGpuMatrix& m);
// The fewest rows whose every array is a multiple of 16 bytes.
uint32_t staged_row_unit(const LlmGpuMatrix& m);

// Fills ph.chunk_rows, ph.parts and ph.chunks for ph.mv (segments, or for the
// swiglu epilogue the gate/up pair staged together). Returns an empty string,
// or why the phase cannot be staged.
std::string plan_chunks(LlmStepPhase& ph, uint32_t slot_bytes, uint32_t ctas);

}  // namespace nvhcq::llm
