#include "cpu/conv.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "cpu/matmul.h"
#include "cpu/thread_pool.h"

namespace nvhcq::cpu {
namespace {

template <typename T>
void gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t a_rs, int64_t a_cs, const T* b, int64_t b_rs,
          int64_t b_cs, T* c, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>) gemm_f32(m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, c, ldc, false);
  else gemm_f64(m, n, k, a, a_rs, a_cs, b, b_rs, b_cs, c, ldc, false);
}

constexpr int64_t kColumnBlock = 256;

}  // namespace

template <typename T>
void conv2d(const Conv2dShape& s, const T* x, const T* weight, const T* bias, T* out) {
  const int64_t cg = s.c_in / s.groups, og = s.c_out / s.groups;
  const int64_t kdim = cg * s.kh * s.kw, plane = s.out_h * s.out_w;
  const int64_t blocks = (plane + kColumnBlock - 1) / kColumnBlock;
  if (plane == 0 || s.n == 0 || s.c_out == 0) return;
  parallel_for(0, s.n * s.groups * blocks, 1, [&](int64_t t0, int64_t t1) {
    std::vector<T> cols(static_cast<size_t>(kdim * kColumnBlock));
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t img = t / (s.groups * blocks), g = (t / blocks) % s.groups, blk = t % blocks;
      const int64_t p0 = blk * kColumnBlock, pc = std::min(kColumnBlock, plane - p0);
      const T* xg = x + (img * s.c_in + g * cg) * s.h * s.w;
      // im2col: row (c, i, j) of the kernel window, column p of the output plane.
      for (int64_t c = 0; c < cg; ++c) {
        for (int64_t i = 0; i < s.kh; ++i) {
          for (int64_t j = 0; j < s.kw; ++j) {
            T* row = cols.data() + ((c * s.kh + i) * s.kw + j) * pc;
            for (int64_t q = 0; q < pc; ++q) {
              const int64_t p = p0 + q, oy = p / s.out_w, ox = p % s.out_w;
              const int64_t iy = oy * s.stride_h - s.pad_h + i * s.dil_h;
              const int64_t ix = ox * s.stride_w - s.pad_w + j * s.dil_w;
              row[q] = (iy >= 0 && iy < s.h && ix >= 0 && ix < s.w) ? xg[(c * s.h + iy) * s.w + ix] : T(0);
            }
          }
        }
      }
      T* og_out = out + (img * s.c_out + g * og) * plane + p0;
      gemm<T>(og, pc, kdim, weight + g * og * kdim, kdim, 1, cols.data(), pc, 1, og_out, plane);
      if (bias != nullptr) {
        for (int64_t o = 0; o < og; ++o) {
          for (int64_t q = 0; q < pc; ++q) og_out[o * plane + q] += bias[g * og + o];
        }
      }
    }
  });
}

template <typename T>
void conv_transpose2d(const Conv2dShape& s, const T* x, const T* weight, const T* bias, T* out) {
  const int64_t cg = s.c_in / s.groups, og = s.c_out / s.groups;
  const int64_t in_plane = s.h * s.w, out_plane = s.out_h * s.out_w;
  const int64_t rows = og * s.kh * s.kw;
  std::fill(out, out + s.n * s.c_out * out_plane, T(0));
  if (s.n == 0 || s.c_out == 0 || out_plane == 0) return;
  parallel_for(0, s.n * s.groups, 1, [&](int64_t t0, int64_t t1) {
    std::vector<T> cols(static_cast<size_t>(rows * in_plane));
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t img = t / s.groups, g = t % s.groups;
      const T* xg = x + (img * s.c_in + g * cg) * in_plane;
      const T* wg = weight + g * cg * rows;  // [cg, rows] row-major
      // cols[rows, in_plane] = wg^T [rows, cg] x xg [cg, in_plane]
      if (cg > 0) gemm<T>(rows, in_plane, cg, wg, 1, rows, xg, in_plane, 1, cols.data(), in_plane);
      else std::fill(cols.begin(), cols.end(), T(0));
      T* og_out = out + (img * s.c_out + g * og) * out_plane;
      for (int64_t o = 0; o < og; ++o) {
        for (int64_t i = 0; i < s.kh; ++i) {
          for (int64_t j = 0; j < s.kw; ++j) {
            const T* row = cols.data() + ((o * s.kh + i) * s.kw + j) * in_plane;
            for (int64_t iy = 0; iy < s.h; ++iy) {
              const int64_t oy = iy * s.stride_h - s.pad_h + i * s.dil_h;
              if (oy < 0 || oy >= s.out_h) continue;
              for (int64_t ix = 0; ix < s.w; ++ix) {
                const int64_t ox = ix * s.stride_w - s.pad_w + j * s.dil_w;
                if (ox < 0 || ox >= s.out_w) continue;
                og_out[(o * s.out_h + oy) * s.out_w + ox] += row[iy * s.w + ix];
              }
            }
          }
        }
        if (bias != nullptr) {
          for (int64_t p = 0; p < out_plane; ++p) og_out[o * out_plane + p] += bias[g * og + o];
        }
      }
    }
  });
}

