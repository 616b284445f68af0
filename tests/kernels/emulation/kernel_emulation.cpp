// The CPU kernel emulator (kernel_emulation.h): threads as ucontext fibers, run
// round-robin on one OS thread; a fiber runs until it waits at a barrier.

#include "kernels/emulation/kernel_emulation.h"

#include <ucontext.h>

#include <algorithm>
#include <memory>
#include <vector>

// The linker's bounds of the section that holds kernels' static __shared__
// variables (kernel_emulation.h); null when no kernel declares one.
extern "C" __attribute__((weak)) uint8_t __start_nvhcq_emu_shared[], __stop_nvhcq_emu_shared[];

namespace nvhcq::emu {
namespace {

constexpr size_t kStackBytes = 256 * 1024;

struct PendingCopy {
  uint32_t dst;
  uint8_t data[16];
};

struct Fiber {
  ucontext_t ctx;
  Dim3 tid;
  uint32_t linear = 0;
  bool done = false;
  const uint64_t* wait_on = nullptr;  // a generation counter this fiber waits to change
  uint64_t wait_value = 0;
  std::vector<std::vector<PendingCopy>> groups;  // committed cp.async groups, oldest first
  std::vector<PendingCopy> open;                 // issued since the last commit
};

enum class Collective { kNone, kLdmatrix, kLdmatrixTrans, kMmaF16, kMmaBf16, kShflXor, kShfl };

// What the 32 lanes of a warp hand to a collective; the last lane to arrive
// computes every lane's result.
struct Warp {
  uint64_t generation = 0;
  int arrived = 0;
  Collective op = Collective::kNone;
  uint32_t addr[32];
  uint32_t* regs[32];
  uint32_t a[32][4], b[32][2];
  float* d[32];
};

struct WgmmaOp {
  uint64_t desc_a, desc_b;
  int n;
  bool bf16, transpose_b;
  float* d[128];
};

enum class GroupCollective { kNone, kWgmma, kCommit, kWait };

// The 128 threads of a warpgroup: their queued wgmma and commit groups.
struct WarpGroup {
  uint64_t generation = 0;
  int arrived = 0;
  GroupCollective op = GroupCollective::kNone;
  WgmmaOp pending;                           // being gathered
  std::vector<WgmmaOp> open;                 // issued since the last commit
  std::vector<std::vector<WgmmaOp>> groups;  // committed, oldest first
  int wait_pending = 0;
};

struct State {
  LaunchConfig config;
  const std::function<void()>* kernel = nullptr;
  Dim3 block;
  uint32_t threads = 0;
  std::vector<uint8_t> smem;
  std::vector<Fiber> fibers;
  std::vector<Warp> warps;
  std::vector<WarpGroup> warpgroups;
  uint64_t barrier_generation = 0;
  uint32_t barrier_arrived = 0;
  Fiber* current = nullptr;
  ucontext_t main_ctx;
  std::string error;
  Stats stats;
};

State* g_state = nullptr;
Stats g_last_stats;
std::vector<std::pair<uintptr_t, size_t>> g_globals;

State& state() {
  return *g_state;
}

void fail(const std::string& what) {
  State& s = state();
  if (!s.error.empty()) return;
  s.error = what + " (block " + std::to_string(s.block.x) + "," + std::to_string(s.block.y) + "," +
            std::to_string(s.block.z) + ", thread " +
            std::to_string(s.current != nullptr ? s.current->linear : 0) + ")";
}

// Suspends the running fiber until *counter differs from `value`.
void wait_for_change(const uint64_t* counter, uint64_t value) {
  State& s = state();
  Fiber* f = s.current;
  f->wait_on = counter;
  f->wait_value = value;
  swapcontext(&f->ctx, &s.main_ctx);
}

bool smem_range_ok(uint32_t addr, uint32_t bytes) {
  return uint64_t{addr} + bytes <= state().smem.size();
}

uint16_t smem_u16(uint32_t addr) {
  uint16_t v;
  std::memcpy(&v, state().smem.data() + addr, 2);
  return v;
}

float bits16(uint32_t reg, int half, bool bf16) {
  uint16_t v = static_cast<uint16_t>(half == 0 ? reg & 0xffffu : reg >> 16);
  return bf16 ? cpu::bf16_to_float(v) : cpu::half_to_float(v);
}

void run_ldmatrix(Warp& w, bool transpose) {
  for (int lane = 0; lane < 32; ++lane) {
    if (w.addr[lane] % 16 != 0 || !smem_range_ok(w.addr[lane], 16)) {
      fail("ldmatrix row address " + std::to_string(w.addr[lane]) + " of lane " +
           std::to_string(lane) + " is misaligned or outside the " +
           std::to_string(state().smem.size()) + "-byte shared memory");
      for (int l = 0; l < 32; ++l) std::memset(w.regs[l], 0, 16);
      return;
    }
  }
  for (int i = 0; i < 4; ++i) {
    int per_group[8] = {0};
    for (int row = 0; row < 8; ++row) ++per_group[(w.addr[8 * i + row] / 16) % 8];
    int wavefronts = *std::max_element(per_group, per_group + 8);
    ++state().stats.ldmatrix_matrices;
    state().stats.ldmatrix_extra_wavefronts += static_cast<uint64_t>(wavefronts - 1);
  }
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < 4; ++i) {
      uint16_t lo, hi;
      if (!transpose) {
        uint32_t row = w.addr[8 * i + lane / 4];
        lo = smem_u16(row + (2 * (lane % 4)) * 2);
        hi = smem_u16(row + (2 * (lane % 4) + 1) * 2);
      } else {
        lo = smem_u16(w.addr[8 * i + 2 * (lane % 4)] + (lane / 4) * 2);
        hi = smem_u16(w.addr[8 * i + 2 * (lane % 4) + 1] + (lane / 4) * 2);
      }
      w.regs[lane][i] = static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
    }
  }
}

