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
 *   XR_F8_STORE(p, a)  the 8 floats at p = a */
#if defined(__GNUC__) && !defined(XRELAY_PORTABLE) && defined(__AVX__)
typedef float xr_f32x8 __attribute__((vector_size(32)));
#define XR_F8_ZERO(a) xr_f32x8 a##0 = {0}
#define XR_F8_LOAD(w, p) xr_f32x8 w##0; memcpy(&w##0, (p), 32)
#define XR_F8_MAC(a, x, w) a##0 += (x) * w##0
#define XR_F8_MACV(a, x, w) a##0 += x##0 * w##0
#define XR_F8_STORE(p, a) memcpy((p), &a##0, 32)
#elif defined(__GNUC__) && !defined(XRELAY_PORTABLE)
typedef float xr_f32x4 __attribute__((vector_size(16)));
#define XR_F8_ZERO(a) xr_f32x4 a##0 = {0}, a##1 = {0}
#define XR_F8_LOAD(w, p) xr_f32x4 w##0, w##1; memcpy(&w##0, (p), 16); memcpy(&w##1, (p) + 4, 16)
#define XR_F8_MAC(a, x, w) a##0 += (x) * w##0; a##1 += (x) * w##1
#define XR_F8_MACV(a, x, w) a##0 += x##0 * w##0; a##1 += x##1 * w##1
#define XR_F8_STORE(p, a) memcpy((p), &a##0, 16); memcpy((p) + 4, &a##1, 16)
#else
#define XR_F8_ZERO(a) float a[8] = {0, 0, 0, 0, 0, 0, 0, 0}
#define XR_F8_LOAD(w, p) float w[8]; memcpy(w, (p), 32)
#define XR_F8_MAC(a, x, w) for (int xr_l = 0; xr_l < 8; ++xr_l) a[xr_l] += (x) * w[xr_l]
#define XR_F8_MACV(a, x, w) for (int xr_l = 0; xr_l < 8; ++xr_l) a[xr_l] += x[xr_l] * w[xr_l]
#define XR_F8_STORE(p, a) memcpy((p), a, 32)
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

#endif /* XRELAY_KERNELS_H */
