#pragma once
// The GPU scheduler: which nodes of a Schedule get their own buffer (and so a
// kernel), and which are fused into the kernels that consume them.
//
//   * Schedule outputs, reductions, library nodes (matmul, conv, pool,
//     attention) and index ops (gather, scatter_add, cumsum) are materialized.
//   * Elementwise nodes (unary, binary, where, cast, contiguous, cat) and
//     constants are fused into every consumer: recomputed per consumer, through
//     any View (index arithmetic), unless recomputing them is too costly (several
//     consumers or a broadcasting view, and more than kMaxRecomputeOps ops) or the
//     fused chain grows too deep.
//   * A reduction whose only consumer is an elementwise chain indexed like the
//     reduction's output (mean = sum / n, var, std, logsumexp, norms) becomes
//     that chain's kernel: the chain is the reduction kernel's epilogue.
//   * Library operands that must be dense are materialized; when an operand is a
//     View that the library kernel cannot read through strides, a synthetic
//     contiguous copy is planned before it.
//   * Large f16/bf16 matmuls whose B is one matrix for every batch become one
//     tensor-core GEMM (KernelTarget::tensor_core_gemm); a B that is not
//     row-major [K, N] (a linear layer's transposed weight) gets a planned copy,
//     which a captured Jit graph runs once (it depends only on the weight).
//
// The plan only decides; codegen and the backend act on it.

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tensor/backend.h"
#include "tensor/gpu/launch_spec.h"
#include "tensor/node.h"

namespace nvhcq::tensor {

struct PlannedKernel {
  // kElementwise also covers gather and scatter_add (computed per output element
  // with their index loads); kScan is cumsum (one thread per line).
  enum class Kind { kElementwise, kReduce, kScan, kLibrary };
  Kind kind = Kind::kElementwise;
  NodePtr root;    // the node whose values the kernel stores (dense, row-major)
  NodePtr reduce;  // kReduce: the reduce node; root != reduce when root is an epilogue
};

struct FusionPlan {
  // Fused chains longer than this are cut (a materialized node) to bound kernel size.
  static constexpr int kMaxFusedDepth = 256;
  // Nodes with several consumers are recomputed in each when their fused
  // expression has at most this many ops; otherwise they get a buffer.
  static constexpr int kMaxRecomputeOps = 8;

  std::vector<PlannedKernel> kernels;            // in execution order
  std::unordered_set<const Node*> materialized;  // nodes that get a buffer in this plan
  std::vector<NodePtr> synthetic;                // contiguous copies planned for library operands
  // The operands each library node reads: its own sources, or synthetic copies of them.
  std::unordered_map<const Node*, std::vector<NodePtr>> library_operands;
  // Matmuls planned as one row-major GEMM [M, K] x [K, N] for the tensor-core
  // kernels (batch axes folded into M): operand 0 is A (dense, or a contiguous
  // View), operand 1 is B as a [K, N] row-major View or dense node.
  std::unordered_set<const Node*> dense_gemm;

  // True when a kernel reads `n` from a buffer instead of computing it.
  bool loads(const Node* n) const { return n->realized() || materialized.count(n) != 0; }
};

FusionPlan plan_fusion(const Schedule& schedule, const KernelTarget& target = {});

// Smallest matmul (M * N * K multiply-adds, after folding batch axes into M)
// sent to the tensor-core GEMM.
inline constexpr int64_t kTensorCoreMinMacs = int64_t{1} << 22;

// Whether `op` is a library op (its own hand-written kernel).
bool is_library_op(Op op);
// gather, scatter_add, cumsum: generated kernels that always get a buffer.
bool is_index_op(Op op);

}  // namespace nvhcq::tensor
