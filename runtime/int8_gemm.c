/* uint8 x int8 -> int32 matrix product for the arena executor (runtime/fast_int8.py).
 *
 *   c[o][p] = sum_k a[p][k] * w[o][k]      (a: P x Kp uint8 rows; w packed, see below)
 *
 * Weights are packed once as [O/16 blocks][Kp/4][16 channels][4 k] int8 (zero padded), so one
 * 64-byte load holds 4 consecutive k of 16 output channels: exactly the operand of AVX-512 VNNI's
 * vpdpbusd (16 lanes, each a sum of four u8 x s8 products added to an int32). Eight pixels are
 * computed at once (eight accumulators), each step broadcasting 4 bytes of one pixel's row.
 * Without VNNI the same loops run in plain C. Both are exact int32 sums (no saturation: vpdpbusd
 * adds the four 16-bit products in 32 bits), so every path gives the same bits.
 */
#include <stdint.h>
#include <string.h>
#if defined(__AVX512VNNI__) && defined(__AVX512F__)
#include <immintrin.h>
#define XR_VNNI 1
#else
#define XR_VNNI 0
#endif

typedef int64_t i64;

int xr_int8_has_vnni(void) { return XR_VNNI; }

/* channel blocks [b0, b1) of 16 output channels; o is the real channel count */
void xr_gemm_u8s8(const uint8_t *a, const int8_t *w, int32_t *c, i64 p, i64 kp, i64 o, i64 b0, i64 b1) {
    const i64 k4 = kp / 4;
    for (i64 b = b0; b < b1; ++b) {
        const int8_t *wb = w + b * k4 * 64;
        const i64 nch = (o - b * 16) < 16 ? (o - b * 16) : 16;
        for (i64 p0 = 0; p0 < p; p0 += 8) {
            const i64 np_ = (p - p0) < 8 ? (p - p0) : 8;
            int32_t tile[8][16];
#if XR_VNNI
            __m512i acc[8];
            for (int j = 0; j < 8; ++j) acc[j] = _mm512_setzero_si512();
            if (np_ == 8) {
                const uint8_t *r = a + p0 * kp;
                for (i64 k = 0; k < k4; ++k) {
                    const __m512i wv = _mm512_loadu_si512((const void *)(wb + k * 64));
                    for (int j = 0; j < 8; ++j) {
                        int32_t x4;
                        memcpy(&x4, r + j * kp + k * 4, 4);
                        acc[j] = _mm512_dpbusd_epi32(acc[j], _mm512_set1_epi32(x4), wv);
                    }
                }
            } else {
                for (i64 k = 0; k < k4; ++k) {
                    const __m512i wv = _mm512_loadu_si512((const void *)(wb + k * 64));
                    for (i64 j = 0; j < np_; ++j) {
                        int32_t x4;
                        memcpy(&x4, a + (p0 + j) * kp + k * 4, 4);
                        acc[j] = _mm512_dpbusd_epi32(acc[j], _mm512_set1_epi32(x4), wv);
                    }
                }
            }
            for (int j = 0; j < 8; ++j) _mm512_storeu_si512((void *)tile[j], acc[j]);
#else
            memset(tile, 0, sizeof(tile));
            for (i64 j = 0; j < np_; ++j) {
                const uint8_t *r = a + (p0 + j) * kp;
                for (i64 k = 0; k < k4; ++k)
                    for (int ch = 0; ch < 16; ++ch)
                        for (int q = 0; q < 4; ++q)
                            tile[j][ch] += (int32_t)r[k * 4 + q] * (int32_t)wb[k * 64 + ch * 4 + q];
            }
#endif
            for (i64 ch = 0; ch < nch; ++ch) {
                int32_t *dst = c + (b * 16 + ch) * p + p0;
                for (i64 j = 0; j < np_; ++j) dst[j] = tile[j][ch];
            }
        }
    }
}

/* im2row of one uint8 image held channels-last (h, w, c) for output rows [y0, y1): row
 * (y * ow + x) holds the window in (i, j, channel) order -- one contiguous copy of c bytes per
 * tap -- and zeros outside the image; the Kp - K padding columns stay untouched (zero). */
