// Compiles an embedded kernel file (src/kernels/) for an architecture and writes
// the CUBIN, for disassembly (cuobjdump -sass) and for the CUDA probe. With
// --resources it lists each kernel's registers, local memory (spills show
// there) and static shared memory.
//   tool_compile_kernel [--resources] selftest.cu sm_90 out.cubin

#include <cstdio>
#include <fstream>

#include <cstring>

#include "compile/compiler.h"
#include "gpu/cubin.h"

int main(int argc, char** argv) {
  const bool resources = argc > 1 && std::strcmp(argv[1], "--resources") == 0;
  if (resources) {
    --argc;
    ++argv;
  }
  if (argc != 4) {
    std::fprintf(stderr, "usage: tool_compile_kernel [--resources] FILE.cu ARCH OUT.cubin\n");
    return 2;
  }
  try {
    nvhcq::compile::CompileOptions o;
    o.arch = argv[2];
    auto m = nvhcq::compile::compile_embedded(argv[1], o);
    std::ofstream(argv[3], std::ios::binary)
        .write(reinterpret_cast<const char*>(m.cubin.data()), static_cast<std::streamsize>(m.cubin.size()));
    std::printf("%s for %s: %zu bytes -> %s\n", argv[1], argv[2], m.cubin.size(), argv[3]);
    if (resources) {
      const nvhcq::gpu::Cubin cubin(m.cubin);
      for (const auto& [name, k] : cubin.kernels()) {
        std::printf("  %-40s %3u registers, %5u bytes local, %6u bytes static shared\n", name.c_str(), k.registers,
                    k.local_bytes_per_thread, k.static_shared_bytes);
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
