#include "gpu/cubin.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "gpu/hw/qmd_layout.h"

namespace nvhcq::gpu {
namespace {

// ELF64 and CUBIN constants (elf.h; NVIDIA's cubin attribute ids as documented
// by cuobjdump's output and the open tools that read .nv.info).
constexpr uint16_t kEmCuda = 190;
constexpr uint32_t kShtProgbits = 1, kShtSymtab = 2, kShtRela = 4, kShtNobits = 8, kShtRel = 9;
// A symbol's type (the low nibble of st_info) when it names a function.
constexpr uint8_t kSttFunc = 2;
constexpr uint8_t kEifmtSval = 4;
enum Eiattr : uint8_t {
  kMaxThreads = 0x05,
  kParamCbank = 0x0a,
  kReqntid = 0x10,
  kFrameSize = 0x11,
  kMinStackSize = 0x12,
  kKparamInfo = 0x17,
  kCbankParamSize = 0x19,
  kMaxStackSize = 0x23,
  kRegcount = 0x2f,
  kCtaPerCluster = 0x3d,  // __cluster_dims__: three u32
  kNumBarriers = 0x4c,    // named barriers the code uses (bar.sync 0..n-1)
};
constexpr uint32_t kRCuda64 = 2, kRCudaAbs32Lo32 = 0x38, kRCudaAbs32Hi32 = 0x39;
constexpr uint64_t kCodeAlign = 128;

struct Section {
  std::string name;
  uint32_t type = 0;
  uint64_t addr = 0, offset = 0, size = 0, align = 1, entsize = 0;
  uint32_t link = 0, info = 0;
  uint64_t image_offset = UINT64_MAX;  // where a loadable section went in the image
};

struct Symbol {
  std::string name;
  uint16_t shndx = 0;
  uint64_t value = 0;
};

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> b) : bytes_(b) {}
  template <typename T>
  T at(uint64_t off) const {
    if (off > bytes_.size() || sizeof(T) > bytes_.size() - off) {
      throw FormatError("CUBIN is truncated: read of " + std::to_string(sizeof(T)) +
                        " bytes at offset " + std::to_string(off) + " past its " +
                        std::to_string(bytes_.size()) + " bytes");
    }
    T v;
    std::memcpy(&v, bytes_.data() + off, sizeof(T));
    return v;
  }
  std::span<const uint8_t> slice(uint64_t off, uint64_t size, const std::string& what) const {
    if (off > bytes_.size() || size > bytes_.size() - off) {
      throw FormatError("CUBIN " + what + " lies outside the file");
    }
    return bytes_.subspan(off, size);
  }
  std::string cstr(std::span<const uint8_t> table, uint64_t off) const {
    if (off >= table.size()) throw FormatError("CUBIN string offset out of range");
    auto end = std::find(table.begin() + off, table.end(), 0);
    if (end == table.end()) throw FormatError("CUBIN string is not terminated");
    return std::string(table.begin() + off, end);
  }

 private:
  std::span<const uint8_t> bytes_;
};

uint64_t align_up(uint64_t v, uint64_t a) { return a <= 1 ? v : (v + a - 1) / a * a; }

// Walks an .nv.info section: calls fn(attribute, data) for each entry.
template <typename Fn>
void for_each_attribute(std::span<const uint8_t> info, Fn fn) {
  uint64_t off = 0;
  while (off + 4 <= info.size()) {
    uint8_t format = info[off];
    uint8_t attr = info[off + 1];
    uint16_t value;
    std::memcpy(&value, info.data() + off + 2, 2);
    if (format == kEifmtSval) {
      if (off + 4 + value > info.size()) throw FormatError("CUBIN .nv.info entry overruns its section");
      fn(attr, info.subspan(off + 4, value), value);
      off += 4 + value;
    } else {
      fn(attr, std::span<const uint8_t>(), value);
      off += 4;
    }
  }
}

uint32_t u32_at(std::span<const uint8_t> d, size_t off) {
  if (off + 4 > d.size()) throw FormatError("CUBIN attribute is too short");
  uint32_t v;
  std::memcpy(&v, d.data() + off, 4);
  return v;
}

uint16_t u16_at(std::span<const uint8_t> d, size_t off) {
  if (off + 2 > d.size()) throw FormatError("CUBIN attribute is too short");
  uint16_t v;
  std::memcpy(&v, d.data() + off, 2);
  return v;
}

}  // namespace