void xr_im2row_hwc_u8(const uint8_t *x, uint8_t *rows, i64 c, i64 h, i64 w, i64 kh, i64 kw, i64 sh,
                      i64 sw, i64 dh, i64 dw, i64 pt, i64 pl, i64 ow, i64 kp, i64 y0, i64 y1) {
    for (i64 y = y0; y < y1; ++y) {
        for (i64 xo = 0; xo < ow; ++xo) {
            uint8_t *r = rows + (y * ow + xo) * kp;
            for (i64 i = 0; i < kh; ++i) {
                const i64 iy = y * sh + i * dh - pt;
                for (i64 j = 0; j < kw; ++j, r += c) {
                    const i64 ix = xo * sw + j * dw - pl;
                    if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                        memset(r, 0, (size_t)c);
                    else
                        memcpy(r, x + (iy * w + ix) * c, (size_t)c);
                }
            }
        }
    }
}

/* Depthwise convolution, one uint8 channel with its int8 kernel per output channel (groups = C,
 * one output channel per group), channels [c0, c1): int32 sums, zero padding. Row by row: for
 * each tap the valid output columns are found once and the inner loop runs over them without
 * tests (contiguous for stride 1, so the compiler vectorises it). */
void xr_depthwise_u8s8(const uint8_t *x, const int8_t *w, int32_t *o, i64 h, i64 wd, i64 oh, i64 ow,
                       i64 kh, i64 kw, i64 sh, i64 sw, i64 dh, i64 dw, i64 pt, i64 pl, i64 c0, i64 c1) {
    for (i64 ch = c0; ch < c1; ++ch) {
        const uint8_t *plane = x + ch * h * wd;
        const int8_t *k = w + ch * kh * kw;
        int32_t *dst = o + ch * oh * ow;
        for (i64 y = 0; y < oh; ++y) {
            int32_t *acc = dst + y * ow;
            for (i64 xo = 0; xo < ow; ++xo) acc[xo] = 0;
            for (i64 i = 0; i < kh; ++i) {
                const i64 iy = y * sh + i * dh - pt;
                if (iy < 0 || iy >= h) continue;
                const uint8_t *src = plane + iy * wd;
                for (i64 j = 0; j < kw; ++j) {
                    const int32_t kij = k[i * kw + j];
                    const i64 off = j * dw - pl; /* ix = xo * sw + off */
                    i64 lo = off < 0 ? (-off + sw - 1) / sw : 0;
                    i64 hi = (wd - 1 - off) >= 0 ? (wd - 1 - off) / sw + 1 : 0;
                    if (hi > ow) hi = ow;
                    if (sw == 1) {
                        const uint8_t *s1 = src + off;
                        for (i64 xo = lo; xo < hi; ++xo) acc[xo] += (int32_t)s1[xo] * kij;
                    } else {
                        for (i64 xo = lo; xo < hi; ++xo) acc[xo] += (int32_t)src[xo * sw + off] * kij;
                    }
                }
            }
        }
    }
}

/* The tail of a lowered requantize, fused: for each element of acc (n x c x inner, channel
 * ch = (i / inner) % c), t = ((acc << ls) * m + 2^(total - 1)) >> total in int64 (rounding half
 * up, arithmetic shift), wrapped to int32, plus zp (int32, wrapping), clipped to [lo, hi], stored
 * as int8 (kind 0) or uint8 (kind 1). The per-channel arrays have c entries, or one (per tensor). */
void xr_requant_tail(const int32_t *acc, void *out, i64 kind, i64 n, i64 c, i64 inner, const int64_t *m,
                     const int64_t *ls, const int64_t *total, i64 per_channel, i64 zp, i64 lo, i64 hi) {
    for (i64 b = 0; b < n; ++b) {
        for (i64 ch = 0; ch < c; ++ch) {
            const i64 q = per_channel ? ch : 0;
            const int64_t mm = m[q], sl = ls[q], tt = total[q], half = (int64_t)1 << (tt - 1);
            const i64 base = (b * c + ch) * inner;
            for (i64 k = 0; k < inner; ++k) {
                int64_t t = (int64_t)((uint64_t)(int64_t)acc[base + k] << sl);
                t = (int64_t)((uint64_t)t * (uint64_t)mm);
                t = (int64_t)((uint64_t)t + (uint64_t)half) >> tt;
                int32_t r = (int32_t)(uint32_t)(uint64_t)t;
                r = (int32_t)((uint32_t)r + (uint32_t)(int32_t)zp);
                if (r < lo) r = (int32_t)lo;
                if (r > hi) r = (int32_t)hi;
                if (kind == 0) ((int8_t *)out)[base + k] = (int8_t)r;
                else ((uint8_t *)out)[base + k] = (uint8_t)r;
            }
        }
    }
}

