#pragma once
// Code generation for the planned fused kernels (fusion_plan.h):
//
//   * elementwise: one thread per vector of V consecutive output elements
//     (V * element size = 16 bytes for the widest access); loads that read the
//     output position plus a V-aligned constant become vector loads, the store is
//     one vector store, a scalar tail handles the last partial vector. Shapes,
//     strides, offsets and masks are compile-time constants.
//   * reduce: G lanes per output (1, a power of two up to 32, or a 256-thread
//     block) chosen from the shape: each lane folds a strided part of the reduced
//     range (the fused source expression evaluated per element), lanes combine by
//     warp shuffles (and shared memory for a block), lane 0 applies the epilogue
//     chain and stores.
//
// The result names the nodes whose buffers the kernel's pointer parameters take.

#include <string>

#include "tensor/gpu/fusion_plan.h"
#include "tensor/gpu/launch_spec.h"

namespace nvhcq::tensor {

LaunchSpec generate_elementwise(const Node* root, const FusionPlan& plan,
                                const KernelTarget& target);
LaunchSpec generate_reduce(const Node* reduce, const Node* root, const FusionPlan& plan,
                           const KernelTarget& target);
// cumsum: one thread per line along the axis, a sequential running sum (f64 for
// float dtypes, wrapping int64 otherwise) rounded per output as the CPU does.
LaunchSpec generate_scan(const Node* root, const FusionPlan& plan, const KernelTarget& target);

// A short description of what `root` computes through its fused nodes, e.g.
// "exp(mul(buf[13x17] f32, 2))" (cut at `max_len` characters).
std::string describe_fused(const Node* root, const FusionPlan& plan, size_t max_len = 160);

}  // namespace nvhcq::tensor
