#pragma once
// Two more op-suite families (issue 10, robustness), instantiated like the others
// on "cpu" (tests/ops/robust_op_instances.cpp) and on "nv" and "cuda"
// (tests/gpu/robust_ops_gpu_test.cpp):
//   Networks    (network_cases.cpp)      whole models through the tensor API: an MLP
//               784-128-10, a CNN (conv, pool, linear), a transformer block
//               (attention + FFN), a 10-layer MLP, each against float64
//   EdgeTensors (edge_tensor_cases.cpp)  zero- and one-element tensors, shapes that
//               are not powers of two, every dtype and every cast between dtypes

#include <vector>

#include "ops/op_cases.h"

namespace nvhcq::optest {

class Networks : public OpSuite {};
class EdgeTensors : public OpSuite {};

std::vector<OpCase> network_cases();
std::vector<OpCase> edge_tensor_cases();

}  // namespace nvhcq::optest
