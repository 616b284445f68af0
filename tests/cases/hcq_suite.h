#pragma once
// The fixture of the HCQ runtime suite (hcq_cases.cpp). Each backend instantiates
// it: INSTANTIATE_TEST_SUITE_P(Rm, HcqSuite, ::testing::Values(backend), backend_name).

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "gpu/device.h"
#include "gpu/program.h"
#include "support/hcq_backend.h"

namespace nvhcq::testing {

class HcqSuite : public ::testing::TestWithParam<HcqBackend> {
 protected:
  void SetUp() override;
  void TearDown() override { dev.reset(); }

  gpu::Program load(const std::string& kernel);
  std::vector<float> read_floats(const gpu::Buffer& b, size_t n);
  std::vector<uint32_t> read_u32(const gpu::Buffer& b, size_t n);
  void poison(const gpu::Buffer& b);

  std::unique_ptr<gpu::Device> dev;
};

}  // namespace nvhcq::testing
