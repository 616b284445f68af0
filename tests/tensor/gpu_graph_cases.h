#pragma once
// The GpuGraphs suite's fixture (bodies in gpu_graph_cases.cpp); instantiated per device.

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "tensor/gpu_test_devices.h"
#include "tensor/tensor.h"

namespace nvhcq::tensor {

class GpuGraphs : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override;
  // Runs `graph` on copies of the (CPU) inputs on the device and on the inputs
  // themselves on the CPU backend, and compares every output.
  ::testing::AssertionResult matches_cpu(
      const std::vector<Tensor>& host_inputs,
      const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& graph, double rtol,
      double atol);

  std::string device;
};

}  // namespace nvhcq::tensor
