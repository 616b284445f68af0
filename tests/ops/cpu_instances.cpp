// Runs the op suite (the *_cases.cpp files) on the CPU backend. New buffers are
// poisoned so that an element a kernel forgets to write cannot pass as correct.
#include "ops/op_cases.h"
#include "tensor/cpu_backend.h"

namespace nvhcq::optest {
namespace {

class PoisonBuffers : public ::testing::Environment {
 public:
  void SetUp() override { tensor::CpuBackend::set_poison_new_buffers(true); }
};
const auto* const kPoison = ::testing::AddGlobalTestEnvironment(new PoisonBuffers);

#define NVHCQ_CPU_SUITE(Suite, cases) \
  INSTANTIATE_TEST_SUITE_P(cpu, Suite, ::testing::ValuesIn(with_backend("cpu", cases())), param_name)

NVHCQ_CPU_SUITE(UnaryOps, unary_cases);
NVHCQ_CPU_SUITE(BinaryOps, binary_cases);
NVHCQ_CPU_SUITE(Reductions, reduction_cases);
NVHCQ_CPU_SUITE(Movement, movement_cases);
NVHCQ_CPU_SUITE(Indexing, indexing_cases);
NVHCQ_CPU_SUITE(Linalg, linalg_cases);
NVHCQ_CPU_SUITE(NeuralNet, nn_cases);
NVHCQ_CPU_SUITE(Creation, creation_cases);
NVHCQ_CPU_SUITE(OpErrors, error_cases);
NVHCQ_CPU_SUITE(Models, model_cases);

}  // namespace
}  // namespace nvhcq::optest
