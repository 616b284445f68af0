#include "cpu/strided_loop.h"

#include <algorithm>

#include "base/error.h"
#include "cpu/thread_pool.h"

namespace nvhcq::cpu {
namespace {

struct LoopOperand {
  char* base;
  int64_t offset;
  int64_t strides[kMaxDims];
  int64_t lo[kMaxDims], hi[kMaxDims];
  bool masked;
  bool always_pad;  // masked out on a dropped size-1 axis or an empty range
};

struct Loop {
  int ndim = 0;
  int64_t shape[kMaxDims];
  int n = 0;
  LoopOperand ops[kMaxOperands];
};

Loop simplify(int ndim, const int64_t* shape, int n_operands, const StridedOperand* operands) {
  Loop loop;
  loop.n = n_operands;
  for (int i = 0; i < n_operands; ++i) {
    const auto& src = operands[i];
    auto& op = loop.ops[i];
    op.base = static_cast<char*>(src.data);
    op.offset = src.offset;
    op.masked = src.masked();
    op.always_pad = false;
  }
  // Keep axes of size != 1; a size-1 axis contributes nothing except its mask.
  for (int d = 0; d < ndim; ++d) {
    if (shape[d] == 1) {
      for (int i = 0; i < n_operands; ++i) {
        const auto& src = operands[i];
        if (src.masked() && !(src.valid_lo[d] <= 0 && 0 < src.valid_hi[d])) loop.ops[i].always_pad = true;
      }
      continue;
    }
    int k = loop.ndim++;
    loop.shape[k] = shape[d];
    for (int i = 0; i < n_operands; ++i) {
      const auto& src = operands[i];
      auto& op = loop.ops[i];
      op.strides[k] = src.strides[d];
      op.lo[k] = src.masked() ? std::max<int64_t>(src.valid_lo[d], 0) : 0;
      op.hi[k] = src.masked() ? std::min<int64_t>(src.valid_hi[d], shape[d]) : shape[d];
      if (op.lo[k] >= op.hi[k]) op.always_pad = true;
    }
  }
  // Merge axis k into k-1 when every operand walks them as one axis and neither is
  // partially masked.
  int out = 0;
  for (int k = 0; k < loop.ndim; ++k) {
    if (out > 0) {
      bool mergeable = true;
      for (int i = 0; i < loop.n && mergeable; ++i) {
        auto& op = loop.ops[i];
        bool full_prev = op.lo[out - 1] == 0 && op.hi[out - 1] == loop.shape[out - 1];
        bool full_cur = op.lo[k] == 0 && op.hi[k] == loop.shape[k];
        mergeable = full_prev && full_cur && op.strides[out - 1] == op.strides[k] * loop.shape[k];
      }
      if (mergeable) {
        int64_t merged = loop.shape[out - 1] * loop.shape[k];
        for (int i = 0; i < loop.n; ++i) {
          auto& op = loop.ops[i];
          op.strides[out - 1] = op.strides[k];
          op.hi[out - 1] = merged;
        }
        loop.shape[out - 1] = merged;
        continue;
      }
    }
    loop.shape[out] = loop.shape[k];
    for (int i = 0; i < loop.n; ++i) {
      auto& op = loop.ops[i];
      op.strides[out] = op.strides[k];
      op.lo[out] = op.lo[k];
      op.hi[out] = op.hi[k];
    }
    ++out;
  }
  loop.ndim = out;
  if (loop.ndim == 0) {  // a scalar: one axis of size 1
    loop.ndim = 1;
    loop.shape[0] = 1;
    for (int i = 0; i < loop.n; ++i) {
      loop.ops[i].strides[0] = 0;
      loop.ops[i].lo[0] = 0;
      loop.ops[i].hi[0] = 1;
    }
  }
  return loop;
}

}  // namespace

void for_each_tile(int ndim, const int64_t* shape, int n_operands, const StridedOperand* operands,
                   const std::function<void(const Tile&)>& fn) {
  if (ndim > kMaxDims) throw Error("tensor has " + std::to_string(ndim) + " dimensions; at most 16 are supported");
  if (n_operands > kMaxOperands) throw Error("internal: too many kernel operands");
  for (int d = 0; d < ndim; ++d) {
    if (shape[d] == 0) return;
  }
  const Loop loop = simplify(ndim, shape, n_operands, operands);
  const int inner = loop.ndim - 1;
  const int64_t inner_len = loop.shape[inner];
  const int64_t chunks_per_row = (inner_len + kTile - 1) / kTile;
  int64_t rows = 1;
  for (int d = 0; d < inner; ++d) rows *= loop.shape[d];
  const int64_t tiles = rows * chunks_per_row;
  const int64_t tile_len = std::min(inner_len, kTile);
  const int64_t grain = std::max<int64_t>(1, 32768 / tile_len);

  parallel_for(0, tiles, grain, [&](int64_t t0, int64_t t1) {
    Tile tile;
    for (int64_t t = t0; t < t1; ++t) {
      int64_t row = t / chunks_per_row;
      int64_t begin = (t % chunks_per_row) * kTile;
      int64_t end = std::min(begin + kTile, inner_len);
      tile.count = end - begin;
      // Row multi-index, innermost outer axis first.
      int64_t idx[kMaxDims];
      int64_t rem = row;
      for (int d = inner - 1; d >= 0; --d) {
        idx[d] = rem % loop.shape[d];
        rem /= loop.shape[d];
      }
      for (int i = 0; i < loop.n; ++i) {
        const auto& op = loop.ops[i];
        auto& to = tile.op[i];
        to.base = op.base;
        to.stride = op.strides[inner];
        int64_t off = op.offset + begin * op.strides[inner];
        bool row_valid = !op.always_pad;
        for (int d = 0; d < inner; ++d) {
          off += idx[d] * op.strides[d];
          if (idx[d] < op.lo[d] || idx[d] >= op.hi[d]) row_valid = false;
        }
        to.offset = off;
        if (!row_valid) {
          to.valid_begin = to.valid_end = 0;
        } else {
          to.valid_begin = std::clamp<int64_t>(op.lo[inner] - begin, 0, tile.count);
          to.valid_end = std::clamp<int64_t>(op.hi[inner] - begin, 0, tile.count);
          if (to.valid_end < to.valid_begin) to.valid_end = to.valid_begin;
        }
      }
      fn(tile);
    }
  });
}

}  // namespace nvhcq::cpu
