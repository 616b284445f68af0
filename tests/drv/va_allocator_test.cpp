#include "drv/va_allocator.h"

#include <gtest/gtest.h>

#include <vector>

#include "base/error.h"

namespace nvhcq::drv {
namespace {

TEST(VaAllocator, AlignsAndNeverHandsOutOverlappingRanges) {
  VaAllocator va(0x10000, 1 << 30);
  std::vector<std::pair<uint64_t, uint64_t>> got;
  for (uint64_t size : {4096ull, 3 * 4096ull, 2ull << 20, 4096ull, 5ull << 20}) {
    uint64_t align = size >= (2 << 20) ? (2 << 20) : 4096;
    uint64_t base = va.alloc(size, align);
    EXPECT_EQ(base % align, 0u);
    for (auto [b, s] : got) EXPECT_TRUE(base + size <= b || b + s <= base);
    got.push_back({base, size});
  }
}

TEST(VaAllocator, FreeingCoalescesSoCyclesDoNotLeak) {
  VaAllocator va(0x10000, 64 << 20);
  uint64_t before = va.free_bytes();
  for (int i = 0; i < 1000; ++i) {
    uint64_t a = va.alloc(1 << 20, 4096), b = va.alloc(12345 * 8, 4096);
    va.free(a);
    va.free(b);
  }
  EXPECT_EQ(va.free_bytes(), before);
  EXPECT_EQ(va.live_ranges(), 0u);
  EXPECT_EQ(va.alloc(64 << 20, 4096), 0x10000u) << "the whole range is one piece again";
}

TEST(VaAllocator, ReservationsAreNeverHandedOut) {
  VaAllocator va(0, 16ull << 30);
  va.reserve(4ull << 30, 4ull << 30);
  for (int i = 0; i < 12; ++i) {
    uint64_t b = va.alloc(1ull << 30, 1ull << 30);
    EXPECT_FALSE(b >= (4ull << 30) && b < (8ull << 30)) << "allocation inside the window";
  }
  EXPECT_THROW(va.alloc(1ull << 30, 1), OutOfMemoryError);
}

TEST(VaAllocator, BadRequestsAreErrors) {
  VaAllocator va(0, 1 << 20);
  EXPECT_THROW(va.alloc(0, 4096), Error);
  EXPECT_THROW(va.alloc(4096, 3), Error);
  EXPECT_THROW(va.free(0x1234), Error);
  EXPECT_THROW(va.alloc(2 << 20, 4096), OutOfMemoryError);
}

}  // namespace
}  // namespace nvhcq::drv
