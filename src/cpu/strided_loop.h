#pragma once
// The loop driver under every elementwise kernel: it simplifies the iteration
// space (drops size-1 axes, merges axes that are contiguous for every operand),
// cuts it into tiles of at most kTile elements along the innermost axis, and runs
// the tiles on the default thread pool. A tile hands the kernel, per operand, the
// element offset of its first element, its inner stride and which inner indices
// are valid (the rest read as padding).

#include <cstdint>
#include <functional>

#include "cpu/strided.h"

namespace nvhcq::cpu {

inline constexpr int kMaxOperands = 4;
inline constexpr int64_t kTile = 1024;

struct TileOperand {
  char* base;          // data pointer of the operand
  int64_t offset;      // element offset of inner index 0 of this tile's row
  int64_t stride;      // inner stride in elements
  int64_t valid_begin; // valid inner range within [0, count), clipped
  int64_t valid_end;
};

struct Tile {
  int64_t count;  // elements in this tile
  TileOperand op[kMaxOperands];
};

// Operand 0 is the output (it must not be masked). fn(tile) runs concurrently on
// different tiles; tiles never overlap in output elements when the output has no
// zero strides.
void for_each_tile(int ndim, const int64_t* shape, int n_operands, const StridedOperand* operands,
                   const std::function<void(const Tile&)>& fn);

}  // namespace nvhcq::cpu
