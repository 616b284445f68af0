#pragma once
// Pushbuffer methods nvhcq emits, by class (byte offsets of the class's methods
// and the fields of their data words). Written from NVIDIA's class headers:
// host clc56f/clc86f, compute clc6c0/clcbc0, copy clc7b5/clc8b5. The offsets are
// the same from Ampere through Hopper.

#include <cstdint>

namespace nvhcq::gpu::hw {

// Subchannels: the host's methods use 0; nvhcq binds compute to 1 and copy to 4
// (the convention libcuda, Mesa NVK and tinygrad share).
enum Subchannel : uint32_t { kSubchHost = 0, kSubchCompute = 1, kSubchCopy = 4 };

// Method header word: 3 = increasing, 5 = non-increasing, 4 = immediate data.
constexpr uint32_t method_header(uint32_t subch, uint32_t method, uint32_t count) {
  return (1u << 29) | (count << 16) | (subch << 13) | (method >> 2);
}
constexpr uint32_t kMaxMethodCount = 0x1fff;

namespace host {  // *_CHANNEL_GPFIFO_* (clc56f.h, clc86f.h)
constexpr uint32_t SET_OBJECT = 0x0000;
constexpr uint32_t NON_STALL_INTERRUPT = 0x0020;
constexpr uint32_t SEM_ADDR_LO = 0x005c;
constexpr uint32_t SEM_ADDR_HI = 0x0060;
constexpr uint32_t SEM_PAYLOAD_LO = 0x0064;
constexpr uint32_t SEM_PAYLOAD_HI = 0x0068;
constexpr uint32_t SEM_EXECUTE = 0x006c;
constexpr uint32_t WFI = 0x0078;
// SEM_EXECUTE fields.
constexpr uint32_t SEM_EXECUTE_OPERATION_ACQUIRE = 0;
constexpr uint32_t SEM_EXECUTE_OPERATION_RELEASE = 1;
constexpr uint32_t SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ = 3;
constexpr uint32_t SEM_EXECUTE_ACQUIRE_SWITCH_TSG = 1u << 12;
constexpr uint32_t SEM_EXECUTE_RELEASE_WFI = 1u << 20;
constexpr uint32_t SEM_EXECUTE_PAYLOAD_SIZE_64BIT = 1u << 24;
constexpr uint32_t SEM_EXECUTE_RELEASE_TIMESTAMP = 1u << 25;
constexpr uint32_t WFI_SCOPE_ALL = 1;
}  // namespace host

namespace compute {  // *_COMPUTE_* (clc6c0.h, clcbc0.h)
constexpr uint32_t SET_OBJECT = 0x0000;
constexpr uint32_t WAIT_FOR_IDLE = 0x0110;
constexpr uint32_t INVALIDATE_SHADER_CACHES = 0x021c;
constexpr uint32_t INVALIDATE_SKED_CACHES = 0x0298;
constexpr uint32_t SET_SHADER_SHARED_MEMORY_WINDOW_A = 0x02a0;  // upper bits
constexpr uint32_t SET_SHADER_SHARED_MEMORY_WINDOW_B = 0x02a4;  // lower bits
constexpr uint32_t SEND_PCAS_A = 0x02b4;                        // QMD address >> 8
constexpr uint32_t SEND_SIGNALING_PCAS2_B = 0x02c0;
constexpr uint32_t SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A = 0x02e4;  // size upper
constexpr uint32_t SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B = 0x02e8;  // size lower
constexpr uint32_t SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C = 0x02ec;  // max SM count
constexpr uint32_t SET_SHADER_LOCAL_MEMORY_A = 0x0790;                // address upper
constexpr uint32_t SET_SHADER_LOCAL_MEMORY_B = 0x0794;                // address lower
constexpr uint32_t SET_SHADER_LOCAL_MEMORY_WINDOW_A = 0x07b0;
constexpr uint32_t SET_SHADER_LOCAL_MEMORY_WINDOW_B = 0x07b4;
constexpr uint32_t INVALIDATE_SHADER_CACHES_NO_WFI = 0x1698;
constexpr uint32_t SET_REPORT_SEMAPHORE_A = 0x1b00;  // address upper
constexpr uint32_t SET_REPORT_SEMAPHORE_B = 0x1b04;  // address lower
constexpr uint32_t SET_REPORT_SEMAPHORE_C = 0x1b08;  // payload
constexpr uint32_t SET_REPORT_SEMAPHORE_D = 0x1b0c;  // operation
// SEND_SIGNALING_PCAS2_B.PCAS_ACTION: invalidate the scheduler's cached copy of the
// QMD (its memory is reused), fetch it, and schedule it.
constexpr uint32_t PCAS_ACTION_INVALIDATE_PREFETCH_COPY_SCHEDULE = 0x0a;
// INVALIDATE_SHADER_CACHES(_NO_WFI) fields.
constexpr uint32_t INVALIDATE_INSTRUCTION = 1u << 0;
constexpr uint32_t INVALIDATE_GLOBAL_DATA = 1u << 4;
constexpr uint32_t INVALIDATE_CONSTANT = 1u << 12;
}  // namespace compute

namespace copy {  // *_DMA_COPY_* (clc7b5.h, clc8b5.h)
constexpr uint32_t SET_OBJECT = 0x0000;
constexpr uint32_t SET_SEMAPHORE_A = 0x0240;  // address upper
constexpr uint32_t SET_SEMAPHORE_B = 0x0244;  // address lower
constexpr uint32_t SET_SEMAPHORE_PAYLOAD = 0x0248;
constexpr uint32_t SET_SEMAPHORE_PAYLOAD_UPPER = 0x024c;
constexpr uint32_t LAUNCH_DMA = 0x0300;
constexpr uint32_t OFFSET_IN_UPPER = 0x0400;
constexpr uint32_t OFFSET_IN_LOWER = 0x0404;
constexpr uint32_t OFFSET_OUT_UPPER = 0x0408;
constexpr uint32_t OFFSET_OUT_LOWER = 0x040c;
constexpr uint32_t LINE_LENGTH_IN = 0x0418;
// LAUNCH_DMA fields.
constexpr uint32_t LAUNCH_DMA_DATA_TRANSFER_TYPE_NON_PIPELINED = 2u << 0;
constexpr uint32_t LAUNCH_DMA_FLUSH_ENABLE = 1u << 2;
constexpr uint32_t LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_ONE_WORD = 1u << 3;
constexpr uint32_t LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_FOUR_WORD = 2u << 3;
constexpr uint32_t LAUNCH_DMA_SRC_MEMORY_LAYOUT_PITCH = 1u << 7;
constexpr uint32_t LAUNCH_DMA_DST_MEMORY_LAYOUT_PITCH = 1u << 8;
constexpr uint32_t LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE_TWO_WORD = 1u << 27;
// The longest line one LAUNCH_DMA copies (LINE_LENGTH_IN is 32 bits); copies are
// split at 2 GiB to stay clear of the sign bit.
constexpr uint64_t kMaxLineBytes = 1ull << 31;
}  // namespace copy

// GPFIFO entries (clc86f.h): the pushbuffer's GPU address and its length in words.
constexpr uint64_t gpfifo_entry(uint64_t pushbuffer_va, uint32_t words) {
  return (pushbuffer_va & ~3ull) | (static_cast<uint64_t>(words) << 42) | (1ull << 41);
}
constexpr uint32_t kMaxGpfifoEntryWords = (1u << 21) - 1;

}  // namespace nvhcq::gpu::hw