void run_mma(Warp& w, bool bf16) {
  float A[16][16], B[16][8];
  for (int lane = 0; lane < 32; ++lane) {
    int gr = lane / 4, t = lane % 4;
    for (int h = 0; h < 2; ++h) {
      A[gr][2 * t + h] = bits16(w.a[lane][0], h, bf16);
      A[gr + 8][2 * t + h] = bits16(w.a[lane][1], h, bf16);
      A[gr][2 * t + 8 + h] = bits16(w.a[lane][2], h, bf16);
      A[gr + 8][2 * t + 8 + h] = bits16(w.a[lane][3], h, bf16);
      B[2 * t + h][gr] = bits16(w.b[lane][0], h, bf16);
      B[2 * t + 8 + h][gr] = bits16(w.b[lane][1], h, bf16);
    }
  }
  for (int lane = 0; lane < 32; ++lane) {
    int gr = lane / 4, t = lane % 4;
    for (int r = 0; r < 4; ++r) {
      int row = gr + (r / 2) * 8, col = 2 * t + (r % 2);
      double sum = w.d[lane][r];
      for (int k = 0; k < 16; ++k) sum += static_cast<double>(A[row][k]) * B[k][col];
      w.d[lane][r] = static_cast<float>(sum);
    }
  }
}

template <typename Deposit>
void collective(Collective op, Deposit deposit) {
  State& s = state();
  Fiber* f = s.current;
  if (s.threads % 32 != 0) {
    fail("a warp collective in a block of " + std::to_string(s.threads) +
         " threads (not whole warps)");
    return;
  }
  Warp& w = s.warps[f->linear / 32];
  uint32_t lane = f->linear % 32;
  if (w.arrived == 0) {
    w.op = op;
  } else if (w.op != op) {
    fail("the lanes of a warp reached different collectives");
  }
  deposit(w, lane);
  uint64_t gen = w.generation;
  if (++w.arrived < 32) {
    wait_for_change(&w.generation, gen);
    return;
  }
  switch (op) {
    case Collective::kLdmatrix:
      run_ldmatrix(w, false);
      break;
    case Collective::kLdmatrixTrans:
      run_ldmatrix(w, true);
      break;
    case Collective::kMmaF16:
      run_mma(w, false);
      break;
    case Collective::kMmaBf16:
      run_mma(w, true);
      break;
    case Collective::kShflXor:
      // addr holds each lane's value, a[lane][0] its xor mask.
      for (uint32_t l = 0; l < 32; ++l) {
        if (w.a[l][0] != w.a[0][0]) fail("the lanes of a warp gave __shfl_xor_sync different masks");
        *w.regs[l] = w.addr[l ^ (w.a[l][0] & 31)];
      }
      break;
    case Collective::kShfl:
      // addr holds each lane's value, a[lane][0] the lane it reads from.
      for (uint32_t l = 0; l < 32; ++l) *w.regs[l] = w.addr[w.a[l][0] & 31];
      break;
    case Collective::kNone:
      break;
  }
  w.arrived = 0;
  ++w.generation;
}

