// Fault injection: what the simulated GPU refuses, and that the refusal reaches
// the runtime as the real driver reports it (RM: an Xid in the channel's error
// notifier; nvgpu: the channel's error notification), raised as GpuFaultError.
// Also the simulator's own watch over the CPU: memory the GPU has been given
// and not finished with must not change.

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "base/error.h"
#include "gpu/hw/methods.h"
#include "gpu/queue.h"
#include "sim/sim_test_util.h"

namespace nvhcq::sim {
namespace {

using gpu::Buffer;
using gpu::ComputeQueue;
using gpu::CopyQueue;
using gpu::KernelArgs;
using gpu::LaunchDims;
namespace hw = gpu::hw;

class Faults : public SimDeviceTest {
 protected:
  void TearDown() override {
    launch = HandLaunch{};  // buffers go before the device they came from
    out.reset();
    program.reset();
    SimDeviceTest::TearDown();
  }
  // Synchronizes and expects a GpuFaultError naming `code`; returns its text.
  std::string expect_fault(uint32_t code) {
    auto start = std::chrono::steady_clock::now();
    try {
      dev->synchronize();
    } catch (const GpuFaultError& e) {
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2)) << "not prompt";
      std::string what = e.what();
      EXPECT_NE(what.find(error_text(code)), std::string::npos) << what;
      return what;
    }
    ADD_FAILURE() << "no fault was raised";
    return {};
  }
  std::vector<uint8_t> affine_params(uint64_t out, uint32_t n) {
    std::vector<uint8_t> p(20, 0);
    float a = 1.0f, b = 2.0f;
    std::memcpy(p.data(), &out, 8);
    std::memcpy(p.data() + 8, &a, 4);
    std::memcpy(p.data() + 12, &b, 4);
    std::memcpy(p.data() + 16, &n, 4);
    return p;
  }
  // Launches affine_fill through a hand-built QMD that `edit` may spoil.
  // With `hold`, the simulated GPU fetches the launch but does not run it yet.
  void hand_launch(const std::function<void(gpu::Qmd&, std::vector<uint8_t>&)>& edit,
                   bool hold = false) {
    program = std::make_unique<gpu::Program>(load("affine_fill"));
    out = dev->alloc(4096);
    LaunchDims d;
    d.block[0] = 32;
    launch = build_launch(*dev, *program, affine_params(out.va(), 32), d, edit);
    gpu::PushBuffer pb = launch_pushbuffer(launch.qmd_va);
    fetched_before_launch = sim().stats().fetched.load();
    sim().options().hold = hold;
    dev->submit(drv::Engine::kCompute, pb);
  }
  uint64_t fetched_before_launch = 0;
  // Waits until the simulated GPU has fetched `n` more GPFIFO entries (read
  // their pushbuffers and QMDs) than `before`.
  void wait_fetched(uint64_t before, uint64_t n = 1) {
    auto start = std::chrono::steady_clock::now();
    while (sim().stats().fetched.load() < before + n) {
      ASSERT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
      std::this_thread::yield();
    }
  }
  std::unique_ptr<gpu::Program> program;
  Buffer out;
  HandLaunch launch;
};

TEST_P(Faults, AHandBuiltLaunchRunsWhenNothingIsSpoiled) {
  open();
  hand_launch({});
  dev->synchronize();
  EXPECT_EQ(read_u32(out, 32)[31], 0x42040000u) << "31 * 1.0 + 2.0 = 33.0f";
}

TEST_P(Faults, QmdAtAnUnmappedAddressIsAnMmuFault) {
  open();
  gpu::PushBuffer pb = launch_pushbuffer(0xdead000000ull);
  dev->submit(drv::Engine::kCompute, pb);
  std::string what = expect_fault(31);
  if (!tegra()) {
    EXPECT_NE(what.find("MMU fault at 0xdead000000"), std::string::npos) << what;
  }
}

TEST_P(Faults, ProgramAddressOffKnownCodeIsAGraphicsException) {
  open();
  hand_launch([&](gpu::Qmd& q, std::vector<uint8_t>&) {
    q.set_program_address(program->code_va() + 0x40);
  });
  expect_fault(13);
  EXPECT_GE(sim().log().count("no known kernel's code"), 1u);
}

TEST_P(Faults, GridInConstantBankDisagreeingWithTheQmdIsRefused) {
  open();
  hand_launch([](gpu::Qmd&, std::vector<uint8_t>& bank) { bank[0xc] += 1; });
  expect_fault(13);
  EXPECT_GE(sim().log().count("do not match the QMD"), 1u);
}

TEST_P(Faults, FewerRegistersThanCompiledIsRefused) {
  open();
  hand_launch([](gpu::Qmd& q, std::vector<uint8_t>&) { q.set(q.layout().register_count, 1); });
  expect_fault(13);
}

