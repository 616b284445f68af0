#pragma once
// Hand-made CUBINs for tests and fuzzer seeds: a 64-bit little-endian ELF for
// EM_CUDA with the sections gpu::Cubin reads (.shstrtab, .strtab, .symtab, the
// global .nv.info, and per kernel .text.<k>, .nv.info.<k>, .nv.constant0.<k>,
// optionally .nv.shared.<k> and .rel.text.<k>), laid out as NVRTC lays them out.
// Header-only, so fuzzer seed programs can use it without the test library.
//
// The builder records where each section header lies, so a test can corrupt one
// field (an offset, a size, a count) and expect a FormatError.

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace nvhcq::testing {

struct CubinKernelSpec {
  std::string name = "k";
  uint32_t code_bytes = 256;
  uint32_t param_base = 0x210;                 // where the parameters start in constant bank 0
  std::vector<uint32_t> param_sizes = {8, 4};  // laid out at their natural alignment
  uint32_t registers = 16;
  uint32_t static_shared_bytes = 0;  // a .nv.shared.<k> section when non-zero
  uint32_t frame_bytes = 0;
  uint32_t max_threads = 0;  // __launch_bounds__ when non-zero
  bool relocation = false;   // an R_CUDA_64 at .text+16 to .nv.constant3 + 8
};

struct CubinSpec {
  uint32_t sm = 90;
  std::vector<CubinKernelSpec> kernels = {CubinKernelSpec{}};
};

struct BuiltCubin {
  std::vector<uint8_t> bytes;
  std::map<std::string, size_t> header_at;  // section name -> file offset of its header
  size_t shoff = 0;
  uint16_t shnum = 0;
  // File offsets of a section header's fields.
  static constexpr size_t kType = 4, kAddr = 16, kOffset = 24, kSize = 32, kLink = 40, kInfo = 44,
                          kAlign = 48;
};

namespace cubin_detail {

inline void put(std::vector<uint8_t>& b, size_t at, const void* p, size_t n) {
  if (n == 0) return;
  if (b.size() < at + n) b.resize(at + n, 0);
  std::memcpy(b.data() + at, p, n);
}
template <typename T>
void put_le(std::vector<uint8_t>& b, size_t at, T v) {
  put(b, at, &v, sizeof(T));
}
template <typename T>
void append(std::vector<uint8_t>& b, T v) {
  put_le(b, b.size(), v);
}

struct Section {
  std::string name;
  uint32_t type = 1;
  uint64_t flags = 0;
  std::vector<uint8_t> data;
  uint64_t nobits_size = 0;
  uint32_t link = 0, info = 0;
  uint64_t align = 4, entsize = 0;
};

// An .nv.info entry with data (EIFMT_SVAL) or a 16-bit value (EIFMT_HVAL).
inline void attr_sval(std::vector<uint8_t>& b, uint8_t attr, const std::vector<uint8_t>& data) {
  append<uint8_t>(b, 4);
  append<uint8_t>(b, attr);
  append<uint16_t>(b, static_cast<uint16_t>(data.size()));
  b.insert(b.end(), data.begin(), data.end());
}
inline void attr_hval(std::vector<uint8_t>& b, uint8_t attr, uint16_t value) {
  append<uint8_t>(b, 3);
  append<uint8_t>(b, attr);
  append<uint16_t>(b, value);
}
inline std::vector<uint8_t> words(std::initializer_list<uint32_t> w) {
  std::vector<uint8_t> b;
  for (uint32_t x : w) append(b, x);
  return b;
}

}  // namespace cubin_detail

inline BuiltCubin build_cubin(const CubinSpec& spec) {
  using namespace cubin_detail;
  constexpr uint32_t kProgbits = 1, kSymtab = 2, kStrtab = 3, kNobits = 8, kRel = 9,
                     kNvInfo = 0x70000000;
  std::vector<Section> sections(1);  // [0]: the null section
  auto add = [&](Section s) {
    sections.push_back(std::move(s));
    return static_cast<uint32_t>(sections.size() - 1);
  };
  const uint32_t shstrtab = add({".shstrtab", kStrtab});
  const uint32_t strtab = add({".strtab", kStrtab});
  const uint32_t symtab = add({".symtab", kSymtab});
  const uint32_t global_info = add({".nv.info", kNvInfo});
  const uint32_t const3 = add({".nv.constant3", kProgbits});
  sections[const3].data.assign(64, 0x33);

  std::vector<uint8_t> names(1, 0);  // .strtab: symbol names
  struct Sym {
    uint32_t name;
    uint8_t info;
    uint16_t shndx;
    uint64_t value, size;
  };
  std::vector<Sym> syms = {{0, 0, 0, 0, 0}};
  auto add_name = [&](const std::string& n) {
    uint32_t at = static_cast<uint32_t>(names.size());
    names.insert(names.end(), n.begin(), n.end());
    names.push_back(0);
    return at;
  };
  syms.push_back(
      {add_name(".nv.constant3"), 3, static_cast<uint16_t>(const3), 0, 0});  // section symbol
  const uint32_t const3_sym = 1;

  for (const CubinKernelSpec& k : spec.kernels) {
    Section text{".text." + k.name, kProgbits, 6};
    text.align = 128;
    text.data.resize(k.code_bytes);
    for (uint32_t i = 0; i < k.code_bytes; ++i)
      text.data[i] = static_cast<uint8_t>(i * 37 + k.name.size());
    const uint32_t text_index = add(text);
    const uint32_t sym = static_cast<uint32_t>(syms.size());
    syms.push_back({add_name(k.name), 0x12, static_cast<uint16_t>(text_index), 0, k.code_bytes});

    // Parameters at their natural alignment after param_base.
    std::vector<uint32_t> offsets;
    uint32_t off = 0;
    for (uint32_t s : k.param_sizes) {
      uint32_t a = s >= 8 ? 8 : s;
      off = (off + a - 1) / a * a;
      offsets.push_back(off);
      off += s;
    }
    const uint32_t param_bytes = off;
    Section info{".nv.info." + k.name, kNvInfo};
    attr_sval(info.data, 0x0a, words({0, (param_bytes << 16) | k.param_base}));  // PARAM_CBANK
    attr_hval(info.data, 0x19, static_cast<uint16_t>(param_bytes));              // CBANK_PARAM_SIZE
    for (size_t p = 0; p < k.param_sizes.size(); ++p) {                          // KPARAM_INFO
      attr_sval(info.data, 0x17,
                words({0, (offsets[p] << 16) | static_cast<uint32_t>(p),
                       (k.param_sizes[p] << 18) | 0x1f000}));
    }
    if (k.max_threads != 0)
      attr_sval(info.data, 0x05, words({k.max_threads, 1, 1}));  // MAX_THREADS
    info.link = symtab;
    info.info = text_index;
    add(info);
    Section c0{".nv.constant0." + k.name, kProgbits, 2};
    c0.data.assign(k.param_base + param_bytes, 0);
    add(c0);
    if (k.static_shared_bytes != 0) {
      Section sh{".nv.shared." + k.name, kNobits, 3};
      sh.nobits_size = k.static_shared_bytes;
      add(sh);
    }
    if (k.relocation) {
      Section rel{".rel.text." + k.name, kRel};
      append<uint64_t>(rel.data, 16);                                // r_offset
      append<uint64_t>(rel.data, (uint64_t{const3_sym} << 32) | 2);  // R_CUDA_64
      rel.link = symtab;
      rel.info = text_index;
      rel.entsize = 16;
      rel.align = 8;
      add(rel);
    }
    attr_sval(sections[global_info].data, 0x2f, words({sym, k.registers}));    // REGCOUNT
    attr_sval(sections[global_info].data, 0x11, words({sym, k.frame_bytes}));  // FRAME_SIZE
  }
  // The symbol table and the string tables.
  for (const Sym& s : syms) {
    auto& d = sections[symtab].data;
    append(d, s.name);
    append(d, s.info);
    append<uint8_t>(d, 0);
    append(d, s.shndx);
    append(d, s.value);
    append(d, s.size);
  }
  sections[symtab].link = strtab;
  sections[symtab].entsize = 24;
  sections[symtab].align = 8;
  sections[strtab].data = names;
  std::vector<uint8_t> shnames(1, 0);
  std::vector<uint32_t> shname_at(sections.size(), 0);
  for (size_t i = 1; i < sections.size(); ++i) {
    shname_at[i] = static_cast<uint32_t>(shnames.size());
    shnames.insert(shnames.end(), sections[i].name.begin(), sections[i].name.end());
    shnames.push_back(0);
  }
  sections[shstrtab].data = shnames;

  BuiltCubin out;
  std::vector<uint8_t>& b = out.bytes;
  b.assign(64, 0);
  const uint8_t ident[16] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0x33, 7};
  put(b, 0, ident, 16);
  put_le<uint16_t>(b, 16, 2);    // ET_EXEC
  put_le<uint16_t>(b, 18, 190);  // EM_CUDA
  put_le<uint32_t>(b, 20, 1);
  put_le<uint32_t>(b, 48, (spec.sm << 8) | spec.sm);  // e_flags: SM version in bits 15:8
  put_le<uint16_t>(b, 52, 64);                        // e_ehsize
  put_le<uint16_t>(b, 54, 56);                        // e_phentsize (no program headers)
  std::vector<uint64_t> offset(sections.size(), 0);
  for (size_t i = 1; i < sections.size(); ++i) {
    const uint64_t a = sections[i].align;
    uint64_t at = (b.size() + a - 1) / a * a;
    offset[i] = at;
    if (sections[i].type != kNobits) put(b, at, sections[i].data.data(), sections[i].data.size());
  }
  out.shoff = (b.size() + 7) / 8 * 8;
  out.shnum = static_cast<uint16_t>(sections.size());
  put_le<uint64_t>(b, 40, out.shoff);
  put_le<uint16_t>(b, 58, 64);
  put_le<uint16_t>(b, 60, out.shnum);
  put_le<uint16_t>(b, 62, static_cast<uint16_t>(shstrtab));
  for (size_t i = 0; i < sections.size(); ++i) {
    const Section& s = sections[i];
    const size_t h = out.shoff + i * 64;
    b.resize(h + 64, 0);
    if (i == 0) continue;
    out.header_at[s.name] = h;
    put_le<uint32_t>(b, h + 0, shname_at[i]);
    put_le<uint32_t>(b, h + 4, s.type);
    put_le<uint64_t>(b, h + 8, s.flags);
    put_le<uint64_t>(b, h + 24, offset[i]);
    put_le<uint64_t>(b, h + 32, s.type == kNobits ? s.nobits_size : s.data.size());
    put_le<uint32_t>(b, h + 40, s.link);
    put_le<uint32_t>(b, h + 44, s.info);
    put_le<uint64_t>(b, h + 48, s.align);
    put_le<uint64_t>(b, h + 56, s.entsize);
  }
  return out;
}

}  // namespace nvhcq::testing