void retire(Fiber& f, size_t keep) {
  State& s = state();
  while (f.groups.size() > keep) {
    for (const auto& c : f.groups.front()) std::memcpy(s.smem.data() + c.dst, c.data, 16);
    f.groups.erase(f.groups.begin());
  }
}

// Shared-memory byte address of element (row, col) of an operand described by
// `desc` (128-byte swizzle): K-major when `k_major` (rows are M or N, columns
// K), else MN-major (rows K, columns M or N). The PTX ISA's canonical layouts:
//   K-major:  ((8,m),(T,2k)) : ((8T,SBO),(1,T))   MN-major: ((T,8,m),(8,k)) : ((1,T,LBO),(8T,SBO))
// with T = 8 16-bit elements, then address bits 4-6 XOR bits 7-9.
uint32_t operand_address(uint64_t desc, int mn, int k, bool k_major) {
  uint32_t start = static_cast<uint32_t>(desc & 0x3fff) << 4;
  uint32_t lbo = static_cast<uint32_t>((desc >> 16) & 0x3fff) << 4;
  uint32_t sbo = static_cast<uint32_t>((desc >> 32) & 0x3fff) << 4;
  uint32_t a;
  if (k_major) {
    a = start + (mn % 8) * 128 + (mn / 8) * sbo + (k / 8) * 16 + (k % 8) * 2;
  } else {
    a = start + (mn % 64) * 2 + (mn / 64) * lbo + (k % 8) * 128 + (k / 8) * sbo;
  }
  return a ^ (((a >> 7) & 7) << 4);
}

void run_wgmma(const WgmmaOp& op) {
  for (uint64_t desc : {op.desc_a, op.desc_b}) {
    if ((desc >> 62) != 1 || ((desc >> 49) & 7) != 0) {
      fail("wgmma descriptor without 128-byte swizzle or with a base offset (not emulated)");
      return;
    }
  }
  const int n = op.n;
  std::vector<float> A(64 * 16), B(16 * static_cast<size_t>(n));
  auto load = [&](uint32_t addr, float* out) {
    if (!smem_range_ok(addr, 2)) {
      fail("wgmma operand address " + std::to_string(addr) + " outside shared memory");
      *out = 0;
      return;
    }
    uint16_t v = smem_u16(addr);
    *out = op.bf16 ? cpu::bf16_to_float(v) : cpu::half_to_float(v);
  };
  for (int m = 0; m < 64; ++m) {
    for (int k = 0; k < 16; ++k) load(operand_address(op.desc_a, m, k, true), &A[m * 16 + k]);
  }
  for (int k = 0; k < 16; ++k) {
    for (int c = 0; c < n; ++c)
      load(operand_address(op.desc_b, c, k, !op.transpose_b), &B[k * n + c]);
  }
  // Accumulator fragments: warp w of the group holds rows 16w..16w+15; lane l
  // holds (row l/4, columns 8j + 2(l%4), +1) and the same 8 rows down, per j.
  for (int t = 0; t < 128; ++t) {
    int w = t / 32, l = t % 32;
    for (int j = 0; j < n / 8; ++j) {
      for (int r = 0; r < 4; ++r) {
        int row = 16 * w + l / 4 + (r / 2) * 8, col = 8 * j + 2 * (l % 4) + (r % 2);
        double sum = op.d[t][4 * j + r];
        for (int k = 0; k < 16; ++k) sum += static_cast<double>(A[row * 16 + k]) * B[k * n + col];
        op.d[t][4 * j + r] = static_cast<float>(sum);
      }
    }
  }
}

// A collective of the 128 threads of a warpgroup; the last to arrive runs `last`.
template <typename Deposit, typename Last>
void group_collective(GroupCollective op, Deposit deposit, Last last) {
  State& s = state();
  Fiber* f = s.current;
  if (s.threads % 128 != 0) {
    fail("a warpgroup instruction in a block of " + std::to_string(s.threads) +
         " threads (not whole warpgroups)");
    return;
  }
  WarpGroup& g = s.warpgroups[f->linear / 128];
  uint32_t index = f->linear % 128;
  if (g.arrived == 0) {
    g.op = op;
  } else if (g.op != op) {
    fail("the threads of a warpgroup reached different wgmma instructions");
  }
  deposit(g, index);
  uint64_t gen = g.generation;
  if (++g.arrived < 128) {
    wait_for_change(&g.generation, gen);
    return;
  }
  last(g);
  g.arrived = 0;
  ++g.generation;
}

