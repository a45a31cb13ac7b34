/*
 * xrelay's C kernels: the loop nests that generated C calls for the ops it does not write
 * out itself (convolution, dense, pools, softmax). C99, libc and libm only, no allocation:
 * every pointer is given by the caller, scratch included.
 *
 * Semantics are Relay's, as xrelay's reference kernels (xrelay.kernels) implement them:
 * NCHW data, OIHW weights (I = input channels per group), padding (top, left, bottom,
 * right); pools count ceil-mode overhang as outside the input; an average pool divides by
 * the window positions inside the padded input (count_include_pad) or inside the input.
 * Sums run in the order of the loops below, so results match the reference within float
 * rounding, not bit for bit.
 */
#ifndef XRELAY_KERNELS_H
#define XRELAY_KERNELS_H

#include <float.h>
#include <math.h>
#include <stdint.h>

/* out[n, o, y, x] = sum over (c, i, j) of data[n, g*cg + c, y*sh - pt + i*dh, x*sw - pl + j*dw]
 * * w[o, c, i, j], for the group g of o. */
static inline void xr_conv2d_nchw_f32(const float *data, const float *w, float *out, int32_t n,
                               int32_t c, int32_t h, int32_t wd, int32_t o, int32_t kh,
                               int32_t kw, int32_t oh, int32_t ow, int32_t sh, int32_t sw,
                               int32_t pt, int32_t pl, int32_t dh, int32_t dw, int32_t groups) {
  const int32_t cg = c / groups, og = o / groups;
  for (int32_t b = 0; b < n; ++b) {
    for (int32_t oc = 0; oc < o; ++oc) {
      const int32_t g = oc / og;
      float *dst = out + ((int64_t)b * o + oc) * oh * ow;
      for (int32_t p = 0; p < oh * ow; ++p) dst[p] = 0.0f;
      for (int32_t ic = 0; ic < cg; ++ic) {
        const float *src = data + ((int64_t)b * c + g * cg + ic) * h * wd;
        const float *wk = w + ((int64_t)oc * cg + ic) * kh * kw;
        for (int32_t i = 0; i < kh; ++i) {
          for (int32_t j = 0; j < kw; ++j) {
            const float wv = wk[i * kw + j];
            for (int32_t y = 0; y < oh; ++y) {
              const int32_t iy = y * sh - pt + i * dh;
              if (iy < 0 || iy >= h) continue;
              const float *row = src + (int64_t)iy * wd;
              float *drow = dst + (int64_t)y * ow;
              for (int32_t x = 0; x < ow; ++x) {
                const int32_t ix = x * sw - pl + j * dw;
                if (ix >= 0 && ix < wd) drow[x] += row[ix] * wv;
              }
            }
          }
        }
      }
    }
  }
}

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

/* Max (is_max) or average pool over NCHW planes (nc = N * C of them). */
static inline void xr_pool2d_nchw_f32(const float *data, float *out, int64_t nc, int32_t h, int32_t wd,
                               int32_t oh, int32_t ow, int32_t kh, int32_t kw, int32_t sh,
                               int32_t sw, int32_t dh, int32_t dw, int32_t pt, int32_t pl,
                               int32_t pb, int32_t pr, int is_max, int count_include_pad) {
  for (int64_t p = 0; p < nc; ++p) {
    const float *src = data + p * h * wd;
    float *dst = out + p * oh * ow;
    for (int32_t y = 0; y < oh; ++y) {
      for (int32_t x = 0; x < ow; ++x) {
        const int32_t y0 = y * sh - pt, x0 = x * sw - pl;
        float acc = is_max ? -INFINITY : 0.0f;
        for (int32_t i = 0; i < kh; ++i) {
          const int32_t iy = y0 + i * dh;
          for (int32_t j = 0; j < kw; ++j) {
            const int32_t ix = x0 + j * dw;
            /* Padding adds nothing: -inf for max, 0 for average. */
            if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
            const float v = src[(int64_t)iy * wd + ix];
            acc = is_max ? (v > acc || isnan(v) ? v : acc) : acc + v;
          }
        }
        if (!is_max) {
          int32_t cnt;
          if (count_include_pad)
            cnt = xr_window_count(y0, kh, dh, -pt, h + pb) * xr_window_count(x0, kw, dw, -pl, wd + pr);
          else
            cnt = xr_window_count(y0, kh, dh, 0, h) * xr_window_count(x0, kw, dw, 0, wd);
          acc = acc / (float)(cnt > 1 ? cnt : 1);
        }
        dst[(int64_t)y * ow + x] = acc;
      }
    }
  }
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
