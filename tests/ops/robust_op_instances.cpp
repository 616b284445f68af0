// The Networks and EdgeTensors suites (robust_op_cases.h) on the CPU backend.
// (New buffers are poisoned by cpu_instances.cpp's environment, in this binary too.)
#include "ops/robust_op_cases.h"

namespace nvhcq::optest {
namespace {

INSTANTIATE_TEST_SUITE_P(cpu, Networks, ::testing::ValuesIn(with_backend("cpu", network_cases())),
                         param_name);
INSTANTIATE_TEST_SUITE_P(cpu, EdgeTensors,
                         ::testing::ValuesIn(with_backend("cpu", edge_tensor_cases())), param_name);

}  // namespace
}  // namespace nvhcq::optest
