// libFuzzer target for the pushbuffer and QMD encoders and the GPFIFO entry
// writer: the input is a script of encoder calls with arbitrary arguments (huge
// counts, unaligned methods, fields outside the QMD, grid and block sizes beyond
// the hardware's fields, bad constant buffer indices, addresses). Every call must
// either encode exactly what was asked (checked by reading it back) or throw
// nvhcq::Error having changed nothing; nothing else may happen.

#include <fuzzer/FuzzedDataProvider.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "gpu/gpfifo.h"
#include "gpu/hw/methods.h"
#include "gpu/hw/qmd_layout.h"
#include "gpu/pushbuffer.h"
#include "gpu/qmd.h"

namespace {

using nvhcq::Error;
using namespace nvhcq::gpu;  // NOLINT

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "encoder fuzz: %s\n", what);
  std::abort();
}

// Every named field of a layout, to pick from.
std::vector<hw::QmdField> named_fields(const hw::QmdLayout& l) {
  return {l.qmd_major_version,
          l.qmd_minor_version,
          l.qmd_type,
          l.api_visible_call_limit,
          l.sampler_index,
          l.sm_global_caching_enable,
          l.invalidate_texture_header_cache,
          l.invalidate_shader_data_cache,
          l.grid_width,
          l.grid_height,
          l.grid_depth,
          l.cta_thread_dimension0,
          l.cta_thread_dimension1,
          l.cta_thread_dimension2,
          l.register_count,
          l.barrier_count,
          l.shared_memory_size,
          l.min_sm_config_shared_mem_size,
          l.max_sm_config_shared_mem_size,
          l.target_sm_config_shared_mem_size,
          l.shader_local_memory_high_size,
          l.program_address_lower,
          l.program_address_upper,
          l.sass_version,
          l.cwd_membar_type,
          l.dependent_qmd0_pointer,
          l.dependent_qmd0_enable,
          l.release0_address_lower,
          l.release0_payload_upper,
          l.cbuf_addr_lower.at(0),
          l.cbuf_size_shifted4.at(7),
          l.cbuf_valid.at(3)};
}

void pushbuffer_call(FuzzedDataProvider& in, PushBuffer& pb) {
  const uint32_t subch = in.ConsumeIntegralInRange<uint32_t>(0, 12);
  const uint32_t method = in.ConsumeBool() ? in.ConsumeIntegral<uint32_t>()
                                           : in.ConsumeIntegralInRange<uint32_t>(0, 0x8000);
  const uint32_t count = in.ConsumeBool() ? in.ConsumeIntegral<uint32_t>()
                                          : in.ConsumeIntegralInRange<uint32_t>(0, 40);
  // Data for up to kMaxMethodCount words; a larger count must be refused before reading.
  std::vector<uint32_t> data(std::min<uint32_t>(count, hw::kMaxMethodCount) + 1, 0x5a5a5a5a);
  const size_t before = pb.words().size();
  try {
    pb.method(subch, method, data.data(), count);
  } catch (const Error&) {
    if (pb.words().size() != before) fail("a refused method left words behind");
    return;
  }
  if (count == 0 || count > hw::kMaxMethodCount || subch > 7 || (method & 3) != 0 ||
      method >= (1u << 15)) {
    fail("a method the header cannot encode was accepted");
  }
  if (pb.words().size() != before + 1 + count) fail("method appended the wrong number of words");
  if (pb.words()[before] != hw::method_header(subch, method, count)) fail("method header is wrong");
}