/* float -> int32 as the reference kernels cast (kernels/elementwise.py: truncated to int64, then
 * wrapped modulo 2^32; beyond int64 or NaN numpy gives INT64_MIN, which wraps to 0). */
static inline int32_t xr_f32_to_i32(float f) {
    const int64_t v = (f >= -9223372036854775808.0f && f < 9223372036854775808.0f) ? (int64_t)f : INT64_MIN;
    return (int32_t)(uint32_t)(uint64_t)v;
}

/* onnxruntime's requantize (fake-quantization-to-integer{onnxruntime=true}), fused: for each
 * element, f = (float)acc * mult[channel] in float32, clamped to [flo, fhi] (NaN stays NaN),
 * rounded half to even as the relay ops write it, (f + 1.5 * 2^23) - 1.5 * 2^23 (compiled with
 * -ffp-contract=off: no FMA), converted to int32 (xr_f32_to_i32), plus zp (wrapping), stored as
 * int8 (kind 0) or uint8 (kind 1), wrapping like the reference cast. Channel ch = (i / inner) % c. */
void xr_requant_float(const int32_t *acc, void *out, i64 kind, i64 n, i64 c, i64 inner, const float *mult,
                      i64 per_channel, float flo, float fhi, i64 zp) {
    const float magic = 12582912.0f;
    for (i64 b = 0; b < n; ++b) {
        for (i64 ch = 0; ch < c; ++ch) {
            const float m = mult[per_channel ? ch : 0];
            const i64 base = (b * c + ch) * inner;
            for (i64 k = 0; k < inner; ++k) {
                float f = (float)acc[base + k] * m;
                f = f < flo ? flo : f;
                f = f > fhi ? fhi : f;
                f = f + magic;
                f = f - magic;
                const int32_t r = (int32_t)((uint32_t)xr_f32_to_i32(f) + (uint32_t)(int32_t)zp);
                if (kind == 0) ((int8_t *)out)[base + k] = (int8_t)r;
                else ((uint8_t *)out)[base + k] = (uint8_t)r;
            }
        }
    }
}

/* onnxruntime's QLinearAdd as fake-quantization-to-integer{onnxruntime=true} writes it (ort_add),
 * fused: t = (float)((double)y * rb + fixed), s = (float)((double)x * ra + (double)t), s rounded
 * half to even ((s + 1.5 * 2^23) - 1.5 * 2^23 in float32), to int32 (xr_f32_to_i32), clipped to
 * [lo, hi]. x, y, out: int8 (kind 0) or uint8 (kind 1), count elements. */
static inline double xr_load8(const void *p, i64 kind, i64 i) {
    return kind == 0 ? (double)((const int8_t *)p)[i] : (double)((const uint8_t *)p)[i];
}

void xr_qlinear_add(const void *x, i64 xkind, const void *y, i64 ykind, void *out, i64 okind, i64 count,
                    double ra, double rb, double fixed, i64 lo, i64 hi) {
    const float magic = 12582912.0f;
    for (i64 i = 0; i < count; ++i) {
        const float t = (float)(xr_load8(y, ykind, i) * rb + fixed);
        float s = (float)(xr_load8(x, xkind, i) * ra + (double)t);
        s = s + magic;
        s = s - magic;
        int32_t r = xr_f32_to_i32(s);
        if (r < lo) r = (int32_t)lo;
        if (r > hi) r = (int32_t)hi;
        if (okind == 0) ((int8_t *)out)[i] = (int8_t)r;
        else ((uint8_t *)out)[i] = (uint8_t)r;
    }
}