Cubin::Cubin(std::span<const uint8_t> bytes) {
  Reader r(bytes);
  if (bytes.size() < 64 || bytes[0] != 0x7f || bytes[1] != 'E' || bytes[2] != 'L' || bytes[3] != 'F') {
    throw FormatError("not a CUBIN: missing the ELF magic");
  }
  if (bytes[4] != 2 || bytes[5] != 1) throw FormatError("not a CUBIN: only 64-bit little-endian ELF");
  if (r.at<uint16_t>(18) != kEmCuda) throw FormatError("not a CUBIN: ELF machine is not EM_CUDA");
  // e_flags carries the SM version in bits 15:8 (0x5a for sm_90).
  uint32_t flags = r.at<uint32_t>(48);
  sm_arch_ = (flags >> 8) & 0xff;
  uint64_t phoff = r.at<uint64_t>(32);
  uint16_t phentsize = r.at<uint16_t>(54), phnum = r.at<uint16_t>(56);
  r.slice(phoff, static_cast<uint64_t>(phnum) * phentsize, "program header table");
  uint64_t shoff = r.at<uint64_t>(40);
  uint16_t shentsize = r.at<uint16_t>(58), shnum = r.at<uint16_t>(60), shstrndx = r.at<uint16_t>(62);
  if (shentsize != 64) throw FormatError("CUBIN section header size is not 64");
  if (shnum == 0 || shstrndx >= shnum) throw FormatError("CUBIN has no section name table");
  r.slice(shoff, static_cast<uint64_t>(shnum) * 64, "section header table");

  std::vector<Section> sections(shnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    uint64_t h = shoff + i * 64ull;
    Section& s = sections[i];
    s.type = r.at<uint32_t>(h + 4);
    s.addr = r.at<uint64_t>(h + 16);
    s.offset = r.at<uint64_t>(h + 24);
    s.size = r.at<uint64_t>(h + 32);
    s.link = r.at<uint32_t>(h + 40);
    s.info = r.at<uint32_t>(h + 44);
    s.align = std::max<uint64_t>(1, r.at<uint64_t>(h + 48));
    s.entsize = r.at<uint64_t>(h + 56);
    if (s.align > (1ull << 20) || (s.align & (s.align - 1)) != 0) {
      throw FormatError("CUBIN section alignment is not a sane power of two");
    }
    if (s.type != kShtNobits && s.type != 0) r.slice(s.offset, s.size, "section contents");
  }
  auto shstr = r.slice(sections[shstrndx].offset, sections[shstrndx].size, "section name table");
  for (uint16_t i = 0; i < shnum; ++i) {
    sections[i].name = r.cstr(shstr, r.at<uint32_t>(shoff + i * 64ull));
  }

  // Lay out loadable sections: fixed addresses first, the rest appended aligned.
  // The image is bounded by what the file can describe (its sections' bytes plus
  // alignment padding), so a corrupt address or alignment cannot ask for gigabytes.
  const uint64_t max_image =
      std::min<uint64_t>(1ull << 30, 64 * static_cast<uint64_t>(bytes.size()) + (1u << 20));
  auto too_large = [&](uint64_t size) {
    return FormatError("CUBIN image would be " + std::to_string(size) + " bytes, more than its " +
                       std::to_string(bytes.size()) + "-byte file can describe (at most " +
                       std::to_string(max_image) + ")");
  };
  uint64_t image_size = 0;
  for (auto& s : sections) {
    if (s.type != kShtProgbits || s.addr == 0) continue;
    if (s.addr > max_image || s.size > max_image - s.addr) {
      throw too_large(s.addr > max_image ? s.addr : s.addr + s.size);
    }
    image_size = std::max(image_size, s.addr + s.size);
  }
  image_.assign(image_size, 0);
  for (auto& s : sections) {
    if (s.type != kShtProgbits) continue;
    if (s.addr != 0) {
      s.image_offset = s.addr;
    } else {
      s.image_offset = align_up(image_.size(), std::max(s.align, kCodeAlign));
      if (s.image_offset + s.size > max_image) throw too_large(s.image_offset + s.size);
      image_.resize(s.image_offset + s.size, 0);
    }
    auto content = r.slice(s.offset, s.size, "section " + s.name);
    std::copy(content.begin(), content.end(), image_.begin() + s.image_offset);
  }

  // Symbols.
  std::vector<Symbol> symbols;
  for (const auto& s : sections) {
    if (s.type != kShtSymtab) continue;
    if (s.link >= shnum) throw FormatError("CUBIN symbol table names a bad string table");
    auto strtab = r.slice(sections[s.link].offset, sections[s.link].size, "symbol names");
    uint64_t count = s.size / 24;
    for (uint64_t k = 0; k < count; ++k) {
      uint64_t e = s.offset + k * 24;
      Symbol sym;
      sym.name = r.cstr(strtab, r.at<uint32_t>(e));
      sym.shndx = r.at<uint16_t>(e + 6);
      sym.value = r.at<uint64_t>(e + 8);
      if ((r.at<uint8_t>(e + 4) & 0xf) == kSttFunc) functions_.push_back(sym.name);
      symbols.push_back(std::move(sym));
    }
  }
  auto symbol_section = [&](uint64_t index) -> const Section& {
    if (index >= symbols.size()) throw FormatError("CUBIN refers to a symbol that does not exist");
    uint16_t shndx = symbols[index].shndx;
    if (shndx == 0 || shndx >= shnum) {
      throw FormatError("CUBIN symbol '" + symbols[index].name + "' is undefined");
    }
    return sections[shndx];
  };

  // Relocations.
  for (const auto& s : sections) {
    if (s.type != kShtRel && s.type != kShtRela) continue;
    uint64_t entry = s.type == kShtRela ? 24 : 16;
    if (s.info == 0 || s.info >= shnum) continue;
    const Section& target = sections[s.info];
    if (target.image_offset == UINT64_MAX) continue;  // relocates something not loaded
    for (uint64_t k = 0; k < s.size / entry; ++k) {
      uint64_t e = s.offset + k * entry;
      uint64_t where = r.at<uint64_t>(e);
      uint64_t info = r.at<uint64_t>(e + 8);
      int64_t addend = s.type == kShtRela ? r.at<int64_t>(e + 16) : 0;
      const Section& sym_section = symbol_section(info >> 32);
      if (sym_section.image_offset == UINT64_MAX) {
        throw FormatError("CUBIN relocation targets a section that is not loaded");
      }
      uint32_t type = static_cast<uint32_t>(info);
      if (type != kRCuda64 && type != kRCudaAbs32Lo32 && type != kRCudaAbs32Hi32) {
        throw FormatError("CUBIN uses relocation type " + std::to_string(type) +
                          ", which nvhcq does not apply");
      }
      if (where > target.size || target.size - where < 8) {
        throw FormatError("CUBIN relocation lies outside its section");
      }
      relocations_.push_back(CubinRelocation{target.image_offset + where,
                                             sym_section.image_offset + symbols[info >> 32].value +
                                                 static_cast<uint64_t>(addend),
                                             type});
    }
  }

  // Kernels: each .text.<name> with its .nv.info.<name>.
  std::map<std::string, const Section*> by_name;
  for (const auto& s : sections) by_name[s.name] = &s;
  std::map<std::string, uint32_t> symbol_index;
  for (size_t k = 0; k < symbols.size(); ++k) symbol_index[symbols[k].name] = static_cast<uint32_t>(k);

  for (const auto& s : sections) {
    if (s.name.rfind(".text.", 0) != 0) continue;
    std::string name = s.name.substr(6);
    auto info_it = by_name.find(".nv.info." + name);
    if (info_it == by_name.end()) continue;  // a device function, not a kernel
    if (s.image_offset == UINT64_MAX) {
      throw FormatError("CUBIN kernel '" + name + "' has no loadable code section (" + s.name + ")");
    }
    CubinKernel k;
    k.name = name;
    k.text_offset = s.image_offset;
    k.text_size = s.size;
    if (auto sh = by_name.find(".nv.shared." + name); sh != by_name.end()) {
      k.static_shared_bytes = static_cast<uint32_t>(sh->second->size);
    }
    const Section& info = *info_it->second;
    for_each_attribute(r.slice(info.offset, info.size, "kernel attributes"),
                       [&](uint8_t attr, std::span<const uint8_t> d, uint16_t value) {
                         switch (attr) {
                           case kParamCbank:
                             k.param_base = u16_at(d, 4);
                             k.param_bytes = std::max<uint32_t>(k.param_bytes, u16_at(d, 6));
                             break;
                           case kCbankParamSize:
                             k.param_bytes = std::max<uint32_t>(k.param_bytes, value);
                             break;
                           case kKparamInfo: {
                             uint32_t ordinal = u16_at(d, 4);
                             if (ordinal > 4096) throw FormatError("CUBIN parameter ordinal is absurd");
                             if (k.param_offsets.size() <= ordinal) {
                               k.param_offsets.resize(ordinal + 1, 0);
                               k.param_sizes.resize(ordinal + 1, 0);
                             }
                             k.param_offsets[ordinal] = u16_at(d, 6);
                             k.param_sizes[ordinal] = (u32_at(d, 8) >> 18) & 0x3fff;
                             break;
                           }
                           case kMaxThreads:
                             k.max_threads = u32_at(d, 0) * u32_at(d, 4) * u32_at(d, 8);
                             break;
                           case kReqntid:
                             for (int a = 0; a < 3; ++a) k.required_threads[a] = u32_at(d, 4 * a);
                             break;
                           case kNumBarriers:
                             k.barriers = value & 0xff;
                             break;
                           case kCtaPerCluster: {
                             uint64_t blocks = 1;
                             for (int a = 0; a < 3; ++a) {
                               k.cluster_dims[a] = u32_at(d, 4 * a);
                               blocks *= k.cluster_dims[a];
                             }
                             if (blocks == 0 || blocks > hw::kMaxClusterBlocks) {
                               throw FormatError("CUBIN cluster dimensions of " + k.name +
                                                 " are not a cluster of 1 to " +
                                                 std::to_string(hw::kMaxClusterBlocks) + " blocks");
                             }
                             break;
                           }
                           default:
                             break;
                         }
                       });
    for (const auto& c : sections) {
      // .nv.constantN.<kernel> for N != 0 holds compiler constants the kernel reads.
      const std::string prefix = ".nv.constant";
      if (c.name.rfind(prefix, 0) != 0 || c.image_offset == UINT64_MAX) continue;
      std::string rest = c.name.substr(prefix.size());
      size_t dot = rest.find('.');
      std::string bank = rest.substr(0, dot);
      if (bank.empty() || bank == "0" || bank.find_first_not_of("0123456789") != std::string::npos) {
        continue;
      }
      if (bank.size() > 2) {
        throw FormatError("CUBIN section " + c.name + " names constant bank " + bank +
                          ", which no GPU has");
      }
      if (dot != std::string::npos && rest.substr(dot + 1) != name) continue;
      k.constant_banks[static_cast<uint32_t>(std::stoul(bank))] = {c.image_offset, c.size};
    }
    kernels_[name] = std::move(k);
  }

  // Per-function resources in the global .nv.info, keyed by symbol index.
  if (auto gi = by_name.find(".nv.info"); gi != by_name.end()) {
    std::map<uint32_t, CubinKernel*> by_symbol;
    for (auto& [name, k] : kernels_) {
      if (auto it = symbol_index.find(name); it != symbol_index.end()) by_symbol[it->second] = &k;
    }
    for_each_attribute(r.slice(gi->second->offset, gi->second->size, "global attributes"),
                       [&](uint8_t attr, std::span<const uint8_t> d, uint16_t) {
                         if (attr != kRegcount && attr != kMinStackSize && attr != kFrameSize &&
                             attr != kMaxStackSize) {
                           return;
                         }
                         auto it = by_symbol.find(u32_at(d, 0));
                         if (it == by_symbol.end()) return;
                         uint32_t v = u32_at(d, 4);
                         if (attr == kRegcount) {
                           it->second->registers = v;
                         } else {
                           it->second->local_bytes_per_thread =
                               std::max(it->second->local_bytes_per_thread, v);
                         }
                       });
  }
  for (auto& [name, k] : kernels_) {
    if (k.registers > 255) throw FormatError("CUBIN kernel '" + name + "' claims too many registers");
    if (k.barriers > 16) throw FormatError("CUBIN kernel '" + name + "' claims more than 16 named barriers");
    size_t params = k.param_offsets.size();
    for (size_t p = 0; p < params; ++p) {
      if (k.param_offsets[p] + k.param_sizes[p] > k.param_bytes) {
        throw FormatError("CUBIN kernel '" + name + "' has a parameter beyond its parameter block");
      }
    }
  }
}

const CubinKernel& Cubin::kernel(const std::string& name) const {
  auto it = kernels_.find(name);
  if (it == kernels_.end()) {
    std::string names;
    for (const auto& [n, k] : kernels_) names += (names.empty() ? "" : ", ") + n;
    throw Error("CUBIN has no kernel '" + name + "' (it has: " + names + ")");
  }
  return it->second;
}

std::vector<uint8_t> Cubin::relocated_image(uint64_t gpu_base) const {
  std::vector<uint8_t> out = image_;
  for (const auto& rel : relocations_) {
    uint64_t value = gpu_base + rel.target;
    if (rel.type == kRCuda64) {
      std::memcpy(out.data() + rel.image_offset, &value, 8);
    } else {
      // The 32-bit halves live in the upper word of the instruction.
      uint32_t half = rel.type == kRCudaAbs32Lo32 ? static_cast<uint32_t>(value)
                                                   : static_cast<uint32_t>(value >> 32);
      std::memcpy(out.data() + rel.image_offset + 4, &half, 4);
    }
  }
  return out;
}

}  // namespace nvhcq::gpu
