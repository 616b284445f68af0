#include "gpu/pushbuffer.h"

#include "base/error.h"

namespace nvhcq::gpu {

PushBuffer& PushBuffer::method(uint32_t subch, uint32_t mthd, std::initializer_list<uint32_t> data) {
  return method(subch, mthd, data.begin(), static_cast<uint32_t>(data.size()));
}

PushBuffer& PushBuffer::method(uint32_t subch, uint32_t mthd, const uint32_t* data, uint32_t count) {
  if (count == 0 || count > hw::kMaxMethodCount) {
    throw Error("pushbuffer method with " + std::to_string(count) + " data words");
  }
  if ((mthd & 3) != 0 || mthd >= (1u << 15) || subch > 7) {
    throw Error("bad pushbuffer method 0x" + std::to_string(mthd) + " on subchannel " +
                std::to_string(subch));
  }
  words_.push_back(hw::method_header(subch, mthd, count));
  words_.insert(words_.end(), data, data + count);
  return *this;
}

}  // namespace nvhcq::gpu