template <typename T>
void max_pool2d(const Pool2dShape& s, const T* x, T* out) {
  const int64_t plane = s.out_h * s.out_w;
  parallel_for(0, s.n * s.c, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, plane * s.kh * s.kw)), [&](int64_t c0, int64_t c1) {
    for (int64_t nc = c0; nc < c1; ++nc) {
      const T* xp = x + nc * s.h * s.w;
      T* op = out + nc * plane;
      for (int64_t oy = 0; oy < s.out_h; ++oy) {
        for (int64_t ox = 0; ox < s.out_w; ++ox) {
          bool any = false, nan = false;
          T best{};
          for (int64_t i = 0; i < s.kh; ++i) {
            const int64_t iy = oy * s.stride_h - s.pad_h + i * s.dil_h;
            if (iy < 0 || iy >= s.h) continue;
            for (int64_t j = 0; j < s.kw; ++j) {
              const int64_t ix = ox * s.stride_w - s.pad_w + j * s.dil_w;
              if (ix < 0 || ix >= s.w) continue;
              T v = xp[iy * s.w + ix];
              if (v != v) nan = true;
              if (!any || v > best) best = v;
              any = true;
            }
          }
          if constexpr (std::is_floating_point_v<T>) {
            if (nan) best = std::numeric_limits<T>::quiet_NaN();
            if (!any) best = -std::numeric_limits<T>::infinity();
          } else {
            if (!any) best = std::numeric_limits<T>::min();
          }
          op[oy * s.out_w + ox] = best;
        }
      }
    }
  });
}

template <typename T>
void avg_pool2d(const Pool2dShape& s, bool count_include_pad, const T* x, T* out) {
  const int64_t plane = s.out_h * s.out_w;
  parallel_for(0, s.n * s.c, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, plane * s.kh * s.kw)), [&](int64_t c0, int64_t c1) {
    for (int64_t nc = c0; nc < c1; ++nc) {
      const T* xp = x + nc * s.h * s.w;
      T* op = out + nc * plane;
      for (int64_t oy = 0; oy < s.out_h; ++oy) {
        for (int64_t ox = 0; ox < s.out_w; ++ox) {
          T sum = 0;
          int64_t count = 0;
          for (int64_t i = 0; i < s.kh; ++i) {
            const int64_t iy = oy * s.stride_h - s.pad_h + i * s.dil_h;
            if (iy < 0 || iy >= s.h) continue;
            for (int64_t j = 0; j < s.kw; ++j) {
              const int64_t ix = ox * s.stride_w - s.pad_w + j * s.dil_w;
              if (ix < 0 || ix >= s.w) continue;
              sum += xp[iy * s.w + ix];
              ++count;
            }
          }
          const int64_t divisor = count_include_pad ? s.kh * s.kw : count;
          op[oy * s.out_w + ox] = divisor > 0 ? sum / static_cast<T>(divisor) : T(0);
        }
      }
    }
  });
}

template void conv2d<float>(const Conv2dShape&, const float*, const float*, const float*, float*);
template void conv2d<double>(const Conv2dShape&, const double*, const double*, const double*, double*);
template void conv_transpose2d<float>(const Conv2dShape&, const float*, const float*, const float*, float*);
template void conv_transpose2d<double>(const Conv2dShape&, const double*, const double*, const double*, double*);
template void max_pool2d<float>(const Pool2dShape&, const float*, float*);
template void max_pool2d<double>(const Pool2dShape&, const double*, double*);
template void max_pool2d<int64_t>(const Pool2dShape&, const int64_t*, int64_t*);
template void avg_pool2d<float>(const Pool2dShape&, bool, const float*, float*);
template void avg_pool2d<double>(const Pool2dShape&, bool, const double*, double*);

}  // namespace nvhcq::cpu
