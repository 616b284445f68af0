#pragma once
// Kernel arguments, given in the kernel's parameter order. Program::pack lays
// them out where the CUBIN says each parameter lives and checks count and sizes.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace nvhcq::gpu {

class Buffer;

class KernelArgs {
 public:
  // The largest argument: structs passed by value (as __grid_constant__
  // parameters) up to this size.
  static constexpr size_t kMaxArgBytes = 512;
  struct Arg {
    uint8_t bytes[kMaxArgBytes];
    uint32_t size;
  };

  template <typename T>
  KernelArgs& add(const T& value) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= kMaxArgBytes, "kernel arguments are POD");
    Arg a{};
    std::memcpy(a.bytes, &value, sizeof(T));
    a.size = sizeof(T);
    args_.push_back(a);
    return *this;
  }
  // A buffer argument: the buffer's GPU address plus a byte offset.
  KernelArgs& add(const Buffer& buffer, uint64_t offset = 0);
  KernelArgs& ptr(uint64_t gpu_va) { return add(gpu_va); }

  const std::vector<Arg>& args() const { return args_; }
  size_t count() const { return args_.size(); }
  void set(size_t index, const Arg& arg) { args_.at(index) = arg; }

 private:
  std::vector<Arg> args_;
};

}  // namespace nvhcq::gpu