void trampoline() {
  State& s = state();
  (*s.kernel)();
  Fiber* f = s.current;
  bool pending = !f->open.empty();
  for (const auto& grp : f->groups) pending = pending || !grp.empty();
  if (pending) fail("the thread exited with cp.async copies not waited for");
  f->done = true;
  // Returning resumes uc_link: the scheduler.
}

void run_block(State& s, uint8_t* stacks) {
  std::fill(s.smem.begin(), s.smem.end(), 0xff);  // NaN in f16, bf16 and f32
  if (__start_nvhcq_emu_shared != nullptr) {
    std::fill(__start_nvhcq_emu_shared, __stop_nvhcq_emu_shared, 0xff);
  }
  s.fibers.assign(s.threads, Fiber{});
  s.warps.assign((s.threads + 31) / 32, Warp{});
  s.warpgroups.assign((s.threads + 127) / 128, WarpGroup{});
  s.barrier_arrived = 0;
  const Dim3& b = s.config.block;
  for (uint32_t i = 0; i < s.threads; ++i) {
    Fiber& f = s.fibers[i];
    f.linear = i;
    f.tid = Dim3{i % b.x, (i / b.x) % b.y, i / (b.x * b.y)};
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = stacks + i * kStackBytes;
    f.ctx.uc_stack.ss_size = kStackBytes;
    f.ctx.uc_link = &s.main_ctx;
    makecontext(&f.ctx, trampoline, 0);
  }
  for (;;) {
    bool alive = false, ran = false;
    for (Fiber& f : s.fibers) {
      if (f.done) continue;
      alive = true;
      if (f.wait_on != nullptr) {
        if (*f.wait_on == f.wait_value) continue;
        f.wait_on = nullptr;
      }
      s.current = &f;
      swapcontext(&s.main_ctx, &f.ctx);
      ran = true;
    }
    if (!alive) break;
    if (!ran) {
      s.current = nullptr;
      fail("deadlock: every live thread waits at a barrier the others never reach");
      break;
    }
  }
  s.current = nullptr;
  for (const WarpGroup& g : s.warpgroups) {
    bool pending = !g.open.empty();
    for (const auto& grp : g.groups) pending = pending || !grp.empty();
    if (pending) fail("the block exited with wgmma not waited for");
  }
}

}  // namespace

const Dim3& thread_index() {
  return state().current->tid;
}
const Dim3& block_index() {
  return state().block;
}
const Dim3& block_dim() {
  return state().config.block;
}
const Dim3& grid_dim() {
  return state().config.grid;
}

void sync_threads() {
  State& s = state();
  uint64_t gen = s.barrier_generation;
  if (++s.barrier_arrived < s.threads) {
    wait_for_change(&s.barrier_generation, gen);
    return;
  }
  s.barrier_arrived = 0;
  ++s.barrier_generation;
}

uint8_t* shared_memory() {
  return state().smem.data();
}

uint32_t shared_offset(const void* p) {
  State& s = state();
  auto a = reinterpret_cast<uintptr_t>(p), base = reinterpret_cast<uintptr_t>(s.smem.data());
  if (a < base || a > base + s.smem.size()) {
    fail("smem_addr of a pointer outside shared memory");
    return 0;
  }
  return static_cast<uint32_t>(a - base);
}

const void* aligned_shared(const void* p, uint32_t bytes) {
  const uint32_t at = shared_offset(p);
  if (at % bytes != 0 || !smem_range_ok(at, bytes)) {
    fail("a " + std::to_string(bytes) + "-byte shared-memory load at " + std::to_string(at) +
         " is misaligned or outside shared memory");
  }
  return p;
}

void cp_async_16(uint32_t dst, const void* src, uint32_t src_bytes) {
  State& s = state();
  if (dst % 16 != 0 || !smem_range_ok(dst, 16)) {
    fail("cp.async destination " + std::to_string(dst) + " is misaligned or outside shared memory");
    return;
  }
  if (src_bytes > 16) {
    fail("cp.async source size over 16");
    return;
  }
  PendingCopy c{dst, {}};
  if (src_bytes > 0) {
    auto a = reinterpret_cast<uintptr_t>(src);
    bool inside = false;
    for (const auto& [base, size] : g_globals)
      inside = inside || (a >= base && a + src_bytes <= base + size);
    if (!inside) {
      fail("cp.async reads " + std::to_string(src_bytes) +
           " bytes outside every registered buffer");
      return;
    }
    if (a % 16 != 0) {
      fail("cp.async source is not 16-byte aligned");
      return;
    }
    std::memcpy(c.data, src, src_bytes);
  }
  if (s.config.deferred_copies) {
    s.current->open.push_back(c);
  } else {
    std::memcpy(s.smem.data() + dst, c.data, 16);
  }
}