TEST_P(Faults, SharedMemoryConfigurationTooSmallIsRefused) {
  open();
  hand_launch([](gpu::Qmd& q, std::vector<uint8_t>&) {
    q.set(q.layout().min_sm_config_shared_mem_size, 1);
    q.set(q.layout().target_sm_config_shared_mem_size, 1);  // 0 KiB for 1 KiB of shared memory
  });
  expect_fault(13);
}

TEST_P(Faults, InvalidConstantBankIsRefused) {
  open();
  hand_launch([](gpu::Qmd& q, std::vector<uint8_t>&) { q.set(q.layout().cbuf_valid.at(0), 0); });
  expect_fault(13);
}

TEST_P(Faults, BlockLargerThanTheHardwareIsRefused) {
  open();
  hand_launch([](gpu::Qmd& q, std::vector<uint8_t>& bank) {
    q.set_block(32, 32, 2);
    uint32_t dims[3] = {32, 32, 2};
    std::memcpy(bank.data(), dims, 12);
  });
  expect_fault(13);
}

TEST_P(Faults, KernelIndexingPastItsSharedMemoryFaults) {
  open();
  gpu::Program sum = load("block_sum");
  Buffer in = dev->alloc(256 * 4), res = dev->alloc(4096);
  LaunchDims d;
  d.block[0] = 256;
  d.dynamic_shared_bytes = 0;  // block_sum needs blockDim.x floats
  ComputeQueue().exec(sum, KernelArgs().add(res).add(in), d).submit(*dev);
  expect_fault(13);
}

TEST_P(Faults, GlobalAccessInsideTheSharedWindowIsAnSmException) {
  open();
  gpu::Program store = load("store_to");
  ComputeQueue()
      .exec(store, KernelArgs().ptr(dev->windows().shared + 0x200000).add(1u), LaunchDims{})
      .submit(*dev);
  expect_fault(13);
  EXPECT_GE(sim().log().count("inside the shader shared-memory window"), 1u);
}

TEST_P(Faults, CopyToAnUnmappedAddressIsAnMmuFault) {
  open();
  Buffer src = dev->alloc(4096);
  CopyQueue().copy(0xbad000000ull, src.va(), 64).submit(*dev);
  expect_fault(31);
}

TEST_P(Faults, MethodTheClassDoesNotHaveIsRefused) {
  open();
  gpu::PushBuffer pb;
  pb.method(hw::kSubchCompute, 0x1234, {0});
  dev->submit(drv::Engine::kCompute, pb);
  expect_fault(tegra() ? 13 : 69);
}

TEST_P(Faults, BindingAClassTheChannelDoesNotHaveIsRefused) {
  open();
  gpu::PushBuffer pb;
  pb.method(2, hw::host::SET_OBJECT,
            {dev->info().dma_class});  // the copy class, on the compute channel
  dev->submit(drv::Engine::kCompute, pb);
  expect_fault(tegra() ? 13 : 69);
}

TEST_P(Faults, PushbufferRewrittenBeforeTheGpuReadItIsCaught) {
  open();
  gpu::Signal s = dev->new_signal(0), t = dev->new_signal(0);
  Buffer pbmem = dev->alloc(4096, true);
  gpu::PushBuffer pb;
  dev->encode_release(drv::Engine::kCompute, pb, s.va(), 5);
  std::memcpy(pbmem.cpu(), pb.words().data(), pb.size_bytes());
  uint64_t fetched = sim().stats().fetched.load();
  sim().options().hold = true;
  dev->channel(drv::Engine::kCompute)
      .gpfifo->submit(pbmem.va(), static_cast<uint32_t>(pb.words().size()));
  wait_fetched(fetched);
  pbmem.cpu_as<uint32_t>()[3] = 6;  // the payload, changed after the GPU fetched it
  sim().options().hold = false;
  ComputeQueue().signal(t, 1).submit(*dev);
  EXPECT_THROW(dev->wait(t, 1), GpuFaultError);
  EXPECT_EQ(s.value(), 0u) << "the GPU ran a rewritten pushbuffer";
  ASSERT_EQ(sim().log().violations().size(), 1u);
  EXPECT_NE(sim().log().violations()[0].find("rewritten after it was submitted"),
            std::string::npos);
  sim().log().clear();
}

TEST_P(Faults, QmdRewrittenBeforeTheGpuReadItIsCaught) {
  open();
  hand_launch({}, /*hold=*/true);
  wait_fetched(fetched_before_launch);
  // What the seed's QMD-reuse race did: patch a QMD the GPU has fetched but not run.
  launch.memory.cpu_as<uint8_t>()[launch.qmd_offset + 48] ^= 1;
  sim().options().hold = false;
  expect_fault(32);
  ASSERT_EQ(sim().log().violations().size(), 1u);
  EXPECT_NE(sim().log().violations()[0].find("QMD"), std::string::npos)
      << sim().log().violations()[0];
  sim().log().clear();
}

INSTANTIATE_TEST_SUITE_P(Sim, Faults, ::testing::Values("rm", "tegra"), param_name);

}  // namespace
}  // namespace nvhcq::sim
