// Compiles an embedded kernel file (src/kernels/) for an architecture and writes
// the CUBIN, for disassembly (cuobjdump -sass) and for the CUDA probe.
//   tool_compile_kernel selftest.cu sm_90 out.cubin

#include <cstdio>
#include <fstream>

#include "compile/compiler.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: tool_compile_kernel FILE.cu ARCH OUT.cubin\n");
    return 2;
  }
  try {
    nvhcq::compile::CompileOptions o;
    o.arch = argv[2];
    auto m = nvhcq::compile::compile_embedded(argv[1], o);
    std::ofstream(argv[3], std::ios::binary)
        .write(reinterpret_cast<const char*>(m.cubin.data()), static_cast<std::streamsize>(m.cubin.size()));
    std::printf("%s for %s: %zu bytes -> %s\n", argv[1], argv[2], m.cubin.size(), argv[3]);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