void cp_async_commit() {
  Fiber* f = state().current;
  f->groups.push_back(std::move(f->open));
  f->open.clear();
}

void cp_async_wait(int pending) {
  retire(*state().current, static_cast<size_t>(pending));
}

void ldmatrix_x4(uint32_t r[4], uint32_t addr, bool transpose) {
  collective(transpose ? Collective::kLdmatrixTrans : Collective::kLdmatrix,
             [&](Warp& w, uint32_t lane) {
               w.addr[lane] = addr;
               w.regs[lane] = r;
             });
}

namespace {
// A shuffle: each lane hands its value and the operand (xor mask or source
// lane) that kShflXor / kShfl read.
uint32_t shuffle(Collective op, uint32_t value, int operand) {
  uint32_t result = 0;
  collective(op, [&](Warp& w, uint32_t lane) {
    w.addr[lane] = value;
    w.a[lane][0] = static_cast<uint32_t>(operand);
    w.regs[lane] = &result;
  });
  return result;
}
}  // namespace

uint32_t shfl_xor(uint32_t value, int mask) { return shuffle(Collective::kShflXor, value, mask); }

uint32_t shfl(uint32_t value, int src_lane) { return shuffle(Collective::kShfl, value, src_lane); }

void mma_m16n8k16(float d[4], const uint32_t a[4], const uint32_t b[2], bool bf16) {
  collective(bf16 ? Collective::kMmaBf16 : Collective::kMmaF16, [&](Warp& w, uint32_t lane) {
    std::memcpy(w.a[lane], a, 16);
    std::memcpy(w.b[lane], b, 8);
    w.d[lane] = d;
  });
}

void wgmma(float* d, uint64_t desc_a, uint64_t desc_b, int n, bool bf16, bool transpose_b) {
  group_collective(
      GroupCollective::kWgmma,
      [&](WarpGroup& g, uint32_t index) {
        if (g.arrived != 0 && (g.pending.desc_a != desc_a || g.pending.desc_b != desc_b)) {
          fail("the threads of a warpgroup gave wgmma different descriptors");
        }
        g.pending.desc_a = desc_a;
        g.pending.desc_b = desc_b;
        g.pending.n = n;
        g.pending.bf16 = bf16;
        g.pending.transpose_b = transpose_b;
        g.pending.d[index] = d;
      },
      [](WarpGroup& g) { g.open.push_back(g.pending); });
}

void wgmma_commit() {
  group_collective(
      GroupCollective::kCommit, [](WarpGroup&, uint32_t) {},
      [](WarpGroup& g) {
        g.groups.push_back(std::move(g.open));
        g.open.clear();
      });
}

void wgmma_wait(int pending) {
  group_collective(
      GroupCollective::kWait, [&](WarpGroup& g, uint32_t) { g.wait_pending = pending; },
      [](WarpGroup& g) {
        while (g.groups.size() > static_cast<size_t>(g.wait_pending)) {
          for (const auto& op : g.groups.front()) run_wgmma(op);
          g.groups.erase(g.groups.begin());
        }
      });
}

std::string launch(const LaunchConfig& config, const std::function<void()>& kernel) {
  State s;
  s.config = config;
  s.kernel = &kernel;
  s.threads = config.block.x * config.block.y * config.block.z;
  s.smem.resize(config.shared_bytes);
  std::unique_ptr<uint8_t[]> stacks(new uint8_t[kStackBytes * s.threads]);
  g_state = &s;
  for (uint32_t z = 0; z < config.grid.z && s.error.empty(); ++z) {
    for (uint32_t y = 0; y < config.grid.y && s.error.empty(); ++y) {
      for (uint32_t x = 0; x < config.grid.x && s.error.empty(); ++x) {
        s.block = Dim3{x, y, z};
        run_block(s, stacks.get());
      }
    }
  }
  g_state = nullptr;
  g_last_stats = s.stats;
  return s.error;
}

Stats last_stats() {
  return g_last_stats;
}

void register_global(const void* p, size_t bytes) {
  g_globals.emplace_back(reinterpret_cast<uintptr_t>(p), bytes);
}

void clear_globals() {
  g_globals.clear();
}

}  // namespace nvhcq::emu
