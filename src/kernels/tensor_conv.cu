// Convolutions and pooling for the tensor layer, one thread per output element,
// on dense row-major NCHW operands; sums in the compute type (f32 for float
// dtypes), rounded once to the output dtype. Semantics follow src/cpu/conv.cpp.
#include "tensor_common.cuh"

struct nvt_conv_geom {
  long long n, c, h, w, o, oh, ow, kh;
};
struct nvt_conv_params {
  long long kw, sh, sw, ph, pw, dh, dw, groups;
};

// out[n, o, y, x] = bias[o] + sum over the group's channels and the window of
// x[n, c, y*sh - ph + i*dh, x*sw - pw + j*dw] * w[o, c, i, j] (w: [O, C/groups, kh, kw]).
template <typename TR>
__device__ void nvt_conv2d(void* out_v, const void* x_v, const void* w_v, const void* bias_v,
                           nvt_conv_geom g, nvt_conv_params p) {
  typedef typename TR::S S;
  typedef typename TR::C C;
  S* out = (S*)out_v;
  const S* x = (const S*)x_v;
  const S* w = (const S*)w_v;
  const S* bias = (const S*)bias_v;
  const long long total = g.n * g.o * g.oh * g.ow;
  const long long cg = g.c / p.groups, og = g.o / p.groups;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total;
       e += (long long)gridDim.x * blockDim.x) {
    const long long ox = e % g.ow, oy = (e / g.ow) % g.oh, o = (e / (g.ow * g.oh)) % g.o,
                    img = e / (g.ow * g.oh * g.o);
    const long long c0 = (o / og) * cg;
    C acc = 0;
    for (long long c = 0; c < cg; ++c) {
      const S* xp = x + (img * g.c + c0 + c) * g.h * g.w;
      const S* wp = w + (o * cg + c) * g.kh * p.kw;
      for (long long i = 0; i < g.kh; ++i) {
        const long long iy = oy * p.sh - p.ph + i * p.dh;
        if (iy < 0 || iy >= g.h) continue;
        for (long long j = 0; j < p.kw; ++j) {
          const long long ix = ox * p.sw - p.pw + j * p.dw;
          if (ix < 0 || ix >= g.w) continue;
          acc = TR::mac(acc, TR::load(xp[iy * g.w + ix]), TR::load(wp[i * p.kw + j]));
        }
      }
    }
    if (bias) acc += TR::load(bias[o]);
    out[e] = TR::store(acc);
  }
}

// Transposed convolution (w: [C, O/groups, kh, kw]): input pixel (iy, ix) adds
// x * w[c, o, i, j] to output (iy*sh - ph + i*dh, ix*sw - pw + j*dw); each thread
// gathers the contributions to its output element.
template <typename TR>
__device__ void nvt_conv_transpose2d(void* out_v, const void* x_v, const void* w_v,
                                     const void* bias_v, nvt_conv_geom g, nvt_conv_params p) {
  typedef typename TR::S S;
  typedef typename TR::C C;
  S* out = (S*)out_v;
  const S* x = (const S*)x_v;
  const S* w = (const S*)w_v;
  const S* bias = (const S*)bias_v;
  const long long total = g.n * g.o * g.oh * g.ow;
  const long long cg = g.c / p.groups, og = g.o / p.groups;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total;
       e += (long long)gridDim.x * blockDim.x) {
    const long long ox = e % g.ow, oy = (e / g.ow) % g.oh, o = (e / (g.ow * g.oh)) % g.o,
                    img = e / (g.ow * g.oh * g.o);
    const long long grp = o / og, oi = o % og;
    C acc = 0;
    for (long long c = 0; c < cg; ++c) {
      const long long ci = grp * cg + c;
      const S* xp = x + (img * g.c + ci) * g.h * g.w;
      const S* wp = w + (ci * og + oi) * g.kh * p.kw;
      for (long long i = 0; i < g.kh; ++i) {
        const long long ny = oy + p.ph - i * p.dh;
        if (ny < 0 || ny % p.sh != 0) continue;
        const long long iy = ny / p.sh;
        if (iy >= g.h) continue;
        for (long long j = 0; j < p.kw; ++j) {
          const long long nx = ox + p.pw - j * p.dw;
          if (nx < 0 || nx % p.sw != 0) continue;
          const long long ix = nx / p.sw;
          if (ix >= g.w) continue;
          acc = TR::mac(acc, TR::load(xp[iy * g.w + ix]), TR::load(wp[i * p.kw + j]));
        }
      }
    }
    if (bias) acc += TR::load(bias[o]);
    out[e] = TR::store(acc);
  }
}

// Pooling: g.o == g.c; g.kh and p.kw are the window. Max propagates NaN; a window
// entirely in the padding gives the lowest value. Average divides by the window
// size (count_include_pad) or by the in-bounds count.
template <typename TR>
__device__ void nvt_pool2d(void* out_v, const void* x_v, nvt_conv_geom g, nvt_conv_params p,
                           int is_max, int count_include_pad) {
  typedef typename TR::S S;
  typedef typename TR::C C;
  S* out = (S*)out_v;
  const S* x = (const S*)x_v;
  const long long total = g.n * g.c * g.oh * g.ow;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total;
       e += (long long)gridDim.x * blockDim.x) {
    const long long ox = e % g.ow, oy = (e / g.ow) % g.oh, nc = e / (g.ow * g.oh);
    const S* xp = x + nc * g.h * g.w;
    C best = TR::lowest(), sum = 0, nan_value = 0;
    bool any = false, nan = false;
    long long count = 0;
    for (long long i = 0; i < g.kh; ++i) {
      const long long iy = oy * p.sh - p.ph + i * p.dh;
      if (iy < 0 || iy >= g.h) continue;
      for (long long j = 0; j < p.kw; ++j) {
        const long long ix = ox * p.sw - p.pw + j * p.dw;
        if (ix < 0 || ix >= g.w) continue;
        const C v = TR::load(xp[iy * g.w + ix]);
        if (v != v && !nan) {
          nan = true;
          nan_value = v;
        }
        if (!any || v > best) best = v;
        any = true;
        sum += v;
        ++count;
      }
    }
    C r;
    if (is_max) {
      r = nan ? nan_value : best;
      if (!any) r = TR::lowest();
    } else {
      const long long divisor = count_include_pad ? g.kh * p.kw : count;
      r = divisor > 0 ? (C)(sum / (C)divisor) : (C)0;
    }
    out[e] = TR::store(r);
  }
}

#define NVT_CONV_PARAMS \
  (void* out, const void* x, const void* w, const void* bias, nvt_conv_geom g, nvt_conv_params p)
#define NVT_CONV_ARGS (out, x, w, bias, g, p)
NVT_FLOAT_KERNELS(nvt_conv2d, NVT_CONV_PARAMS, NVT_CONV_ARGS)
NVT_FLOAT_KERNELS(nvt_conv_transpose2d, NVT_CONV_PARAMS, NVT_CONV_ARGS)

#define NVT_POOL_PARAMS \
  (void* out, const void* x, nvt_conv_geom g, nvt_conv_params p, int is_max, int include_pad)
#define NVT_POOL_ARGS (out, x, g, p, is_max, include_pad)
NVT_FLOAT_KERNELS(nvt_pool2d, NVT_POOL_PARAMS, NVT_POOL_ARGS)
NVT_INT_KERNELS(nvt_pool2d, NVT_POOL_PARAMS, NVT_POOL_ARGS)
