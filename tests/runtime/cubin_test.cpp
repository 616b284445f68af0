#include "gpu/cubin.h"

#include <gtest/gtest.h>

#include <vector>

#include "base/error.h"
#include "compile/compiler.h"
#include "compile/nvrtc_api.h"

namespace nvhcq::gpu {
namespace {

std::vector<uint8_t> selftest_cubin(const std::string& arch) {
  compile::CompileOptions o;
  o.arch = arch;
  return compile::compile_embedded("selftest.cu", o).cubin;
}

class CubinTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!compile::nvrtc_available()) GTEST_SKIP() << "NVRTC is not installed here";
  }
};

TEST_F(CubinTest, ReadsHopperKernelAttributes) {
  Cubin c(selftest_cubin("sm_90"));
  EXPECT_EQ(c.sm_arch(), 90u);
  const CubinKernel& k = c.kernel("affine_fill");
  EXPECT_EQ(k.param_base, 0x210u) << "Hopper puts parameters at c[0][0x210]";
  EXPECT_EQ(k.param_bytes, 20u) << "float* + float + float + unsigned";
  ASSERT_EQ(k.param_sizes.size(), 4u);
  EXPECT_EQ(k.param_offsets[0], 0u);
  EXPECT_EQ(k.param_sizes[0], 8u);
  EXPECT_EQ(k.param_offsets[3], 16u);
  EXPECT_GT(k.registers, 0u);
  EXPECT_GT(k.text_size, 0u);
  EXPECT_LT(k.text_offset + k.text_size, c.image().size() + 1);
  EXPECT_EQ(c.kernel("empty_kernel").param_bytes, 0u);
  const uint32_t* cluster = c.kernel("cluster_partners").cluster_dims;
  EXPECT_EQ(std::vector<uint32_t>(cluster, cluster + 3), (std::vector<uint32_t>{2, 1, 1}))
      << "__cluster_dims__(2, 1, 1)";
  EXPECT_EQ(k.cluster_dims[0] * k.cluster_dims[1] * k.cluster_dims[2], 1u) << "no clusters";
}

TEST_F(CubinTest, ReadsAmpereParameterBase) {
  Cubin c(selftest_cubin("sm_87"));
  EXPECT_EQ(c.sm_arch(), 87u);
  EXPECT_EQ(c.kernel("add_f32").param_base, 0x160u) << "Ampere puts parameters at c[0][0x160]";
  EXPECT_EQ(c.kernel("add_f32").param_bytes, 28u);
}

TEST_F(CubinTest, SharedAndLocalMemoryAreReported) {
  Cubin c(selftest_cubin("sm_90"));
  EXPECT_EQ(c.kernel("block_sum").static_shared_bytes, 1024u)
      << "only dynamic shared memory: the section holds just the 1 KiB the hardware reserves";
  EXPECT_GE(c.kernel("local_memory_walk").local_bytes_per_thread, 256u)
      << "a 64-entry array indexed at run time lives in local memory";
  EXPECT_EQ(c.kernel("affine_fill").local_bytes_per_thread, 0u);
}

TEST_F(CubinTest, NamedBarriersAreReported) {
  Cubin c(selftest_cubin("sm_90"));
  EXPECT_EQ(c.kernel("named_barrier_halves").barriers, 3u) << "bar.sync 1 and 2 (and 0)";
  EXPECT_LE(c.kernel("block_sum").barriers, 1u);
}

TEST_F(CubinTest, UnknownKernelNamesTheKernelsThereAre) {
  Cubin c(selftest_cubin("sm_90"));
  try {
    c.kernel("nope");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("affine_fill"), std::string::npos);
  }
}

TEST_F(CubinTest, TruncatedOrCorruptCubinsAreFormatErrors) {
  std::vector<uint8_t> good = selftest_cubin("sm_90");
  // Every truncation point of the header region and a sample beyond it.
  for (size_t cut = 0; cut < good.size(); cut += (cut < 256 ? 1 : 97)) {
    std::vector<uint8_t> bad(good.begin(), good.begin() + cut);
    EXPECT_THROW(Cubin c(bad), FormatError) << "cut at " << cut;
  }
  std::vector<uint8_t> flipped = good;
  flipped[0x3c] ^= 0xff;  // section count
  EXPECT_THROW(Cubin c(flipped), FormatError);
  std::vector<uint8_t> not_elf = {'n', 'o', 't', ' ', 'e', 'l', 'f'};
  EXPECT_THROW(Cubin c(not_elf), FormatError);
}

TEST_F(CubinTest, RelocationsPatchAbsoluteAddresses) {
  const char* src = R"(
    __device__ unsigned table[4] = {1, 2, 3, 4};
    extern "C" __global__ void read_table(unsigned* out) { out[threadIdx.x] = table[threadIdx.x]; }
  )";
  compile::CompileOptions o;
  o.arch = "sm_90";
  Cubin c(compile::compile(src, "table.cu", o).cubin);
  ASSERT_FALSE(c.relocations().empty()) << "a global variable needs its address patched in";
  auto a = c.relocated_image(0x10000000);
  auto b = c.relocated_image(0x20000000);
  EXPECT_NE(a, b) << "the image depends on where it is loaded";
  EXPECT_EQ(a.size(), c.image().size());
}

}  // namespace
}  // namespace nvhcq::gpu
