/*
 * xrelay's C kernels: the helpers generated C calls (float dense, softmax, fixed-point
 * multiplication, average-pool window counts); convolutions, pools and the other ops are
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

#endif /* XRELAY_KERNELS_H */
