// libFuzzer target for the CUBIN loader (gpu::Cubin): any byte string must either
// load or be a FormatError/Error; nothing else (a crash, a sanitizer report,
// another exception, a huge allocation caught by -malloc_limit_mb) is allowed.
// What a load accepts must then be safe to use: every kernel's code, constant
// banks and parameters, and every relocation, lie inside the image, and
// relocating the image touches nothing outside it.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "base/error.h"
#include "gpu/cubin.h"

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "cubin fuzz: accepted a CUBIN whose %s\n", what);
  std::abort();
}

bool inside(uint64_t offset, uint64_t size, uint64_t total) {
  return offset <= total && size <= total - offset;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    nvhcq::gpu::Cubin cubin(std::span<const uint8_t>(data, size));
    const uint64_t image = cubin.image().size();
    for (const auto& [name, k] : cubin.kernels()) {
      if (!inside(k.text_offset, k.text_size, image)) fail("kernel code lies outside the image");
      if (k.param_offsets.size() != k.param_sizes.size()) fail("parameter tables disagree");
      for (size_t p = 0; p < k.param_offsets.size(); ++p) {
        if (uint64_t{k.param_offsets[p]} + k.param_sizes[p] > k.param_bytes)
          fail("parameter lies outside its block");
      }
      for (const auto& [bank, where] : k.constant_banks) {
        if (!inside(where.first, where.second, image)) fail("constant bank lies outside the image");
      }
      if (k.registers > 255) fail("kernel uses more than 255 registers");
      if (&cubin.kernel(name) != &k) fail("kernel lookup is inconsistent");
    }
    for (const auto& r : cubin.relocations()) {
      if (!inside(r.image_offset, 8, image)) fail("relocation lies outside the image");
    }
    std::vector<uint8_t> relocated = cubin.relocated_image(0x7f0000000000ull);
    if (relocated.size() != image) fail("relocated image changed size");
    try {
      cubin.kernel("no such kernel in any fuzz input \x01");
      fail("unknown kernel name was found");
    } catch (const nvhcq::Error&) {
    }
  } catch (const nvhcq::FormatError&) {
  } catch (const nvhcq::Error&) {
  }
  return 0;
}
