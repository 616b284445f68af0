// host_copy: byte-exact for sizes below, at and above the threshold where the
// copy is split across threads, including sizes that are no multiple of the
// piece or of a page, and unaligned ends.

#include "gpu/host_copy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace nvhcq::gpu {
namespace {

TEST(HostCopy, EverySizeClassIsByteExact) {
  const size_t sizes[] = {0,
                          1,
                          4095,
                          4096,
                          kParallelCopyMin - 1,
                          kParallelCopyMin,
                          kParallelCopyMin + 12345,
                          3 * kParallelCopyMin + 4097,
                          64u << 20};
  for (size_t n : sizes) {
    for (size_t offset : {size_t{0}, size_t{3}}) {
      std::vector<uint8_t> src(n + offset), dst(n + offset + 8, 0xcd);
      for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 131 + (i >> 12));
      host_copy(dst.data() + offset, src.data() + offset, n);
      for (size_t i = 0; i < offset; ++i) ASSERT_EQ(dst[i], 0xcd) << "before, size " << n;
      for (size_t i = offset; i < n + offset; ++i) {
        ASSERT_EQ(dst[i], src[i]) << "size " << n << " offset " << offset << " byte " << i;
      }
      for (size_t i = n + offset; i < dst.size(); ++i)
        ASSERT_EQ(dst[i], 0xcd) << "after, size " << n;
    }
  }
}

}  // namespace
}  // namespace nvhcq::gpu
