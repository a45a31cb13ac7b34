/*
 * xrelay's C kernels: the helpers generated C calls (float dense, softmax, fixed-point
 * multiplication, average-pool window counts, the lanes of blocked convolutions); convolutions, pools and the other ops are
 * written out as loop nests by the generator. C99, libc and libm only, no allocation: every
 * pointer is given by the caller.
 *
 * Semantics are Relay's, as xrelay's reference kernels (xrelay.kernels) implement them; float
 * sums run in the order of the loops below, so results match the reference within float
 * rounding, not bit for bit; integer results are exact.
 */
#ifndef XRELAY_KERNELS_H
#define XRELAY_KERNELS_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Eight float lanes of a channel-blocked convolution tile (generated code: one accumulator
 * per output pixel, over 8 output channels). GCC and Clang get vector types (one 32-byte
 * vector with AVX, two 16-byte vectors otherwise), every other compiler, or any compiler with
 * XRELAY_PORTABLE defined, plain arrays and loops; the arithmetic is the same lane by lane (a
 * product then a sum), so every build computes the same bits unless the compiler contracts the
 * two into a fused multiply-add (off under -std=c99 unless -ffp-contract=fast asks for it).
 *   XR_F8_ZERO(a)      declare accumulator a = 0
 *   XR_F8_LOAD(w, p)   declare w = the 8 floats at p
 *   XR_F8_MAC(a, x, w) a += x * w for a float x
 *   XR_F8_MACV(a, x, w) a += x * w lane by lane, x an XR_F8_LOAD too
 *   XR_F8_STORE(p, a)  the 8 floats at p = a
 *   XR_F8_FILL(a, v)   declare accumulator a = v in every lane
 *   XR_F8_MAX(a, x)    a = x in the lanes where x > a or x is NaN (a max pool's step: NaN
 *                      wins, as the reference's), x an XR_F8_LOAD; a select of bits, so exact */
#if defined(__GNUC__) && !defined(XRELAY_PORTABLE) && defined(__AVX__)
typedef float xr_f32x8 __attribute__((vector_size(32)));
#define XR_F8_ZERO(a) xr_f32x8 a##0 = {0}
#define XR_F8_LOAD(w, p) xr_f32x8 w##0; memcpy(&w##0, (p), 32)
#define XR_F8_MAC(a, x, w) a##0 += (x) * w##0
#define XR_F8_MACV(a, x, w) a##0 += x##0 * w##0
#define XR_F8_STORE(p, a) memcpy((p), &a##0, 32)
typedef int32_t xr_i32x8 __attribute__((vector_size(32)));
#define XR_F8_FILL(a, v) xr_f32x8 a##0 = {v, v, v, v, v, v, v, v}
#define XR_F8_MAX(a, x) \
  { const xr_i32x8 xr_m = (x##0 > a##0) | (x##0 != x##0); \
    a##0 = (xr_f32x8)((xr_m & (xr_i32x8)x##0) | (~xr_m & (xr_i32x8)a##0)); }
#elif defined(__GNUC__) && !defined(XRELAY_PORTABLE)
typedef float xr_f32x4 __attribute__((vector_size(16)));
#define XR_F8_ZERO(a) xr_f32x4 a##0 = {0}, a##1 = {0}
#define XR_F8_LOAD(w, p) xr_f32x4 w##0, w##1; memcpy(&w##0, (p), 16); memcpy(&w##1, (p) + 4, 16)
#define XR_F8_MAC(a, x, w) a##0 += (x) * w##0; a##1 += (x) * w##1
#define XR_F8_MACV(a, x, w) a##0 += x##0 * w##0; a##1 += x##1 * w##1
#define XR_F8_STORE(p, a) memcpy((p), &a##0, 16); memcpy((p) + 4, &a##1, 16)
typedef int32_t xr_i32x4 __attribute__((vector_size(16)));
#define XR_F8_FILL(a, v) xr_f32x4 a##0 = {v, v, v, v}, a##1 = {v, v, v, v}
#define XR_F4_MAX(a, x) \
  { const xr_i32x4 xr_m = (x > a) | (x != x); a = (xr_f32x4)((xr_m & (xr_i32x4)x) | (~xr_m & (xr_i32x4)a)); }
#define XR_F8_MAX(a, x) XR_F4_MAX(a##0, x##0) XR_F4_MAX(a##1, x##1)
#else
#define XR_F8_ZERO(a) float a[8] = {0, 0, 0, 0, 0, 0, 0, 0}
#define XR_F8_LOAD(w, p) float w[8]; memcpy(w, (p), 32)
#define XR_F8_MAC(a, x, w) for (int xr_l = 0; xr_l < 8; ++xr_l) a[xr_l] += (x) * w[xr_l]
#define XR_F8_MACV(a, x, w) for (int xr_l = 0; xr_l < 8; ++xr_l) a[xr_l] += x[xr_l] * w[xr_l]
#define XR_F8_STORE(p, a) memcpy((p), a, 32)
#define XR_F8_FILL(a, v) float a[8] = {v, v, v, v, v, v, v, v}
#define XR_F8_MAX(a, x) \
  for (int xr_l = 0; xr_l < 8; ++xr_l) \
    if (x[xr_l] > a[xr_l] || x[xr_l] != x[xr_l]) a[xr_l] = x[xr_l];
#endif

/* Sixteen float lanes of a tile over 16-channel blocks: the XR_F8 operations (and names) on
 * 16 lanes, one 64-byte vector with AVX-512 (GCC, Clang), two XR_F8 halves everywhere else
 * (whatever those are there). Lane by lane the same arithmetic, so the same bits. */
#if defined(__GNUC__) && !defined(XRELAY_PORTABLE) && defined(__AVX512F__)
typedef float xr_f32x16 __attribute__((vector_size(64)));
#define XR_F16_ZERO(a) xr_f32x16 a##0 = {0}
#define XR_F16_LOAD(w, p) xr_f32x16 w##0; memcpy(&w##0, (p), 64)
#define XR_F16_MAC(a, x, w) a##0 += (x) * w##0
#define XR_F16_MACV(a, x, w) a##0 += x##0 * w##0
#define XR_F16_STORE(p, a) memcpy((p), &a##0, 64)
#else
#define XR_F16_ZERO(a) XR_F8_ZERO(a##l); XR_F8_ZERO(a##h)
#define XR_F16_LOAD(w, p) XR_F8_LOAD(w##l, (p)); XR_F8_LOAD(w##h, (p) + 8)
#define XR_F16_MAC(a, x, w) XR_F8_MAC(a##l, x, w##l); XR_F8_MAC(a##h, x, w##h)
#define XR_F16_MACV(a, x, w) XR_F8_MACV(a##l, x##l, w##l); XR_F8_MACV(a##h, x##h, w##h)
#define XR_F16_STORE(p, a) XR_F8_STORE((p), a##l); XR_F8_STORE((p) + 8, a##h)
#endif

/* out[m, u] = sum over k of data[m, k] * w[u, k] (Relay's dense: weights are (units, k)). */
static inline void xr_dense_f32(const float *data, const float *w, float *out, int64_t m, int64_t units,
                         int64_t k) {
  for (int64_t r = 0; r < m; ++r) {
    const float *a = data + r * k;
    for (int64_t u = 0; u < units; ++u) {
      const float *b = w + u * k;
      float acc = 0.0f;
      for (int64_t t = 0; t < k; ++t) acc += a[t] * b[t];
      out[r * units + u] = acc;
    }
  }
}

/* Positions of a window that count for an average pool, along one axis. */
static inline int32_t xr_window_count(int32_t start, int32_t k, int32_t d, int32_t lo, int32_t hi) {
  int32_t count = 0;
  for (int32_t i = 0; i < k; ++i) {
    const int32_t at = start + i * d;
    if (at >= lo && at < hi) ++count;
  }
  return count;
}

/* Relay's fixed_point_multiply (TOPI q_multiply_shift): (x << left) * m, rounded half up and
 * shifted right by 31 + right, in int64 that wraps (through uint64) as numpy's does. */
static inline int32_t xr_q_multiply_shift(int32_t x, int64_t m, int64_t left, int64_t right) {
  const int64_t total = right + 31;
  int64_t v = (int64_t)((uint64_t)(int64_t)x << left);
  v = (int64_t)((uint64_t)v * (uint64_t)m);
  v = (int64_t)((uint64_t)v + ((uint64_t)1 << (total - 1)));
  return (int32_t)(v >> total);
}

/* Softmax along an axis of `len` elements, `inner` apart, for `outer` x `inner` rows. */
static inline void xr_softmax_f32(const float *data, float *out, int64_t outer, int64_t len,
                           int64_t inner, int log_softmax) {
  for (int64_t a = 0; a < outer; ++a) {
    for (int64_t b = 0; b < inner; ++b) {
      const float *src = data + a * len * inner + b;
      float *dst = out + a * len * inner + b;
      float mx = -INFINITY;
      for (int64_t i = 0; i < len; ++i) mx = src[i * inner] > mx ? src[i * inner] : mx;
      float sum = 0.0f;
      for (int64_t i = 0; i < len; ++i) sum += expf(src[i * inner] - mx);
      for (int64_t i = 0; i < len; ++i)
        dst[i * inner] = log_softmax ? src[i * inner] - mx - logf(sum) : expf(src[i * inner] - mx) / sum;
    }
  }
}

/* Relay's floor_mod: the remainder takes the divisor's sign (r is a % b, already safe). */
static inline int64_t xr_floor_mod_i64(int64_t r, int64_t b) {
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
static inline float xr_floor_modf(float a, float b) {
  const float r = fmodf(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
static inline double xr_floor_mod(double a, double b) {
  const double r = fmod(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

/* PyTorch's reflection of a sampling coordinate into [lo, hi] (image.grid_sample). */
static inline float xr_reflectf(float x, float lo, float hi) {
  const float span = hi - lo;
  if (span <= 0) return lo;
  if (x < lo || x > hi) {
    const float dx = x < lo ? lo - x : x - hi, n = floorf(dx / span), r = dx - n * span;
    const int even = fmodf(n, 2.0f) == 0;
    return x < lo ? (even ? lo + r : hi - r) : (even ? hi - r : lo + r);
  }
  return x;
}

/* float16 and bfloat16 are stored as their bits and computed in float32: the conversions,
 * rounding to nearest even as numpy and ml_dtypes do (NaN stays NaN, overflow is infinity). */
static inline float xr_float16_to_f32(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  uint32_t x;
  float f;
  if (e == 0) {
    f = (float)m * 5.9604644775390625e-8f; /* m * 2^-24, exact */
    memcpy(&x, &f, 4);
    x |= sign;
  } else if (e == 31) {
    x = sign | 0x7f800000u | (m << 13);
  } else {
    x = sign | ((e + 112u) << 23) | (m << 13);
  }
  memcpy(&f, &x, 4);
  return f;
}

static inline uint16_t xr_f32_to_float16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu)); /* NaN */
  if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520: infinity */
  if (a < 0x38800000u) {                                   /* below 2^-14: subnormal or 0 */
    if (a < 0x33000000u) return (uint16_t)sign;            /* at most 2^-25: 0 */
    const uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u, shift = 126u - e;
    uint32_t r = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return (uint16_t)(sign | r);
  }
  uint32_t r = a - 0x38000000u; /* exponent rebiased from 127 to 15 */
  const uint32_t rem = r & 0x1fffu;
  r >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return (uint16_t)(sign | r);
}

static inline float xr_bfloat16_to_f32(uint16_t h) {
  const uint32_t x = (uint32_t)h << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

static inline uint16_t xr_f32_to_bfloat16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* NaN */
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

/* The h x w plane x padded by (pt, pl, pb, pr) bytes of value v into d, split into sh x sw
 * phases of rows and columns: padded row r, column c at
 * d[(((r % sh) * sw + c % sw) * hq + r / sh) * pw + c / sw], hq = ceil((h + pt + pb) / sh),
 * pw = ceil((w + pl + pr) / sw); positions past the padded plane hold v too. An 8-bit depthwise
 * convolution of strides (sh, sw) then reads tap (i, j) of output (oy, ox) at a fixed offset
 * plus oy * pw + ox: one loop over the whole map (rows pw apart) per channel. Bytes only: int8
 * planes are passed as uint8 (the same bits). */
static inline void xr_dw_plane_u8(const uint8_t *restrict x, uint8_t *restrict d, int64_t h, int64_t w,
                                  int64_t pt, int64_t pl, int64_t pb, int64_t pr, int64_t sh, int64_t sw,
                                  uint8_t v) {
  const int64_t wp = w + pl + pr, pw = (wp + sw - 1) / sw, hq = (h + pt + pb + sh - 1) / sh;
  for (int64_t rp = 0; rp < sh; ++rp) {
    for (int64_t q = 0; q < hq; ++q) {
      const int64_t r = q * sh + rp;
      for (int64_t f = 0; f < sw; ++f) { /* phase f: input columns u * sw + f - pl */
        uint8_t *restrict df = d + ((rp * sw + f) * hq + q) * pw;
        if (r < pt || r >= pt + h) {
          for (int64_t u = 0; u < pw; ++u) df[u] = v;
          continue;
        }
        const uint8_t *restrict s = x + (r - pt) * w;
        if (sw == 1) {
          for (int64_t c = 0; c < pl; ++c) df[c] = v;
          memcpy(df + pl, s, (size_t)w);
          for (int64_t c = pl + w; c < pw; ++c) df[c] = v;
          continue;
        }
        const int64_t off = f - pl, lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
        const int64_t hi0 = w - off <= 0 ? 0 : (w - off + sw - 1) / sw, hi = hi0 < pw ? hi0 : pw;
        int64_t u = 0;
        for (; u < lo && u < pw; ++u) df[u] = v;
        for (; u < hi; ++u) df[u] = s[u * sw + off];
        for (; u < pw; ++u) df[u] = v;
      }
    }
  }
}

/* 8-bit pointwise (1x1, stride 1, unpadded) convolution of uint8 data by int8 weights, a GEMM
 * with int32 sums over the channels-first map it reads in place: out[o][p] = sum over c of
 * x[c][p] * w[o][c]. Pixels go in tiles of XR_PW_PIXELS: xr_pw_pack_u8 interleaves a tile's
 * channels by fours ([c/4][pixel][4]: four channels of a pixel are one 32-bit lane), then
 * xr_pw_tile_u8s8 sums XR_PW_CHANNELS output channels over the tile, each weight quad (w[o][4k],
 * ..., w[o][4k+3]) broadcast to every lane. With AVX-512 VNNI that is one vpdpbusd per 16
 * pixels, 4 channels and 1 output channel; every other compiler or target, or XRELAY_PORTABLE,
 * gets plain C loops over the same layout (constant trip counts: compilers vectorise them with
 * 16-bit widening products). Both are exact int32 sums (vpdpbusd adds its four 16-bit products
 * in 32 bits without saturating; the caller makes sure no sum can overflow), so every build
 * computes the same bits. No allocation: the caller hands the tile buffers. */
#define XR_PW_PIXELS 64
#define XR_PW_CHANNELS 4
/* xr_pw_tile_u8s8 stays one function for the whole program (GCC, Clang): inlined into a step
 * with its channel count a constant, GCC unrolled the loop and spilled the 16 accumulators
 * (int8 MobileNetV2's C 6.6 -> 6.0 ms when not inlined). Other compilers decide themselves. */
#if defined(__GNUC__)
#define XR_OUTLINED static __attribute__((noinline, unused))
#else
#define XR_OUTLINED static inline
#endif
#if defined(__AVX512VNNI__) && defined(__AVX512F__) && !defined(XRELAY_PORTABLE)
#include <immintrin.h>
#define XR_PW_VNNI 1
#endif

/* The np (<= XR_PW_PIXELS) pixels of x (channels c_, one plane of `plane` bytes each) into
 * xt[cp / 4][XR_PW_PIXELS][4]; channels from c_ to cp (a multiple of 4) and pixels from np on
 * are zeros. */
static inline void xr_pw_pack_u8(const uint8_t *restrict x, uint8_t *restrict xt, int64_t c_,
                                 int64_t cp, int64_t plane, int64_t np) {
  for (int64_t k = 0; k < cp / 4; ++k) {
    uint8_t *restrict d = xt + k * XR_PW_PIXELS * 4;
    if (4 * k + 3 < c_ && np == XR_PW_PIXELS) { /* a whole quad of a whole tile: the four channels
      interleaved in one loop, which compilers vectorise (a channel at a time into every fourth
      byte stayed scalar: 13x slower) */
      const uint8_t *restrict s0 = x + 4 * k * plane, *restrict s1 = s0 + plane, *restrict s2 = s1 + plane,
                                 *restrict s3 = s2 + plane;
      for (int64_t i = 0; i < XR_PW_PIXELS; ++i) {
        d[4 * i] = s0[i];
        d[4 * i + 1] = s1[i];
        d[4 * i + 2] = s2[i];
        d[4 * i + 3] = s3[i];
      }
      continue;
    }
    for (int64_t j = 0; j < 4; ++j) {
      const int64_t c = 4 * k + j;
      if (c < c_ && np == XR_PW_PIXELS) {
        const uint8_t *restrict s = x + c * plane;
        for (int64_t i = 0; i < XR_PW_PIXELS; ++i) d[i * 4 + j] = s[i];
      } else if (c < c_) { /* a partial tile: its pixels, then zeros (no test per byte) */
        const uint8_t *restrict s = x + c * plane;
        for (int64_t i = 0; i < np; ++i) d[i * 4 + j] = s[i];
        for (int64_t i = np; i < XR_PW_PIXELS; ++i) d[i * 4 + j] = 0;
      } else {
        for (int64_t i = 0; i < XR_PW_PIXELS; ++i) d[i * 4 + j] = 0;
      }
    }
  }
}

/* The np (<= XR_PW_PIXELS) rows of cp bytes (a multiple of 4), `stride` apart from `rows`, into
 * xt[cp / 4][XR_PW_PIXELS][4] as xr_pw_pack_u8 lays pixels out (rows from np on are zeros): an
 * 8-bit convolution's patches, one row each, become the pixels of the pointwise tiles. */
static inline void xr_pw_pack_rows_u8(const uint8_t *restrict rows, int64_t stride, uint8_t *restrict xt,
                                      int64_t cp, int64_t np) {
  for (int64_t i = 0; i < XR_PW_PIXELS; ++i) {
    for (int64_t k = 0; k < cp / 4; ++k) {
      if (i < np) memcpy(xt + (k * XR_PW_PIXELS + i) * 4, rows + i * stride + 4 * k, 4);
      else memset(xt + (k * XR_PW_PIXELS + i) * 4, 0, 4);
    }
  }
}

/* The patches of np (<= XR_PW_PIXELS) output pixels of a convolution over a channels-last
 * map into xt[cq / 4][XR_PW_PIXELS][4] as xr_pw_pack_u8 lays pixels out (pixels from np on are
 * zeros): tile pixel i is output pixel p0 + i of rows of ow pixels, whose patch starts at
 * xcl + oy * sy + ox * sx (oy = (p0 + i) / ow, ox = (p0 + i) % ow) and is kh kernel rows ky
 * bytes apart, each nr runs of `run` bytes (a multiple of 4) rx bytes apart: cq = kh * nr * run
 * bytes. Tiles therefore span output rows: a 14-column map fills its 64 lanes too. */
static inline void xr_pw_pack_patches_u8(const uint8_t *restrict xcl, uint8_t *restrict xt, int64_t p0,
                                         int64_t np, int64_t ow, int64_t sy, int64_t sx, int64_t kh,
                                         int64_t ky, int64_t nr, int64_t rx, int64_t run) {
  const int64_t cq = kh * nr * run;
  for (int64_t i = 0; i < np; ++i) {
    const int64_t oy = (p0 + i) / ow, ox = (p0 + i) % ow;
    const uint8_t *restrict s = xcl + oy * sy + ox * sx;
    uint8_t *restrict d = xt + i * 4;
    for (int64_t ki = 0; ki < kh; ++ki)
      for (int64_t r = 0; r < nr; ++r) {
        const uint8_t *restrict sr = s + ki * ky + r * rx;
        uint8_t *restrict dr = d + (ki * nr + r) * (run / 4) * (XR_PW_PIXELS * 4);
        for (int64_t t = 0; t < run / 4; ++t) memcpy(dr + t * (XR_PW_PIXELS * 4), sr + 4 * t, 4);
      }
  }
  if (np < XR_PW_PIXELS)
    for (int64_t k = 0; k < cq / 4; ++k) memset(xt + (k * XR_PW_PIXELS + np) * 4, 0, (size_t)(XR_PW_PIXELS - np) * 4);
}

/* acc[q][i] = the sum over the cp channels of xt (xr_pw_pack_u8) of pixel i times the weight
 * row w + q * ws (its first cp bytes), for the XR_PW_CHANNELS rows q (acc: XR_PW_CHANNELS x
 * XR_PW_PIXELS int32), at least for the tile's first np pixels (the rest may be left unset). */
#ifdef XR_PW_VNNI
/* w0 .. w3: the weight quads (w[q][4k], ..., w[q][4k+3]) of the tile's 4 output channels, each
   broadcast to the 16 lanes */
#define XR_PW_QUADS(k) \
  int32_t q0, q1, q2, q3; \
  memcpy(&q0, w + 4 * (k), 4); \
  memcpy(&q1, w + ws + 4 * (k), 4); \
  memcpy(&q2, w + 2 * ws + 4 * (k), 4); \
  memcpy(&q3, w + 3 * ws + 4 * (k), 4); \
  const __m512i w0 = _mm512_set1_epi32(q0), w1 = _mm512_set1_epi32(q1), w2 = _mm512_set1_epi32(q2), \
                w3 = _mm512_set1_epi32(q3)
#endif
XR_OUTLINED void xr_pw_tile_u8s8(const uint8_t *restrict xt, const int8_t *restrict w, int64_t cp,
                                   int64_t ws, int64_t np, int32_t *restrict acc) {
#ifdef XR_PW_VNNI
  if (np <= XR_PW_PIXELS / 2) { /* a tile of at most 32 pixels (14x14's last 4, a 5-row band's
    last 24): its first two vectors of 16 pixels, 8 sums in flight (one vector at a time, 4 sums
    waited on vpdpbusd's latency); the tile's pixels from np on are zeros */
    __m512i b00 = _mm512_setzero_si512(), b01 = b00, b10 = b00, b11 = b00, b20 = b00, b21 = b00,
            b30 = b00, b31 = b00;
    for (int64_t k = 0; k < cp / 4; ++k) {
      const __m512i x0 = _mm512_loadu_si512(xt + k * XR_PW_PIXELS * 4),
                    x1 = _mm512_loadu_si512(xt + k * XR_PW_PIXELS * 4 + 64);
      XR_PW_QUADS(k);
      b00 = _mm512_dpbusd_epi32(b00, x0, w0); b01 = _mm512_dpbusd_epi32(b01, x1, w0);
      b10 = _mm512_dpbusd_epi32(b10, x0, w1); b11 = _mm512_dpbusd_epi32(b11, x1, w1);
      b20 = _mm512_dpbusd_epi32(b20, x0, w2); b21 = _mm512_dpbusd_epi32(b21, x1, w2);
      b30 = _mm512_dpbusd_epi32(b30, x0, w3); b31 = _mm512_dpbusd_epi32(b31, x1, w3);
    }
    _mm512_storeu_si512(acc, b00); _mm512_storeu_si512(acc + 16, b01);
    _mm512_storeu_si512(acc + XR_PW_PIXELS, b10); _mm512_storeu_si512(acc + XR_PW_PIXELS + 16, b11);
    _mm512_storeu_si512(acc + 2 * XR_PW_PIXELS, b20); _mm512_storeu_si512(acc + 2 * XR_PW_PIXELS + 16, b21);
    _mm512_storeu_si512(acc + 3 * XR_PW_PIXELS, b30); _mm512_storeu_si512(acc + 3 * XR_PW_PIXELS + 16, b31);
    return;
  }
  /* more than 32 pixels: all four vectors (a 48-pixel tile's last 16 lanes sum zeros, at full
     rate where one vector at a time ran ResNet-18's 7x7 stem at a third of it) */
  __m512i a00 = _mm512_setzero_si512(), a01 = a00, a02 = a00, a03 = a00, a10 = a00, a11 = a00,
          a12 = a00, a13 = a00, a20 = a00, a21 = a00, a22 = a00, a23 = a00, a30 = a00, a31 = a00,
          a32 = a00, a33 = a00;
  for (int64_t k = 0; k < cp / 4; ++k) {
    const uint8_t *restrict s = xt + k * XR_PW_PIXELS * 4;
    const __m512i x0 = _mm512_loadu_si512(s), x1 = _mm512_loadu_si512(s + 64),
                  x2 = _mm512_loadu_si512(s + 128), x3 = _mm512_loadu_si512(s + 192);
    XR_PW_QUADS(k);
    a00 = _mm512_dpbusd_epi32(a00, x0, w0); a01 = _mm512_dpbusd_epi32(a01, x1, w0);
    a02 = _mm512_dpbusd_epi32(a02, x2, w0); a03 = _mm512_dpbusd_epi32(a03, x3, w0);
    a10 = _mm512_dpbusd_epi32(a10, x0, w1); a11 = _mm512_dpbusd_epi32(a11, x1, w1);
    a12 = _mm512_dpbusd_epi32(a12, x2, w1); a13 = _mm512_dpbusd_epi32(a13, x3, w1);
    a20 = _mm512_dpbusd_epi32(a20, x0, w2); a21 = _mm512_dpbusd_epi32(a21, x1, w2);
    a22 = _mm512_dpbusd_epi32(a22, x2, w2); a23 = _mm512_dpbusd_epi32(a23, x3, w2);
    a30 = _mm512_dpbusd_epi32(a30, x0, w3); a31 = _mm512_dpbusd_epi32(a31, x1, w3);
    a32 = _mm512_dpbusd_epi32(a32, x2, w3); a33 = _mm512_dpbusd_epi32(a33, x3, w3);
  }
  _mm512_storeu_si512(acc, a00); _mm512_storeu_si512(acc + 16, a01);
  _mm512_storeu_si512(acc + 32, a02); _mm512_storeu_si512(acc + 48, a03);
  _mm512_storeu_si512(acc + 64, a10); _mm512_storeu_si512(acc + 80, a11);
  _mm512_storeu_si512(acc + 96, a12); _mm512_storeu_si512(acc + 112, a13);
  _mm512_storeu_si512(acc + 128, a20); _mm512_storeu_si512(acc + 144, a21);
  _mm512_storeu_si512(acc + 160, a22); _mm512_storeu_si512(acc + 176, a23);
  _mm512_storeu_si512(acc + 192, a30); _mm512_storeu_si512(acc + 208, a31);
  _mm512_storeu_si512(acc + 224, a32); _mm512_storeu_si512(acc + 240, a33);
#else
  (void)np; /* every pixel: a constant trip count vectorises */
  for (int64_t i = 0; i < XR_PW_CHANNELS * XR_PW_PIXELS; ++i) acc[i] = 0;
  for (int64_t k = 0; k < cp / 4; ++k) {
    const uint8_t *restrict s = xt + k * XR_PW_PIXELS * 4;
    for (int64_t q = 0; q < XR_PW_CHANNELS; ++q) {
      const int8_t *restrict wq = w + q * ws + 4 * k;
      const int16_t w0 = wq[0], w1 = wq[1], w2 = wq[2], w3 = wq[3];
      int32_t *restrict a = acc + q * XR_PW_PIXELS;
      for (int64_t i = 0; i < XR_PW_PIXELS; ++i)
        a[i] += (int32_t)(int16_t)(s[4 * i] * w0) + (int32_t)(int16_t)(s[4 * i + 1] * w1) +
                (int32_t)(int16_t)(s[4 * i + 2] * w2) + (int32_t)(int16_t)(s[4 * i + 3] * w3);
    }
  }
#endif
}

#endif /* XRELAY_KERNELS_H */
