// The CUBIN loader and the pushbuffer/QMD encoders on hand-made bad input: every
// corruption is a clear nvhcq::Error (FormatError for files), never a crash, a
// huge allocation, or data the loader hands out that lies outside its image.
// (tests/fuzz/cubin_loader_fuzz.cpp and gpu_encoders_fuzz.cpp search further.)

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "gpu/cubin.h"
#include "gpu/hw/methods.h"
#include "gpu/hw/qmd_layout.h"
#include "gpu/pushbuffer.h"
#include "gpu/qmd.h"
#include "support/cubin_builder.h"

namespace nvhcq::gpu {
namespace {

using testing::build_cubin;
using testing::BuiltCubin;
using testing::CubinKernelSpec;
using testing::CubinSpec;

template <typename T>
void poke(std::vector<uint8_t>& b, size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof(T));
}

// Expects the bytes to be refused with a FormatError mentioning `words`.
::testing::AssertionResult refused(const std::vector<uint8_t>& bytes, const std::string& words) {
  try {
    Cubin c(bytes);
  } catch (const FormatError& e) {
    if (std::string(e.what()).find(words) == std::string::npos) {
      return ::testing::AssertionFailure()
             << "FormatError '" << e.what() << "' does not mention '" << words << "'";
    }
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "not a FormatError: " << e.what();
  }
  return ::testing::AssertionFailure() << "accepted";
}

CubinSpec two_kernels() {
  CubinSpec s;
  CubinKernelSpec a;
  a.name = "alpha";
  a.relocation = true;
  a.static_shared_bytes = 2048;
  a.max_threads = 256;
  CubinKernelSpec b;
  b.name = "beta";
  b.param_sizes = {8, 8, 4, 4, 2, 1};
  b.registers = 40;
  b.frame_bytes = 96;
  s.kernels = {a, b};
  return s;
}

TEST(HandMadeCubin, AWellFormedOneIsReadCompletely) {
  BuiltCubin built = build_cubin(two_kernels());
  Cubin c(built.bytes);
  EXPECT_EQ(c.sm_arch(), 90u);
  ASSERT_EQ(c.kernels().size(), 2u);
  const CubinKernel& a = c.kernel("alpha");
  EXPECT_EQ(a.param_base, 0x210u);
  EXPECT_EQ(a.param_bytes, 12u);
  EXPECT_EQ(a.param_offsets, (std::vector<uint32_t>{0, 8}));
  EXPECT_EQ(a.param_sizes, (std::vector<uint32_t>{8, 4}));
  EXPECT_EQ(a.static_shared_bytes, 2048u);
  EXPECT_EQ(a.max_threads, 256u);
  EXPECT_EQ(a.text_size, 256u);
  EXPECT_EQ(a.text_offset % 128, 0u);
  const CubinKernel& b = c.kernel("beta");
  EXPECT_EQ(b.registers, 40u);
  EXPECT_EQ(b.local_bytes_per_thread, 96u);
  EXPECT_EQ(b.param_offsets, (std::vector<uint32_t>{0, 8, 16, 20, 24, 26}));
  ASSERT_EQ(c.relocations().size(), 1u);
  // The relocation writes the GPU address of .nv.constant3 + 0 into alpha's code at +16.
  std::vector<uint8_t> img = c.relocated_image(0x7000000000ull);
  uint64_t patched;
  std::memcpy(&patched, img.data() + a.text_offset + 16, 8);
  EXPECT_EQ(patched, 0x7000000000ull + c.relocations()[0].target);
  EXPECT_LT(c.relocations()[0].target, c.image().size());
}

TEST(HandMadeCubin, EveryTruncationIsAFormatError) {
  BuiltCubin built = build_cubin(two_kernels());
  for (size_t cut = 0; cut < built.bytes.size(); cut += cut < 128 ? 1 : 7) {
    std::vector<uint8_t> bad(built.bytes.begin(), built.bytes.begin() + static_cast<long>(cut));
    try {
      Cubin c(bad);
      ADD_FAILURE() << "a CUBIN cut at " << cut << " of " << built.bytes.size()
                    << " bytes was accepted";
    } catch (const FormatError&) {
    }
  }
}

TEST(HandMadeCubin, BadHeadersAreFormatErrors) {
  const std::vector<uint8_t> good = build_cubin(CubinSpec{}).bytes;
  auto with = [&](auto edit) {
    std::vector<uint8_t> b = good;
    edit(b);
    return b;
  };
  EXPECT_TRUE(refused(with([](auto& b) { b[0] = 0; }), "ELF magic"));
  EXPECT_TRUE(refused(with([](auto& b) { b[4] = 1; }), "64-bit"));
  EXPECT_TRUE(refused(with([](auto& b) { poke<uint16_t>(b, 18, 62); }), "EM_CUDA"));
  EXPECT_TRUE(refused(with([](auto& b) { poke<uint16_t>(b, 58, 40); }), "section header size"));
  EXPECT_TRUE(refused(with([](auto& b) { poke<uint16_t>(b, 60, 0); }), "section name table"));
  EXPECT_TRUE(refused(with([](auto& b) { poke<uint16_t>(b, 62, 999); }), "section name table"));
  EXPECT_TRUE(refused(with([](auto& b) { poke<uint16_t>(b, 60, 0xffff); }), "section header table"))
      << "65535 sections claimed";
  EXPECT_TRUE(
      refused(with([](auto& b) { poke<uint64_t>(b, 40, ~0ull - 8); }), "section header table"));
  EXPECT_TRUE(refused(with([](auto& b) {
                        poke<uint64_t>(b, 32, 1ull << 62);
                        poke<uint16_t>(b, 56, 4);
                      }),
                      "program header"));
}

TEST(HandMadeCubin, BadSectionTablesAreFormatErrors) {
  BuiltCubin built = build_cubin(two_kernels());
  const size_t text = built.header_at.at(".text.alpha"),
               rel = built.header_at.at(".rel.text.alpha");
  const size_t symtab = built.header_at.at(".symtab"), info = built.header_at.at(".nv.info.beta");
  auto with = [&](size_t at, auto value) {
    std::vector<uint8_t> b = built.bytes;
    poke(b, at, value);
    return b;
  };
  EXPECT_TRUE(refused(with(text + BuiltCubin::kOffset, uint64_t{1} << 40), "outside the file"));
  EXPECT_TRUE(refused(with(text + BuiltCubin::kSize, ~uint64_t{0}), "outside the file"));
  EXPECT_TRUE(refused(with(text + BuiltCubin::kOffset, ~uint64_t{0} - 4), "outside the file"));
  EXPECT_TRUE(refused(with(text + BuiltCubin::kAlign, uint64_t{3}), "alignment"));
  EXPECT_TRUE(refused(with(text + BuiltCubin::kAlign, uint64_t{1} << 40), "alignment"));
  // A fixed load address far beyond the file, or one whose end wraps around.
  EXPECT_TRUE(refused(with(text + BuiltCubin::kAddr, uint64_t{1} << 29), "image"));
  EXPECT_TRUE(refused(with(text + BuiltCubin::kAddr, ~uint64_t{0} - 64), "image"));
  // Kernel code that is not loadable.
  EXPECT_TRUE(refused(with(text + BuiltCubin::kType, uint32_t{8}), "code"));
  // The symbol table's string table index, and a relocation's symbol.
  EXPECT_TRUE(refused(with(symtab + BuiltCubin::kLink, uint32_t{5000}), "string table"));
  EXPECT_TRUE(refused(with(info + BuiltCubin::kSize, uint64_t{7}), ".nv.info"));
  (void)rel;
}

TEST(HandMadeCubin, BadRelocationsAreFormatErrors) {
  BuiltCubin built = build_cubin(two_kernels());
  const size_t rel = built.header_at.at(".rel.text.alpha");
  uint64_t rel_data;
  std::memcpy(&rel_data, built.bytes.data() + rel + BuiltCubin::kOffset, 8);
  auto entry = [&](uint64_t where, uint64_t info) {
    std::vector<uint8_t> b = built.bytes;
    poke(b, rel_data, where);
    poke(b, rel_data + 8, info);
    return b;
  };
  EXPECT_TRUE(refused(entry(16, (uint64_t{1} << 32) | 77), "relocation type 77"));
  EXPECT_TRUE(refused(entry(16, (uint64_t{999} << 32) | 2), "symbol"));
  EXPECT_TRUE(refused(entry(255, (uint64_t{1} << 32) | 2), "outside its section"));
  // An offset so large that offset + 8 wraps around to a small number.
  EXPECT_TRUE(refused(entry(~uint64_t{0} - 3, (uint64_t{1} << 32) | 2), "outside its section"));
  EXPECT_TRUE(refused(entry(0, 2), "undefined")) << "symbol 0 is the null symbol";
}

TEST(HandMadeCubin, BadKernelAttributesAreFormatErrors) {
  CubinSpec many_regs;
  many_regs.kernels[0].registers = 300;
  EXPECT_TRUE(refused(build_cubin(many_regs).bytes, "registers"));
  // A parameter that ends beyond the parameter block.
  BuiltCubin built = build_cubin(CubinSpec{});
  const size_t info = built.header_at.at(".nv.info.k");
  uint64_t at;
  std::memcpy(&at, built.bytes.data() + info + BuiltCubin::kOffset, 8);
  std::vector<uint8_t> b = built.bytes;
  // Entries: PARAM_CBANK (4+8), CBANK_PARAM_SIZE (4), KPARAM_INFO for param 0 (4+12):
  // move param 0 to offset 200 of a 12-byte block.
  poke<uint16_t>(b, at + 12 + 4 + 4 + 6, 200);
  EXPECT_TRUE(refused(b, "parameter"));
  // A huge constant bank number in a section name is not a crash.
  CubinSpec spec;
  BuiltCubin c3 = build_cubin(spec);
  std::vector<uint8_t> renamed = c3.bytes;
  const std::string from = ".nv.constant3", to = ".nv.constant9999999999999999999999999";
  // Rename in place: point .nv.constant3's name at a longer string appended to .shstrtab's end.
  const size_t shstr = c3.header_at.at(".shstrtab"), h3 = c3.header_at.at(".nv.constant3");
  uint64_t shstr_off, shstr_size;
  std::memcpy(&shstr_off, renamed.data() + shstr + BuiltCubin::kOffset, 8);
  std::memcpy(&shstr_size, renamed.data() + shstr + BuiltCubin::kSize, 8);
  const uint64_t name_at = renamed.size();
  renamed.insert(renamed.end(), to.begin(), to.end());
  renamed.push_back(0);
  poke<uint64_t>(renamed, shstr + BuiltCubin::kSize, name_at + to.size() + 1 - shstr_off);
  poke<uint32_t>(renamed, h3, static_cast<uint32_t>(name_at - shstr_off));
  EXPECT_TRUE(refused(renamed, "constant bank")) << "after renaming " << from;
}

TEST(Encoders, BadPushbufferMethodsAreErrors) {
  PushBuffer pb;
  uint32_t data[4] = {1, 2, 3, 4};
  EXPECT_THROW(pb.method(0, 0x100, data, 0), Error) << "no data words";
  EXPECT_THROW(pb.method(0, 0x100, data, hw::kMaxMethodCount + 1), Error)
      << "count beyond the header's field";
  EXPECT_THROW(pb.method(0, 0x101, {1}), Error) << "unaligned method";
  EXPECT_THROW(pb.method(0, 1u << 15, {1}), Error) << "method beyond 15 bits";
  EXPECT_THROW(pb.method(8, 0x100, {1}), Error) << "subchannel beyond 7";
  EXPECT_TRUE(pb.empty()) << "a refused method must leave nothing behind";
  pb.method(7, 0x7ffc, data, 4);
  EXPECT_EQ(pb.words().size(), 5u);
  EXPECT_EQ(pb.words()[0], hw::method_header(7, 0x7ffc, 4));
}

TEST(Encoders, QmdFieldsOutsideTheQmdAreErrors) {
  for (const hw::QmdLayout* l : {&hw::kQmdV03, &hw::kQmdV04}) {
    Qmd q(*l);
    const uint16_t bits = static_cast<uint16_t>(l->size_bytes * 8);
    EXPECT_THROW(q.set(hw::QmdField{static_cast<uint16_t>(bits + 31), bits}, 1), Error);
    EXPECT_THROW(q.set(hw::QmdField{3, 9}, 1), Error) << "lo above hi";
    EXPECT_THROW(q.set(hw::QmdField{100, 20}, 1), Error)
        << "a field wider than 64 bits (found by fuzzing)";
    EXPECT_THROW(q.get(hw::QmdField{100, 20}), Error);
    EXPECT_THROW(q.set_constant_buffer(8, 0x1000, 256), Error) << "there are 8 constant buffers";
    EXPECT_THROW(q.set_constant_buffer(1000, 0x1000, 256), Error);
    EXPECT_THROW(q.set_grid(1, 1u << 20, 1), Error) << "grid height is 16 bits";
    EXPECT_THROW(q.set(l->cta_thread_dimension2, 1u << 16), Error)
        << "block dimensions are 16 bits";
    EXPECT_THROW(q.chain_to(0x1001), Error) << "chained QMDs are 256-byte aligned";
    q.set_constant_buffer(7, 0x100000, 4096);
    q.set_grid(0x7fffffff, 65535, 65535);
    EXPECT_EQ(q.get(l->grid_width), 0x7fffffffu);
    EXPECT_EQ(q.get(l->cbuf_valid.at(7)), 1u);
  }
}

}  // namespace
}  // namespace nvhcq::gpu
