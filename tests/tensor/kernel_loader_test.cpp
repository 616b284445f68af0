// The NVRTC kernel loader keeps a bounded number of kernels and CUBINs in
// memory: the least recently used go, only after the GPU has finished what was
// launched (a synchronize), kernels still held elsewhere live on, and an evicted
// kernel loads again when asked for. Runs NVRTC (skips where it is absent) over
// the host emulator's accelerator, with loads counted.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "compile/nvrtc_api.h"
#include "emu_device.h"
#include "tensor/gpu/kernel_loader.h"

namespace nvhcq::tensor {
namespace {

namespace fs = std::filesystem;

// A loaded kernel that counts how many of its kind are alive.
class CountedKernel final : public gpu::Kernel {
 public:
  CountedKernel(std::string name, int* alive) : name_(std::move(name)), alive_(alive) { ++*alive_; }
  ~CountedKernel() override { --*alive_; }
  const std::string& name() const override { return name_; }
  uint32_t max_threads_per_block() const override { return 1024; }

 private:
  std::string name_;
  int* alive_;
};

class CountingAccelerator final : public emu::EmuAccelerator {
 public:
  std::unique_ptr<gpu::Kernel> load(const std::vector<uint8_t>& cubin,
                                    const std::string& name) override {
    EXPECT_FALSE(cubin.empty());
    ++loads;
    return std::make_unique<CountedKernel>(name, &alive);
  }
  void synchronize() override {
    ++synchronizes;
    alive_at_last_synchronize = alive;
  }
  int loads = 0, alive = 0, synchronizes = 0, alive_at_last_synchronize = 0;
};

LaunchSpec spec(int i) {
  LaunchSpec s;
  s.file = "loader_test_" + std::to_string(i) + ".cu";
  s.entry = "k" + std::to_string(i);
  s.source = "extern \"C\" __global__ void " + s.entry +
             "(float* p) { p[threadIdx.x] = " + std::to_string(i) + ".0f; }\n";
  s.what = "test kernel " + std::to_string(i);
  return s;
}

class KernelLoaderBounds : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!compile::nvrtc_available()) GTEST_SKIP() << "NVRTC is not installed here";
    std::string tmpl = (fs::temp_directory_path() / "nvhcq-loader-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    ::setenv("NVHCQ_CACHE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("NVHCQ_CACHE_DIR");
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::string dir_;
};

TEST_F(KernelLoaderBounds, TheLeastRecentlyUsedKernelsGoAfterASynchronize) {
  CountingAccelerator acc;
  auto loader = make_nvrtc_loader(acc, LoaderLimits{8, 12});
  std::vector<LaunchSpec> specs;
  for (int i = 0; i < 24; ++i) specs.push_back(spec(i));

  // Kernel 0 is asked for before every other one (always recently used); kernel
  // 1 is held by the caller throughout (as a captured graph holds its kernels).
  auto held = loader->load_all({&specs[1]}).at(0);
  for (int i = 2; i < 24; ++i) {
    loader->load_all({&specs[0]});
    auto k = loader->load_all({&specs[i]}).at(0);
    EXPECT_EQ(k->name(), specs[i].entry);
    EXPECT_LE(acc.alive, 8 + 1 + 1) << "bound, plus the held kernel, plus this one";
  }
  EXPECT_EQ(acc.loads, 24) << "each kernel loaded once so far";
  EXPECT_GT(acc.synchronizes, 0) << "evictions wait for the GPU";
  EXPECT_GT(acc.alive_at_last_synchronize, acc.alive)
      << "evicted kernels are destroyed after the synchronize, not before";
  EXPECT_EQ(held->name(), specs[1].entry) << "a held kernel survives its eviction";

  // Recently used: no reload. Evicted long ago: loaded again (its CUBIN from the
  // disk cache or memory), still correct.
  int before = acc.loads;
  loader->load_all({&specs[0]});
  loader->load_all({&specs[23]});
  EXPECT_EQ(acc.loads, before);
  auto again = loader->load_all({&specs[2]}).at(0);
  EXPECT_EQ(acc.loads, before + 1);
  EXPECT_EQ(again->name(), specs[2].entry);
  EXPECT_EQ(loader->compiled(), 24u)
      << "nothing compiled twice: the disk cache keeps evicted CUBINs";
}

}  // namespace
}  // namespace nvhcq::tensor