void qmd_call(FuzzedDataProvider& in, Qmd& q) {
  const auto fields = named_fields(q.layout());
  try {
    switch (in.ConsumeIntegralInRange<int>(0, 6)) {
      case 0: {  // a named field with any value: stored exactly, or refused
        const hw::QmdField f = fields[in.ConsumeIntegralInRange<size_t>(0, fields.size() - 1)];
        const uint64_t v = in.ConsumeIntegral<uint64_t>() >> in.ConsumeIntegralInRange<int>(0, 63);
        q.set(f, v);
        if (f.present() && q.get(f) != v) fail("a QMD field did not read back");
        break;
      }
      case 1: {  // any bit range at all
        hw::QmdField f{in.ConsumeIntegral<uint16_t>(), in.ConsumeIntegral<uint16_t>()};
        q.set(f, in.ConsumeIntegral<uint64_t>());
        if (f.present() && (f.lo > f.hi || f.hi >= q.size() * 8))
          fail("a field outside the QMD was written");
        break;
      }
      case 2:
        q.set_constant_buffer(in.ConsumeIntegralInRange<uint32_t>(0, 300),
                              in.ConsumeIntegral<uint64_t>(), in.ConsumeIntegral<uint32_t>());
        break;
      case 3: {
        const uint32_t x = in.ConsumeIntegral<uint32_t>(), y = in.ConsumeIntegral<uint32_t>(),
                       z = in.ConsumeIntegral<uint32_t>();
        if (in.ConsumeBool()) {
          q.set_grid(x, y, z);
          if (q.get(q.layout().grid_width) != x || q.get(q.layout().grid_depth) != z)
            fail("grid did not read back");
        } else {
          q.set_block(x, y, z);
        }
        break;
      }
      case 4:
        q.chain_to(in.ConsumeIntegral<uint64_t>() &
                   ~(in.ConsumeBool() ? uint64_t{0xff} : uint64_t{0}));
        break;
      case 5:
        q.set_release(in.ConsumeIntegral<uint64_t>(), in.ConsumeIntegral<uint64_t>());
        break;
      default:
        q.set_program_address(in.ConsumeIntegral<uint64_t>());
        break;
    }
  } catch (const Error&) {
  }
}

void gpfifo_call(FuzzedDataProvider& in, std::vector<uint64_t>& ring, GpfifoRing& fifo,
                 volatile uint32_t& put, volatile uint32_t& get) {
  const uint64_t va =
      in.ConsumeBool() ? in.ConsumeIntegral<uint64_t>() : in.ConsumeIntegral<uint32_t>() & ~3ull;
  const uint32_t words = in.ConsumeBool() ? in.ConsumeIntegral<uint32_t>()
                                          : in.ConsumeIntegralInRange<uint32_t>(0, 64);
  const uint32_t slot = put;
  try {
    fifo.submit(va, words);
  } catch (const Error&) {
    if (put != slot) fail("a refused GPFIFO entry moved GP_PUT");
    return;
  }
  if (words == 0 || words > hw::kMaxGpfifoEntryWords || va >= (1ull << 40) || va % 4 != 0) {
    fail("a GPFIFO entry that cannot be encoded was accepted");
  }
  if (ring[slot] != hw::gpfifo_entry(va, words)) fail("GPFIFO entry is wrong");
  get = put;  // the "GPU" consumes at once, so the ring never fills
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  PushBuffer pb;
  Qmd q(in.ConsumeBool() ? hw::kQmdV04 : hw::kQmdV03);
  std::vector<uint64_t> ring(8, 0);
  volatile uint32_t put = 0, get = 0, doorbell = 0;
  nvhcq::drv::ChannelHandles ch;
  ch.ring = ring.data();
  ch.ring_entries = static_cast<uint32_t>(ring.size());
  ch.gp_put = &put;
  ch.gp_get = &get;
  ch.doorbell = &doorbell;
  ch.token = 7;
  GpfifoRing fifo(ch, [] { fail("the GPFIFO ring stalled although the GPU keeps up"); });
  for (int calls = 0; calls < 256 && in.remaining_bytes() > 0; ++calls) {
    switch (in.ConsumeIntegralInRange<int>(0, 2)) {
      case 0:
        pushbuffer_call(in, pb);
        break;
      case 1:
        qmd_call(in, q);
        break;
      default:
        gpfifo_call(in, ring, fifo, put, get);
        break;
    }
  }
  return 0;
}
