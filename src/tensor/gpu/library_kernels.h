#pragma once
// Launches of the hand-written library kernels (src/kernels/tensor_matmul.cu,
// tensor_conv.cu, tensor_attention.cu) for library nodes: which entry point
// (one per dtype), the packed shape/stride arguments and the launch grid.
// Operands come from FusionPlan::library_operands: dense nodes, or (matmul)
// unmasked Views read through their strides.

#include "tensor/gpu/fusion_plan.h"
#include "tensor/gpu/launch_spec.h"

namespace nvhcq::tensor {

LaunchSpec lower_library(const Node* node, const FusionPlan& plan, const KernelTarget& target);

// The launch of any planned kernel: generated (elementwise, reduce, scan) or library.
LaunchSpec lower_kernel(const PlannedKernel& kernel, const FusionPlan& plan,
                        const KernelTarget& target);

}  // namespace nvhcq::tensor
