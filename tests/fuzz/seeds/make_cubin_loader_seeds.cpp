// Writes the seed corpus of the CUBIN loader fuzzer into the folder given as the
// only argument: hand-made CUBINs of several shapes (tests/support/cubin_builder.h),
// and, where NVRTC is installed, the real CUBINs of the self-test kernels for
// sm_87 and sm_90.

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "compile/compiler.h"
#include "compile/nvrtc_api.h"
#include "support/cubin_builder.h"

namespace {

void write(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  using nvhcq::testing::build_cubin;
  using nvhcq::testing::CubinKernelSpec;
  using nvhcq::testing::CubinSpec;
  write(dir + "/one_kernel", build_cubin(CubinSpec{}).bytes);
  CubinSpec rich;
  rich.sm = 87;
  CubinKernelSpec a;
  a.name = "alpha";
  a.relocation = true;
  a.static_shared_bytes = 4096;
  a.max_threads = 128;
  a.param_base = 0x160;
  CubinKernelSpec b;
  b.name = "beta";
  b.param_sizes = {8, 8, 8, 4, 4, 2, 1, 1};
  b.registers = 64;
  b.frame_bytes = 512;
  rich.kernels = {a, b};
  write(dir + "/two_kernels", build_cubin(rich).bytes);
  CubinSpec none;
  none.kernels.clear();
  write(dir + "/no_kernels", build_cubin(none).bytes);
  int real = 0;
  if (nvhcq::compile::nvrtc_available()) {
    for (const char* arch : {"sm_87", "sm_90"}) {
      try {
        nvhcq::compile::CompileOptions o;
        o.arch = arch;
        write(dir + "/selftest_" + arch, nvhcq::compile::compile_embedded("selftest.cu", o).cubin);
        ++real;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "make_cubin_loader_seeds: %s: %s\n", arch, e.what());
      }
    }
  }
  std::printf("cubin seeds: 3 hand-made, %d from NVRTC\n", real);
  return 0;
}
