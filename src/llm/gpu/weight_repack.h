#pragma once
// Host side of the GPU weight layouts (kernels/llm_formats.cuh): which GPU
// format a GGUF type becomes, how large each of its arrays is, and the repacking
// of GGUF rows into those arrays. Repacking works on row ranges so that a large
// matrix streams from the file's mapping to the GPU through a small buffer.

#include <cstdint>
#include <optional>

#include "llm/ggml_type.h"

namespace nvhcq::llm {

// The arrays of a repacked matrix (LlmGpuMatrix's qs, qh, scales, super).
enum class GpuArray { kQs, kQh, kScales, kSuper };
constexpr int kGpuArrayCount = 4;

struct GpuMatrixLayout {
  int format = 0;  // LlmGpuFormat
  int64_t rows = 0, cols = 0;
  // Bytes per row of each array (0: the format has no such array).
  uint64_t row_bytes[kGpuArrayCount] = {0, 0, 0, 0};

  uint64_t array_bytes(GpuArray a, int64_t n_rows) const {
    return row_bytes[static_cast<int>(a)] * static_cast<uint64_t>(n_rows);
  }
  uint64_t total_bytes() const {
    uint64_t t = 0;
    for (uint64_t b : row_bytes) t += b * static_cast<uint64_t>(rows);
    return t;
  }
};

// The GPU format of `type`, or nullopt when the GPU path does not compute with it
// (Q2_K, Q3_K, the IQ formats).
std::optional<int> gpu_format_for(GgmlType type);

// The layout of a rows x cols matrix of `type`. FormatError when the type has no
// GPU format or cols is not a whole number of its blocks.
GpuMatrixLayout gpu_matrix_layout(GgmlType type, int64_t rows, int64_t cols);

// Destination of a row range: each array's host buffer, positioned at the first
// row of the range (nullptr for arrays the format does not have).
struct RepackTarget {
  uint8_t* array[kGpuArrayCount] = {nullptr, nullptr, nullptr, nullptr};
};

// Repacks `n_rows` consecutive GGUF rows at `src` (ggml blocks of `layout`'s
// type, row after row) into `dst`.
void repack_rows(GgmlType type, const GpuMatrixLayout& layout, const uint8_t* src, int64_t n_rows,
                 const RepackTarget& dst);

}  // namespace nvhcq::llm
