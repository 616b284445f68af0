#pragma once
// The Jit suite's fixture (bodies in jit_cases.cpp); instantiated per device.

#include <gtest/gtest.h>

#include <string>

#include "tensor/gpu_test_devices.h"
#include "tensor/jit.h"

namespace nvhcq::tensor {

class JitSuite : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override;
  // Checks the call, capture and replay counters after `calls` calls that used
  // `captures` input signatures (each called at least twice).
  void expect_replays(const Jit& jit, size_t calls, size_t captures) const;

  std::string device;
  bool records = false;
};

}  // namespace nvhcq::tensor
