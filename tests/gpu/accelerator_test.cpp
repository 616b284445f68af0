// The Accelerator interface on both backends: the same bodies run on "nv" (the
// direct path) and "cuda" (the driver API).

#include "gpu/accelerator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "base/error.h"
#include "compile/compiler.h"
#include "compile/nvrtc_api.h"
#include "cuda/cuda_accelerator.h"
#include "support/gpu_env.h"

namespace nvhcq::gpu {
namespace {

class AcceleratorTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    NVHCQ_REQUIRE_RM_GPU();
    if (GetParam() == "cuda") NVHCQ_REQUIRE_CUDA();
    if (!compile::nvrtc_available()) GTEST_SKIP() << "NVRTC is not installed";
    acc = cuda::open_accelerator(GetParam());
    compile::CompileOptions o;
    o.arch = acc->arch();
    cubin = compile::compile_embedded("selftest.cu", o).cubin;
  }
  std::vector<float> floats(const DeviceMemory& m, size_t n) {
    std::vector<float> v(n);
    acc->download(v.data(), m, 0, n * 4);
    return v;
  }

  std::unique_ptr<Accelerator> acc;
  std::vector<uint8_t> cubin;
};

TEST_P(AcceleratorTest, LaunchesRunInStreamOrder) {
  auto fill = acc->load(cubin, "affine_fill");
  auto add = acc->load(cubin, "add_f32");
  const uint32_t n = 3000;
  auto x = acc->alloc(n * 4), y = acc->alloc(n * 4), z = acc->alloc(n * 4);
  LaunchDims d;
  d.grid[0] = (n + 255) / 256;
  d.block[0] = 256;
  acc->launch(*fill, KernelArgs().ptr(x->va()).add(2.0f).add(1.0f).add(n), d);
  acc->launch(*fill, KernelArgs().ptr(y->va()).add(-1.0f).add(0.5f).add(n), d);
  acc->launch(*add, KernelArgs().ptr(z->va()).ptr(x->va()).ptr(y->va()).add(n), d);
  acc->synchronize();
  auto v = floats(*z, n);
  for (uint32_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(v[i], i + 1.5f) << i;
}

TEST_P(AcceleratorTest, DeviceCopiesAreByteExactAtAnyAlignment) {
  const size_t n = (1 << 20) + 37;
  std::vector<uint8_t> data(n);
  for (size_t i = 0; i < n; ++i) data[i] = static_cast<uint8_t>(i * 131 + 7);
  auto a = acc->alloc(n), b = acc->alloc(n + 64);
  acc->upload(*a, 0, data.data(), n);
  for (auto [off, len] : std::vector<std::pair<size_t, size_t>>{{0, 1}, {3, 15}, {16, 16}, {5, 4097}, {0, n}}) {
    std::vector<uint8_t> junk(n + 64, 0xee);
    acc->upload(*b, 0, junk.data(), junk.size());
    acc->copy(b->va() + off, a->va(), len);
    acc->synchronize();
    std::vector<uint8_t> back(n + 64);
    acc->download(back.data(), *b, 0, back.size());
    ASSERT_EQ(0, std::memcmp(back.data() + off, data.data(), len)) << off << "+" << len;
    ASSERT_EQ(back[off + len], 0xee) << "copy ran past its end";
    if (off > 0) ASSERT_EQ(back[off - 1], 0xee) << "copy started early";
  }
}

TEST_P(AcceleratorTest, HostMemoryCopiesBothWays) {
  const size_t n = 5 << 20;
  void* host_in = nullptr;
  void* host_out = nullptr;
  auto hin = acc->alloc_host(n, &host_in), hout = acc->alloc_host(n, &host_out);
  auto* in = static_cast<uint32_t*>(host_in);
  for (size_t i = 0; i < n / 4; ++i) in[i] = static_cast<uint32_t>(i ^ 0xa5a5a5a5u);
  std::memset(host_out, 0, n);
  auto dev = acc->alloc(n);
  acc->copy(dev->va(), hin->va(), n);
  acc->copy(hout->va(), dev->va(), n);
  acc->synchronize();
  EXPECT_EQ(0, std::memcmp(host_in, host_out, n));
}

TEST_P(AcceleratorTest, GraphsReplayAndTakeNewArguments) {
  auto fill = acc->load(cubin, "affine_fill");
  const uint32_t n = 512;
  auto x = acc->alloc(n * 4), y = acc->alloc(n * 4);
  LaunchDims d;
  d.grid[0] = 2;
  d.block[0] = 256;
  acc->begin_capture();
  acc->launch(*fill, KernelArgs().ptr(x->va()).add(1.0f).add(0.0f).add(n), d);
  acc->launch(*fill, KernelArgs().ptr(y->va()).add(3.0f).add(0.0f).add(n), d);
  auto g = acc->end_capture();
  ASSERT_EQ(g->launches(), 2u);
  acc->replay(*g);
  acc->synchronize();
  EXPECT_FLOAT_EQ(floats(*y, n)[10], 30.0f);
  g->set_args(1, KernelArgs().ptr(y->va()).add(-2.0f).add(5.0f).add(n));
  for (int i = 0; i < 3; ++i) acc->replay(*g);
  acc->synchronize();
  EXPECT_FLOAT_EQ(floats(*y, n)[10], -15.0f);
  EXPECT_FLOAT_EQ(floats(*x, n)[10], 10.0f);
  EXPECT_THROW(g->set_args(2, KernelArgs()), Error);
}

TEST_P(AcceleratorTest, TimePointsMeasureGpuTime) {
  auto walk = acc->load(cubin, "local_memory_walk");
  auto out = acc->alloc(1 << 20);
  LaunchDims d;
  d.grid[0] = 1024;
  d.block[0] = 256;
  TimePoint t0 = acc->record_time();
  for (int i = 0; i < 20; ++i) acc->launch(*walk, KernelArgs().ptr(out->va()).add(7u), d);
  TimePoint t1 = acc->record_time();
  acc->synchronize();
  double ms = acc->elapsed_ms(t0, t1);
  EXPECT_GT(ms, 0.0);
  EXPECT_LT(ms, 1000.0);
}

// 1 KiB of static and 48 KiB of dynamic shared memory: past the 48 KiB a CTA
// gets without opting in, though the dynamic part alone is not.
TEST_P(AcceleratorTest, StaticAndDynamicSharedMemoryPastTheDefaultLimit) {
  auto k = acc->load(cubin, "shared_static_and_dynamic");
  const uint32_t blocks = 3, dynamic_floats = 48 * 1024 / 4;
  auto out = acc->alloc(blocks * 4);
  const std::vector<float> poison(blocks, -1.0f);
  acc->upload(*out, 0, poison.data(), blocks * 4);
  LaunchDims d;
  d.grid[0] = blocks;
  d.block[0] = 256;
  d.dynamic_shared_bytes = dynamic_floats * 4;
  acc->launch(*k, KernelArgs().ptr(out->va()).add(dynamic_floats), d);
  acc->synchronize();
  double want = 255.0 * 256 / 2;  // the static array's 0..255
  for (uint32_t i = 0; i < dynamic_floats; ++i) want += i % 7;
  for (float got : floats(*out, blocks)) EXPECT_EQ(got, want);
}

TEST_P(AcceleratorTest, AllocationsAreCounted) {
  uint64_t before = acc->allocated_bytes();
  {
    auto m = acc->alloc(3 << 20);
    EXPECT_GE(acc->allocated_bytes(), before + (3 << 20));
  }
  EXPECT_EQ(acc->allocated_bytes(), before);
}

INSTANTIATE_TEST_SUITE_P(Backends, AcceleratorTest, ::testing::Values("nv", "cuda"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nvhcq::gpu
