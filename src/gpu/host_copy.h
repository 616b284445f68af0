#pragma once
// Large host-side copies split across a few threads. Pageable uploads and
// downloads go through pinned staging buffers, and one core's memcpy (~10 GB/s)
// is what bounds them, not the copy engine (~55 GB/s): on the H200 machine a
// 1 GiB pageable download ran at half the CUDA driver's speed until the staging
// copy was spread over threads.

#include <cstddef>

namespace nvhcq::gpu {

// memcpy(dst, src, bytes) with copies of at least kParallelCopyMin bytes cut into
// contiguous pieces copied by up to kCopyThreads threads (this one included).
void host_copy(void* dst, const void* src, size_t bytes);

constexpr size_t kParallelCopyMin = 4 << 20;
constexpr unsigned kCopyThreads = 4;

}  // namespace nvhcq::gpu
