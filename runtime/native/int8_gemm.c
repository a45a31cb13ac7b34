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
#include <math.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__AVX2__)
#include <immintrin.h>
#endif
#if defined(__AVX512VNNI__) && defined(__AVX512F__)
#include <immintrin.h>
#define XR_VNNI 1
#else
#define XR_VNNI 0
#endif
#if XR_VNNI && defined(__AVX512VBMI__) && defined(__AVX512BW__)
#define XR_VBMI 1
#else
#define XR_VBMI 0
#endif

typedef int64_t i64;

/* A lowered requantize fused into the product, so the int32 accumulator never reaches memory:
 * r = acc + offset[ch] (int32, wrapping: the zero-point terms and the bias, folded), then
 *   kind 1 (onnxruntime's arithmetic, as xr_requant_float): f = (float)r * fmult[ch] clamped to
 *          [flo, fhi], rounded half to even, to int32, plus zp;
 *   kind 2 (Relay's fixed point, as xr_requant_tail): ((r << ls) * m + 2^(total-1)) >> total in
 *          int64, wrapped to int32, plus zp, clipped to [lo, hi];
 * stored as int8 (out_kind 0) or uint8 (out_kind 1), wrapping like the reference cast.
 * Per-channel arrays have an entry per output channel, or one (per_channel = 0). */
typedef struct {
    i64 kind, out_kind, per_channel, zp, lo, hi;
    const int32_t *offset; /* may be NULL (no int32 terms) */
    const float *fmult;
    const int64_t *m, *ls, *total;
    float flo, fhi;
    /* with add_t (a dense layer's bias QLinearAdd, onnxruntime's arithmetic as
     * xr_qlinear_add_const's): each 8-bit value x of the requantize above (read as out_kind
     * says) becomes (float)((double)x * add_ra + (double)add_t[ch]) rounded half to even,
     * clamped to [add_lo, add_hi], stored as add_kind (0 int8, 1 uint8); NULL: none */
    const float *add_t;
    double add_ra;
    i64 add_kind, add_lo, add_hi;
} xr_epi;

/* QLinearAdd of n uint8 values xs and a constant side's float32 terms t (xr_qlinear_add_const's
 * inner multiply-add) into o: a loop the compiler vectorises; rounding by the magic number is
 * monotonic and fixes integers, so clamping the rounded float to the integer bounds [flo, fhi]
 * is the integer clip. o may be xs. */
static inline void xr_add_const_u8(const uint8_t *xs, const float *t, double ra, float flo, float fhi, uint8_t *o,
                                   i64 n) {
    const float magic = 12582912.0f;
    for (i64 k = 0; k < n; ++k) {
        float f = (float)((double)xs[k] * ra + (double)t[k]);
        f = (f + magic) - magic;
        f = f < flo ? flo : f;
        f = f > fhi ? fhi : f;
        o[k] = (uint8_t)(int32_t)f;
    }
}

/* The bias QLinearAdd of e (e->add_t) on n 8-bit values of channels ch0 .. ch0 + n - 1 in
 * place, the same operations as xr_qlinear_add_const's. */
static inline void xr_epi_add(const xr_epi *e, uint8_t *v, i64 ch0, i64 n) {
    const float magic = 12582912.0f, flo = (float)e->add_lo, fhi = (float)e->add_hi;
    const float *t = e->add_t + ch0;
    const double ra = e->add_ra;
    if (e->out_kind == 1) {
        xr_add_const_u8(v, t, ra, flo, fhi, v, n);
    } else {
        for (i64 k = 0; k < n; ++k) {
            float f = (float)((double)(int8_t)v[k] * ra + (double)t[k]);
            f = (f + magic) - magic;
            f = f < flo ? flo : f;
            f = f > fhi ? fhi : f;
            v[k] = (uint8_t)(int32_t)f;
        }
    }
}

static inline int32_t xr_f32_to_i32(float f);

#if XR_VNNI
/* A requantize's constants in registers (xr_rq_of): the clamp bounds and the zero point. */
typedef struct {
    __m512 lo, hi;
    __m512i zp;
} xr_rq;

static inline xr_rq xr_rq_of(const xr_epi *e) {
    xr_rq q = {_mm512_set1_ps(e->flo), _mm512_set1_ps(e->fhi), _mm512_set1_epi32((int32_t)e->zp)};
    return q;
}

/* Sixteen sums (the offset already added) requantized the onnxruntime way (e->kind 1) in
 * AVX-512, the same arithmetic as xr_epi_row's scalar loop: (float) * mult, clamped (max/min
 * differ from the scalar tests only on a signed zero, which the rounding makes 0 either way),
 * rounded half to even by the conversion itself (the scalar loop's 1.5 * 2^23 additions give
 * the same integer for |f| <= 2^22, which xr_epi_vector requires of the bounds), plus zp,
 * wrapped to 8 bits. */
static inline __m128i xr_requant16_rq(__m512i sum, __m512 mult, xr_rq q) {
    __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(sum), mult);
    f = _mm512_min_ps(_mm512_max_ps(f, q.lo), q.hi);
    const __m512i r = _mm512_cvt_roundps_epi32(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    return _mm512_cvtepi32_epi8(_mm512_add_epi32(r, q.zp));
}

/* The same with the offset added first (wrapping int32, as the scalar loop). */
static inline __m128i xr_requant16(__m512i acc, __m512i off, __m512 mult, const xr_epi *e) {
    return xr_requant16_rq(_mm512_add_epi32(acc, off), mult, xr_rq_of(e));
}

/* xr_epi_add on 16 bytes (lanes of mask; t: their channels' constants) in AVX-512: the same
 * double products and sums, the same conversion to float and rounding by 1.5 * 2^23; clamped by
 * max/min (which differ from the scalar tests only on a signed zero, 0 either way), then
 * truncated to int32 (exact: the values are integers) and wrapped to 8 bits. */
static inline __m128i xr_epi_add16(const xr_epi *e, __m128i r, const float *t, __mmask16 mask) {
    const __m512i x = e->out_kind == 1 ? _mm512_cvtepu8_epi32(r) : _mm512_cvtepi8_epi32(r);
    const __m512 tv = _mm512_maskz_loadu_ps(mask, t);
    const __m512d ra = _mm512_set1_pd(e->add_ra);
    __m512d lo = _mm512_cvtepi32_pd(_mm512_castsi512_si256(x)), hi = _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(x, 1));
    lo = _mm512_add_pd(_mm512_mul_pd(lo, ra), _mm512_cvtps_pd(_mm512_castps512_ps256(tv)));
    hi = _mm512_add_pd(_mm512_mul_pd(hi, ra), _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(tv), 1))));
    const __m256 flo8 = _mm512_cvtpd_ps(lo), fhi8 = _mm512_cvtpd_ps(hi);
    __m512 f = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(flo8)), _mm256_castps_pd(fhi8), 1));
    const __m512 magic = _mm512_set1_ps(12582912.0f);
    f = _mm512_sub_ps(_mm512_add_ps(f, magic), magic);
    f = _mm512_min_ps(_mm512_max_ps(f, _mm512_set1_ps((float)e->add_lo)), _mm512_set1_ps((float)e->add_hi));
    return _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(f));
}
#endif

/* Whether e's requantize to uint8 may run as xr_requant64_sat: the float form (kind 1) with the
 * clamp bounds exactly the byte's ([-zp, 255 - zp], zp a byte: no fused activation range)
 * and every multiplier of channels [0, n) finite with magnitude at most 1/2, so that
 * (float)sum * mult stays below 2^30 and converts without overflow; no bias add after it. */
static inline int xr_epi_saturating(const xr_epi *e, i64 n) {
    if (!XR_VNNI || e->kind != 1 || e->out_kind != 1 || e->zp < 0 || e->zp > 255 || e->add_t != NULL) return 0;
    if (e->flo != (float)-e->zp || e->fhi != (float)(255 - e->zp)) return 0;
    for (i64 j = 0; j < (e->per_channel ? n : 1); ++j)
        if (!(fabsf(e->fmult[j]) <= 0.5f)) return 0;
    return 1;
}

#if XR_VBMI
/* byte 16c + j of xr_requant64_sat's packed bytes: channel c, pixel j (packus leaves, per
 * 128-bit lane l, pixels 4l .. 4l + 3 of the four channels in turn) */
static const uint8_t xr_sat_index[64] = {0,  1,  2,  3,  16, 17, 18, 19, 32, 33, 34, 35, 48, 49, 50, 51,
                                         4,  5,  6,  7,  20, 21, 22, 23, 36, 37, 38, 39, 52, 53, 54, 55,
                                         8,  9,  10, 11, 24, 25, 26, 27, 40, 41, 42, 43, 56, 57, 58, 59,
                                         12, 13, 14, 15, 28, 29, 30, 31, 44, 45, 46, 47, 60, 61, 62, 63};

/* Four channels' 16 sums each (offset added) requantized as xr_requant16 does when
 * xr_epi_saturating holds, as 64 bytes: channel c's 16 at 16c. The clamp is the saturation
 * of the packs (int32 -> int16 signed, + zp in int16 saturating, -> uint8 unsigned): with
 * round(f) exact in int32 and zp a byte, sat8(sat16(sat16(round f) + zp)) is
 * clamp(round f + zp, 0, 255) = round(clamp(f, -zp, 255 - zp)) + zp, the reference's bits,
 * in 3 operations a vector and 6 per four instead of 8 a vector. */
static inline __m512i xr_requant64_sat(__m512i s0, __m512i s1, __m512i s2, __m512i s3, __m512 m0, __m512 m1,
                                       __m512 m2, __m512 m3, __m512i zp16, __m512i perm) {
#define XR_RND(s, m) _mm512_cvt_roundps_epi32(_mm512_mul_ps(_mm512_cvtepi32_ps(s), m), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
    const __m512i lo = _mm512_adds_epi16(_mm512_packs_epi32(XR_RND(s0, m0), XR_RND(s1, m1)), zp16);
    const __m512i hi = _mm512_adds_epi16(_mm512_packs_epi32(XR_RND(s2, m2), XR_RND(s3, m3)), zp16);
#undef XR_RND
    return _mm512_permutexvar_epi8(perm, _mm512_packus_epi16(lo, hi));
}
#endif

/* Whether e may use xr_requant16: the float form with clamp bounds within 2^22 in magnitude
 * (where rounding by the conversion and by the 1.5 * 2^23 additions agree; every 8-bit
 * requantize's bounds are a few hundred). */
static inline int xr_epi_vector(const xr_epi *e) {
    return XR_VNNI && e->kind == 1 && e->flo >= -4194304.0f && e->fhi <= 4194304.0f;
}

/* n consecutive sums of channel ch, acc[0..n), requantized by e into out[idx .. idx + n). Each
 * kind is its own loop without branches inside, so the compiler vectorises it. */
static void xr_epi_row(const xr_epi *e, void *out, i64 idx, i64 ch, const int32_t *acc, i64 n) {
    const i64 q = e->per_channel ? ch : 0;
    const uint32_t off = e->offset ? (uint32_t)e->offset[ch] : 0u;
    int32_t r[64];
    i64 start = 0;
#if XR_VNNI
    if (xr_epi_vector(e)) {
        const __m512i offv = _mm512_set1_epi32((int32_t)off);
        const __m512 mv = _mm512_set1_ps(e->fmult[q]);
        for (; start + 16 <= n; start += 16) {
            const __m128i b = xr_requant16(_mm512_loadu_si512((const void *)(acc + start)), offv, mv, e);
            _mm_storeu_si128((__m128i *)((uint8_t *)out + idx + start), b);
        }
    }
#endif
    acc += start;
    idx += start;
    n -= start;
    for (i64 s = 0; s < n; s += 64) {
        const i64 m = (n - s) < 64 ? (n - s) : 64;
        if (e->kind == 1) {
            const float magic = 12582912.0f, mult = e->fmult[q], flo = e->flo, fhi = e->fhi;
            const uint32_t zp = (uint32_t)(int32_t)e->zp;
            for (i64 k = 0; k < m; ++k) {
                float f = (float)(int32_t)((uint32_t)acc[s + k] + off) * mult;
                f = f < flo ? flo : f;
                f = f > fhi ? fhi : f;
                f = f + magic;
                f = f - magic;
                r[k] = (int32_t)((uint32_t)xr_f32_to_i32(f) + zp);
            }
        } else {
            const int64_t sl = e->ls[q], tt = e->total[q], half = (int64_t)1 << (tt - 1), mm = e->m[q];
            const int32_t lo = (int32_t)e->lo, hi = (int32_t)e->hi;
            const uint32_t zp = (uint32_t)(int32_t)e->zp;
            for (i64 k = 0; k < m; ++k) {
                int64_t t = (int64_t)((uint64_t)(int64_t)(int32_t)((uint32_t)acc[s + k] + off) << sl);
                t = (int64_t)((uint64_t)t * (uint64_t)mm);
                t = (int64_t)((uint64_t)t + (uint64_t)half) >> tt;
                int32_t v = (int32_t)((uint32_t)(uint64_t)t + zp);
                v = v < lo ? lo : v;
                r[k] = v > hi ? hi : v;
            }
        }
        if (e->out_kind == 0)
            for (i64 k = 0; k < m; ++k) ((int8_t *)out)[idx + s + k] = (int8_t)r[k];
        else
            for (i64 k = 0; k < m; ++k) ((uint8_t *)out)[idx + s + k] = (uint8_t)r[k];
    }
}

int xr_int8_has_vnni(void) { return XR_VNNI; }

/* Pixels [q0, q0 + p) of the product, their rows at a (p x kp), channel blocks [b0, b1) of 16
 * output channels (o is the real channel count). c holds the result, channel-major (pt pixels
 * per channel, a convolution's NCHW) or with pm pixel-major (o channels per pixel, a dense
 * layer's rows): with e NULL int32, else 8-bit, each tile requantized by e. */
#define XR_AT(ch, pix) (pm ? (pix) * o + (ch) : (ch) * pt + (pix))

/* The sums of np_ pixels (tile[j][ch], or acc[j] in registers) of channel block b written to c
 * as xr_gemm_tile says: int32, or requantized by e (16 lanes at once where xr_epi_vector). */
static void xr_store_block(int32_t tile[8][16], i64 np_, i64 b, i64 o, void *c, i64 q0, i64 p0, i64 pt,
                           const xr_epi *e, int pm) {
    const i64 nch = (o - b * 16) < 16 ? (o - b * 16) : 16;
#if XR_VNNI
    if (e != NULL && xr_epi_vector(e)) {
        const __mmask16 mask = (__mmask16)((1u << nch) - 1u);
        const __m512i offv = e->offset ? _mm512_maskz_loadu_epi32(mask, e->offset + b * 16) : _mm512_setzero_si512();
        const __m512 mv = e->per_channel ? _mm512_maskz_loadu_ps(mask, e->fmult + b * 16) : _mm512_set1_ps(e->fmult[0]);
        if (pm) {
            for (i64 j = 0; j < np_; ++j) {
                __m128i r = xr_requant16(_mm512_loadu_si512((const void *)tile[j]), offv, mv, e);
                if (e->add_t != NULL) r = xr_epi_add16(e, r, e->add_t + b * 16, mask);
                _mm_mask_storeu_epi8((uint8_t *)c + (q0 + p0 + j) * o + b * 16, mask, r);
            }
            return;
        }
        uint8_t bytes[8][16];
        if (np_ == 8) {
            /* the 8 pixels x 16 channels of bytes transposed in registers (bytes, 16-bit and
             * 32-bit interleaves), then one 8-byte store per channel's run of pixels */
            __m128i r[8];
            for (int j = 0; j < 8; ++j) r[j] = xr_requant16(_mm512_loadu_si512((const void *)tile[j]), offv, mv, e);
            __m128i a[8], t[8];
            for (int j = 0; j < 4; ++j) {
                a[2 * j] = _mm_unpacklo_epi8(r[2 * j], r[2 * j + 1]);     /* channels 0-7, pixels 2j, 2j+1 */
                a[2 * j + 1] = _mm_unpackhi_epi8(r[2 * j], r[2 * j + 1]); /* channels 8-15 */
            }
            for (int h = 0; h < 2; ++h) { /* h: channels 0-7 or 8-15 */
                t[4 * h + 0] = _mm_unpacklo_epi16(a[h], a[2 + h]); /* 4 channels x pixels 0-3 */
                t[4 * h + 1] = _mm_unpackhi_epi16(a[h], a[2 + h]);
                t[4 * h + 2] = _mm_unpacklo_epi16(a[4 + h], a[6 + h]); /* the same, pixels 4-7 */
                t[4 * h + 3] = _mm_unpackhi_epi16(a[4 + h], a[6 + h]);
            }
            uint8_t *base = (uint8_t *)c + b * 16 * pt + q0 + p0;
            for (int h = 0; h < 2; ++h)
                for (int q = 0; q < 2; ++q) {
                    /* two channels each: their 8 pixels in the low and high 8 bytes */
                    const __m128i lo = _mm_unpacklo_epi32(t[4 * h + q], t[4 * h + 2 + q]);
                    const __m128i hi = _mm_unpackhi_epi32(t[4 * h + q], t[4 * h + 2 + q]);
                    const i64 c0 = h * 8 + q * 4; /* channels c0 .. c0 + 3 */
                    const __m128i v[4] = {lo, _mm_unpackhi_epi64(lo, lo), hi, _mm_unpackhi_epi64(hi, hi)};
                    for (int u = 0; u < 4; ++u)
                        if (c0 + u < nch) _mm_storel_epi64((__m128i *)(base + (c0 + u) * pt), v[u]);
                }
            return;
        }
        for (i64 j = 0; j < np_; ++j)
            _mm_storeu_si128((__m128i *)bytes[j], xr_requant16(_mm512_loadu_si512((const void *)tile[j]), offv, mv, e));
        for (i64 ch = 0; ch < nch; ++ch) {
            uint8_t *dst = (uint8_t *)c + (b * 16 + ch) * pt + q0 + p0;
            for (i64 j = 0; j < np_; ++j) dst[j] = bytes[j][ch];
        }
        return;
    }
#endif
    if (e == NULL) {
        for (i64 ch = 0; ch < nch; ++ch)
            for (i64 j = 0; j < np_; ++j) ((int32_t *)c)[XR_AT(b * 16 + ch, q0 + p0 + j)] = tile[j][ch];
    } else if (pm) {
        for (i64 ch = 0; ch < nch; ++ch)
            for (i64 j = 0; j < np_; ++j) xr_epi_row(e, c, XR_AT(b * 16 + ch, q0 + p0 + j), b * 16 + ch, &tile[j][ch], 1);
        if (e->add_t != NULL)
            for (i64 j = 0; j < np_; ++j) xr_epi_add(e, (uint8_t *)c + (q0 + p0 + j) * o + b * 16, b * 16, nch);
    } else {
        for (i64 ch = 0; ch < nch; ++ch) {
            int32_t sums[8];
            for (i64 j = 0; j < np_; ++j) sums[j] = tile[j][ch];
            xr_epi_row(e, c, (b * 16 + ch) * pt + q0 + p0, b * 16 + ch, sums, np_);
        }
    }
}

/* Pixels j < np_ of a GEMM: rows of a row-major matrix, kp bytes apart (the others repeat the
 * first, never read). */
static inline void xr_rows8(const uint8_t *r, i64 kp, i64 np_, const uint8_t *px[8]) {
    for (i64 j = 0; j < 8; ++j) px[j] = r + (j < np_ ? j : 0) * kp;
}

#if XR_VNNI
static inline __m512i xr_bcast4(const uint8_t *p) {
    int32_t x4;
    memcpy(&x4, p, 4);
    return _mm512_set1_epi32(x4);
}

/* Eight pixels (px: their first tap's bytes; rs bytes between kernel rows) by two channel
 * blocks (w0, w1: 32 channels), kh kernel rows of seg4 4-byte steps: 16 accumulators in
 * registers, each step two weight loads and eight broadcasts for sixteen vpdpbusd (one block
 * at a time made a broadcast per product and the compiler copied the accumulator array between
 * registers on every step). Named variables, not an array, so they stay in registers. A GEMM's
 * rows are pixels of one kernel row (xr_rows8); a direct convolution's read its padded band in
 * place. */
static void xr_direct8x2(const uint8_t *const px[8], i64 rs, i64 kh, i64 seg4, const int8_t *w0, const int8_t *w1,
                         int32_t t0[8][16], int32_t t1[8][16]) {
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    __m512i b0 = a0, b1 = a0, b2 = a0, b3 = a0, b4 = a0, b5 = a0, b6 = a0, b7 = a0;
    const uint8_t *p0 = px[0], *p1 = px[1], *p2 = px[2], *p3 = px[3], *p4 = px[4], *p5 = px[5], *p6 = px[6],
                  *p7 = px[7];
    for (i64 i = 0; i < kh; ++i) {
        for (i64 k = 0; k < seg4; ++k) {
            const __m512i v0 = _mm512_loadu_si512((const void *)(w0 + k * 64));
            const __m512i v1 = _mm512_loadu_si512((const void *)(w1 + k * 64));
            __m512i x;
#define XR_STEP(j)                           \
    x = xr_bcast4(p##j + k * 4);             \
    a##j = _mm512_dpbusd_epi32(a##j, x, v0); \
    b##j = _mm512_dpbusd_epi32(b##j, x, v1);
            XR_STEP(0) XR_STEP(1) XR_STEP(2) XR_STEP(3) XR_STEP(4) XR_STEP(5) XR_STEP(6) XR_STEP(7)
#undef XR_STEP
        }
        w0 += seg4 * 64, w1 += seg4 * 64;
        p0 += rs, p1 += rs, p2 += rs, p3 += rs, p4 += rs, p5 += rs, p6 += rs, p7 += rs;
    }
    _mm512_storeu_si512((void *)t0[0], a0); _mm512_storeu_si512((void *)t1[0], b0);
    _mm512_storeu_si512((void *)t0[1], a1); _mm512_storeu_si512((void *)t1[1], b1);
    _mm512_storeu_si512((void *)t0[2], a2); _mm512_storeu_si512((void *)t1[2], b2);
    _mm512_storeu_si512((void *)t0[3], a3); _mm512_storeu_si512((void *)t1[3], b3);
    _mm512_storeu_si512((void *)t0[4], a4); _mm512_storeu_si512((void *)t1[4], b4);
    _mm512_storeu_si512((void *)t0[5], a5); _mm512_storeu_si512((void *)t1[5], b5);
    _mm512_storeu_si512((void *)t0[6], a6); _mm512_storeu_si512((void *)t1[6], b6);
    _mm512_storeu_si512((void *)t0[7], a7); _mm512_storeu_si512((void *)t1[7], b7);
}

/* The same sums for one channel block, of np_ (<= 8) pixels (the others left at zero). */
static void xr_direct8x1(const uint8_t *const px[8], i64 np_, i64 rs, i64 kh, i64 seg4, const int8_t *w0,
                         int32_t t0[8][16]) {
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    const uint8_t *p0 = px[0], *p1 = px[1], *p2 = px[2], *p3 = px[3], *p4 = px[4], *p5 = px[5], *p6 = px[6],
                  *p7 = px[7];
    for (i64 i = 0; i < kh; ++i) {
        if (np_ == 8) {
            for (i64 k = 0; k < seg4; ++k) {
                const __m512i v0 = _mm512_loadu_si512((const void *)(w0 + k * 64));
#define XR_STEP(j) a##j = _mm512_dpbusd_epi32(a##j, xr_bcast4(p##j + k * 4), v0);
                XR_STEP(0) XR_STEP(1) XR_STEP(2) XR_STEP(3) XR_STEP(4) XR_STEP(5) XR_STEP(6) XR_STEP(7)
#undef XR_STEP
            }
        } else {
            for (i64 k = 0; k < seg4; ++k) {
                const __m512i v0 = _mm512_loadu_si512((const void *)(w0 + k * 64));
                a0 = _mm512_dpbusd_epi32(a0, xr_bcast4(p0 + k * 4), v0);
#define XR_STEP(j) \
    if (np_ > j) a##j = _mm512_dpbusd_epi32(a##j, xr_bcast4(p##j + k * 4), v0);
                XR_STEP(1) XR_STEP(2) XR_STEP(3) XR_STEP(4) XR_STEP(5) XR_STEP(6)
#undef XR_STEP
            }
        }
        w0 += seg4 * 64;
        p0 += rs, p1 += rs, p2 += rs, p3 += rs, p4 += rs, p5 += rs, p6 += rs, p7 += rs;
    }
    _mm512_storeu_si512((void *)t0[0], a0); _mm512_storeu_si512((void *)t0[1], a1);
    _mm512_storeu_si512((void *)t0[2], a2); _mm512_storeu_si512((void *)t0[3], a3);
    _mm512_storeu_si512((void *)t0[4], a4); _mm512_storeu_si512((void *)t0[5], a5);
    _mm512_storeu_si512((void *)t0[6], a6); _mm512_storeu_si512((void *)t0[7], a7);
}

/* Up to 4 pixels (np_, a constant where inlined) by 4 channel blocks (w[0..3]): 4 * np_
 * accumulators, each step four weight loads and np_ broadcasts for 4 * np_ vpdpbusd, sums into
 * t[block][pixel]. For a group of fewer than 8 pixels (the last of a 7x7 image's 49), which
 * xr_direct8x1 ran once per block, each block's weights loaded for its few products: about
 * as long as a whole group of 8. */
static inline __attribute__((always_inline)) void xr_few4(const uint8_t *const px[8], const int np_, i64 rs, i64 kh,
                                                          i64 seg4, const int8_t *const w[4], int32_t t[4][8][16]) {
    __m512i a[4][4];
    const uint8_t *q[4];
    const int8_t *w0 = w[0], *w1 = w[1], *w2 = w[2], *w3 = w[3];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
        q[j] = px[j < np_ ? j : 0];
#pragma GCC unroll 4
        for (int u = 0; u < 4; ++u) a[j][u] = _mm512_setzero_si512();
    }
    for (i64 i = 0; i < kh; ++i) {
        for (i64 k = 0; k < seg4; ++k) {
            const __m512i v0 = _mm512_loadu_si512((const void *)(w0 + k * 64));
            const __m512i v1 = _mm512_loadu_si512((const void *)(w1 + k * 64));
            const __m512i v2 = _mm512_loadu_si512((const void *)(w2 + k * 64));
            const __m512i v3 = _mm512_loadu_si512((const void *)(w3 + k * 64));
#pragma GCC unroll 4
            for (int j = 0; j < 4; ++j)
                if (j < np_) {
                    const __m512i x = xr_bcast4(q[j] + k * 4);
                    a[j][0] = _mm512_dpbusd_epi32(a[j][0], x, v0);
                    a[j][1] = _mm512_dpbusd_epi32(a[j][1], x, v1);
                    a[j][2] = _mm512_dpbusd_epi32(a[j][2], x, v2);
                    a[j][3] = _mm512_dpbusd_epi32(a[j][3], x, v3);
                }
        }
        w0 += seg4 * 64, w1 += seg4 * 64, w2 += seg4 * 64, w3 += seg4 * 64;
#pragma GCC unroll 4
        for (int j = 0; j < 4; ++j) q[j] += rs;
    }
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j)
        if (j < np_)
#pragma GCC unroll 4
            for (int u = 0; u < 4; ++u) _mm512_storeu_si512((void *)t[u][j], a[j][u]);
}

/* The products of a last group of np_ (1-7) pixels (px) with channel blocks [b0, b1) of the
 * packed weights w (k4 4-byte steps a block), stored by xr_store_block as the group at q0 + p0:
 * by pixels four at a time and blocks four at a time (xr_few4; a block past b1 repeats b0's,
 * its sums unused). */
static void xr_few_group(const uint8_t *const px[8], i64 np_, i64 rs, i64 kh, i64 seg4, const int8_t *w, i64 k4,
                         i64 b0, i64 b1, i64 o, void *c, i64 q0, i64 p0, i64 pt, const xr_epi *e, int pm) {
    int32_t t[4][8][16];
    for (i64 j0 = 0; j0 < np_; j0 += 4) {
        const i64 n = (np_ - j0) < 4 ? (np_ - j0) : 4;
        const uint8_t *const *sub = px + j0;
        for (i64 b = b0; b < b1; b += 4) {
            const int8_t *ws[4];
            for (i64 u = 0; u < 4; ++u) ws[u] = w + (b + u < b1 ? b + u : b0) * k4 * 64;
            switch (n) {
            case 1: xr_few4(sub, 1, rs, kh, seg4, ws, t); break;
            case 2: xr_few4(sub, 2, rs, kh, seg4, ws, t); break;
            case 3: xr_few4(sub, 3, rs, kh, seg4, ws, t); break;
            default: xr_few4(sub, 4, rs, kh, seg4, ws, t); break;
            }
            for (i64 u = 0; u < 4 && b + u < b1; ++u) xr_store_block(t[u], n, b + u, o, c, q0, p0 + j0, pt, e, pm);
        }
    }
}
#elif defined(__AVX2__)
/* AVX2 without VNNI: the same exact sums with vpmaddwd on 16-bit values (not vpmaddubsw, whose
 * 16-bit pair sums saturate: onnxruntime's AVX2 kernels). A step's 64 weight bytes (16 channels
 * x 4 taps) widen to four registers of 4 channels x 4 taps; a pixel's 4 bytes widen and repeat
 * in each 64-bit lane, so vpmaddwd gives every channel's two pair sums (taps 0 + 1, 2 + 3), each
 * at most 2 x 255 x 128 in magnitude; they add up in int32 over the steps and pair up at the
 * end (xr_pairs8). Two pixels at a time: 8 accumulators, 4 weight and 2 pixel registers. */
static inline __m256i xr_bcast4_16(const uint8_t *p) {
    int32_t x4;
    memcpy(&x4, p, 4);
    return _mm256_broadcastq_epi64(_mm_cvtepu8_epi16(_mm_cvtsi32_si128(x4)));
}

/* Channels 0-3 (a) and 4-7 (b) as pair sums (a channel's two in adjacent int32 lanes) to the 8
 * channel sums in order: hadd gives c0 c1 c4 c5 | c2 c3 c6 c7, the 64-bit lanes reordered. */
static inline __m256i xr_pairs8(__m256i a, __m256i b) {
    return _mm256_permute4x64_epi64(_mm256_hadd_epi32(a, b), 0xD8);
}

static void xr_direct8x1(const uint8_t *const px[8], i64 np_, i64 rs, i64 kh, i64 seg4, const int8_t *w0,
                         int32_t t0[8][16]) {
    for (i64 j = 0; j < np_; j += 2) {
        const int two = j + 1 < np_;
        const uint8_t *p = px[j], *q = px[two ? j + 1 : j];
        __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        const int8_t *w = w0;
        for (i64 i = 0; i < kh; ++i) {
            for (i64 k = 0; k < seg4; ++k) {
                const int8_t *wk = w + k * 64;
                const __m256i v0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)wk));
                const __m256i v1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(wk + 16)));
                const __m256i v2 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(wk + 32)));
                const __m256i v3 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(wk + 48)));
                const __m256i x = xr_bcast4_16(p + k * 4), y = xr_bcast4_16(q + k * 4);
                a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(x, v0));
                a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(x, v1));
                a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(x, v2));
                a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(x, v3));
                b0 = _mm256_add_epi32(b0, _mm256_madd_epi16(y, v0));
                b1 = _mm256_add_epi32(b1, _mm256_madd_epi16(y, v1));
                b2 = _mm256_add_epi32(b2, _mm256_madd_epi16(y, v2));
                b3 = _mm256_add_epi32(b3, _mm256_madd_epi16(y, v3));
            }
            w += seg4 * 64;
            p += rs, q += rs;
        }
        _mm256_storeu_si256((__m256i *)t0[j], xr_pairs8(a0, a1));
        _mm256_storeu_si256((__m256i *)(t0[j] + 8), xr_pairs8(a2, a3));
        if (two) {
            _mm256_storeu_si256((__m256i *)t0[j + 1], xr_pairs8(b0, b1));
            _mm256_storeu_si256((__m256i *)(t0[j + 1] + 8), xr_pairs8(b2, b3));
        }
    }
}
#else
/* Portable: the same sums, one product at a time. */
static void xr_direct8x1(const uint8_t *const px[8], i64 np_, i64 rs, i64 kh, i64 seg4, const int8_t *w0,
                         int32_t t0[8][16]) {
    memset(t0, 0, sizeof(int32_t) * 8 * 16);
    for (i64 j = 0; j < np_; ++j)
        for (i64 i = 0; i < kh; ++i)
            for (i64 k = 0; k < seg4; ++k)
                for (int z = 0; z < 16; ++z)
                    for (int u = 0; u < 4; ++u)
                        t0[j][z] += (int32_t)px[j][i * rs + k * 4 + u] * (int32_t)w0[(i * seg4 + k) * 64 + z * 4 + u];
}
#endif

#define XR_PF_PANEL 65536
static void xr_gemm_tile(const uint8_t *a, const int8_t *w, void *c, i64 p, i64 q0, i64 pt, i64 kp, i64 o,
                         i64 b0, i64 b1, const xr_epi *e, int pm) {
    const i64 k4 = kp / 4;
    int32_t tile[8][16], tile1[8][16];
#if XR_VNNI
    /* two channel blocks at a time while there are two, whole groups of eight pixels by both.
     * The next pair's weights (a panel of 2 * kp * 16 bytes, read from memory the first time:
     * a model's weights do not stay in the caches between runs) are prefetched into L2 a share
     * before each group, so the first group of the next pair finds them there: BERT's
     * 128 x 768 x 768 with cold weights 0.384 -> 0.340 ms, one thread. Only for panels of up
     * to XR_PF_PANEL: a larger one streams from L2 on every group anyway, and the prefetches
     * competed with it (128 x 3072 x 768: 2 % slower with them). */
    const i64 groups = (p + 7) / 8, lines = 2 * k4; /* 64-byte lines of a pair's panel */
    const i64 whole = p / 8 * 8;                     /* the pixels of whole groups of 8 */
    const i64 share = lines * 64 <= XR_PF_PANEL ? (lines + groups - 1) / groups : 0;
    i64 b = b0;
    for (; b + 1 < b1; b += 2) {
        const int8_t *w0 = w + b * k4 * 64, *w1 = w0 + k4 * 64;
        const int8_t *next = w1 + k4 * 64; /* the next pair (or block) of this range */
        const i64 ahead = b + 3 < b1 ? lines : b + 2 < b1 ? k4 : 0;
        for (i64 p0 = 0; p0 < whole; p0 += 8) {
            for (i64 l = (p0 / 8) * share, end = l + share < ahead ? l + share : ahead; l < end; ++l)
                _mm_prefetch((const char *)(next + l * 64), _MM_HINT_T1);
            const uint8_t *px[8];
            xr_rows8(a + p0 * kp, kp, 8, px);
            xr_direct8x2(px, 0, 1, k4, w0, w1, tile, tile1);
            xr_store_block(tile, 8, b, o, c, q0, p0, pt, e, pm);
            xr_store_block(tile1, 8, b + 1, o, c, q0, p0, pt, e, pm);
        }
    }
    for (; b < b1; ++b) {
        const int8_t *w0 = w + b * k4 * 64;
        for (i64 p0 = 0; p0 < whole; p0 += 8) {
            const uint8_t *px[8];
            xr_rows8(a + p0 * kp, kp, 8, px);
            xr_direct8x1(px, 8, 0, 1, k4, w0, tile);
            xr_store_block(tile, 8, b, o, c, q0, p0, pt, e, pm);
        }
    }
    if (whole < p) { /* the last group of fewer than 8 pixels, every block */
        const uint8_t *px[8];
        xr_rows8(a + whole * kp, kp, p - whole, px);
        xr_few_group(px, p - whole, 0, 1, k4, w, k4, b0, b1, o, c, q0, whole, pt, e, pm);
    }
    (void)tile1;
#else
    (void)tile1;
    for (i64 b = b0; b < b1; ++b) {
        const int8_t *wb = w + b * k4 * 64;
        for (i64 p0 = 0; p0 < p; p0 += 8) {
            const i64 np_ = (p - p0) < 8 ? (p - p0) : 8;
            const uint8_t *px[8];
            xr_rows8(a + p0 * kp, kp, np_, px);
            xr_direct8x1(px, np_, 0, 1, k4, wb, tile);
            xr_store_block(tile, np_, b, o, c, q0, p0, pt, e, pm);
        }
    }
#endif
}

#undef XR_AT

/* channel blocks [b0, b1) of the product of p rows (a: p x kp): c as xr_gemm_tile's, channel-
 * major (pm 0: a convolution's output) or pixel-major (pm 1: a dense layer's) */
void xr_gemm_u8s8(const uint8_t *a, const int8_t *w, void *c, i64 p, i64 kp, i64 o, i64 b0, i64 b1,
                  const xr_epi *e, i64 pm) {
    xr_gemm_tile(a, w, c, p, 0, p, kp, o, b0, b1, e, (int)pm);
}

/* (c, hw) uint8 planes to hw rows of c bytes, ld bytes apart (the ld - c tail zeroed): the
 * channels-last copy im2row reads, or the rows of a 1x1 convolution directly. Pixels [p0, p1).
 * Blocks of 16 pixels x 16 channels are transposed in SSE registers (byte, 16-, 32- and 64-bit
 * interleaves); the channels and pixels left over are copied one by one. */
#if defined(__SSE2__)
static void xr_transpose16(const uint8_t *x, i64 hw, uint8_t *rows, i64 ld) {
    __m128i r[16], t[16], u[16];
    for (int j = 0; j < 16; ++j) r[j] = _mm_loadu_si128((const __m128i *)(x + j * hw)); /* channel j */
    for (int i = 0; i < 8; ++i) { /* 16-bit unit k: channels 2i, 2i + 1 of pixel k (+ 8) */
        t[i] = _mm_unpacklo_epi8(r[2 * i], r[2 * i + 1]);
        t[i + 8] = _mm_unpackhi_epi8(r[2 * i], r[2 * i + 1]);
    }
    for (int hlf = 0; hlf < 2; ++hlf) /* 32-bit unit k: channels 4i .. 4i + 3 of pixel 4g + k */
        for (int i = 0; i < 4; ++i) {
            u[8 * hlf + i] = _mm_unpacklo_epi16(t[8 * hlf + 2 * i], t[8 * hlf + 2 * i + 1]);
            u[8 * hlf + 4 + i] = _mm_unpackhi_epi16(t[8 * hlf + 2 * i], t[8 * hlf + 2 * i + 1]);
        }
    for (int g = 0; g < 4; ++g) { /* pixels 4g .. 4g + 3: u[4g .. 4g + 3] hold channel groups 0-3 */
        const __m128i vlo = _mm_unpacklo_epi32(u[4 * g], u[4 * g + 1]), vhi = _mm_unpackhi_epi32(u[4 * g], u[4 * g + 1]);
        const __m128i wlo = _mm_unpacklo_epi32(u[4 * g + 2], u[4 * g + 3]), whi = _mm_unpackhi_epi32(u[4 * g + 2], u[4 * g + 3]);
        _mm_storeu_si128((__m128i *)(rows + (4 * g + 0) * ld), _mm_unpacklo_epi64(vlo, wlo));
        _mm_storeu_si128((__m128i *)(rows + (4 * g + 1) * ld), _mm_unpackhi_epi64(vlo, wlo));
        _mm_storeu_si128((__m128i *)(rows + (4 * g + 2) * ld), _mm_unpacklo_epi64(vhi, whi));
        _mm_storeu_si128((__m128i *)(rows + (4 * g + 3) * ld), _mm_unpackhi_epi64(vhi, whi));
    }
}
#endif

void xr_planes_to_rows_u8(const uint8_t *x, uint8_t *rows, i64 c, i64 hw, i64 ld, i64 p0, i64 p1) {
    i64 q0 = p0;
#if defined(__SSE2__)
    for (; c >= 16 && q0 + 16 <= p1; q0 += 16) { /* fewer channels: the loop below */
        i64 ch = 0;
        for (; ch + 16 <= c; ch += 16) xr_transpose16(x + ch * hw + q0, hw, rows + q0 * ld + ch, ld);
        for (; ch < c; ++ch)
            for (i64 q = q0; q < q0 + 16; ++q) rows[q * ld + ch] = x[ch * hw + q];
        if (ld > c)
            for (i64 q = q0; q < q0 + 16; ++q) memset(rows + q * ld + c, 0, (size_t)(ld - c));
    }
#endif
    for (; q0 < p1; q0 += 64) {
        const i64 q1 = q0 + 64 < p1 ? q0 + 64 : p1;
        for (i64 ch = 0; ch < c; ++ch) {
            const uint8_t *src = x + ch * hw;
            for (i64 q = q0; q < q1; ++q) rows[q * ld + ch] = src[q];
        }
        if (ld > c)
            for (i64 q = q0; q < q1; ++q) memset(rows + q * ld + c, 0, (size_t)(ld - c));
    }
}

/* A 1x1 stride-1 unpadded convolution read straight from the NCHW planes and written to the NCHW
 * result: no channels-last rows, no transposed stores. x holds ch planes of p pixels; w is packed
 * as for xr_gemm_tile (kp = ch rounded up to 4); c is the result as xr_gemm_tile's channel-major
 * one (int32 with e NULL, else requantized by e). Channel blocks [b0, b1) of 16, pixels [q0, q1).
 * The roles of xr_gemm_tile's operands swap: a register holds 16 pixels of 4 consecutive
 * channels (four 16-byte plane loads interleaved by one byte permutation), each of 16
 * accumulators one output channel of those 16 pixels, its four weights broadcast; a channel's 16
 * sums are 16 consecutive bytes of its output plane. Returns 0 (nothing done) without VBMI. */
int xr_int8_has_vbmi(void) { return XR_VBMI; }

#if XR_VBMI
/* 16 pixels of `have` (1-4) consecutive planes, p bytes apart, as 16 pixels x 4 channels
 * (pixel-major, the channels past `have` zero): the four 16-byte loads in the lanes of one
 * register, one byte permutation. */
static inline __m512i xr_pw_load(const uint8_t *src, i64 p, __mmask16 m, i64 have, __m512i perm) {
    __m512i v = _mm512_zextsi128_si512(_mm_maskz_loadu_epi8(m, src));
    if (have > 1) v = _mm512_inserti32x4(v, _mm_maskz_loadu_epi8(m, src + p), 1);
    if (have > 2) v = _mm512_inserti32x4(v, _mm_maskz_loadu_epi8(m, src + 2 * p), 2);
    if (have > 3) v = _mm512_inserti32x4(v, _mm_maskz_loadu_epi8(m, src + 3 * p), 3);
    return _mm512_permutexvar_epi8(perm, v);
}

/* byte 4j + z of xr_pw_load's permutation: plane z, pixel j */
static const uint8_t xr_pw_index[64] = {0,  16, 32, 48, 1,  17, 33, 49, 2,  18, 34, 50, 3,  19, 35, 51,
                                        4,  20, 36, 52, 5,  21, 37, 53, 6,  22, 38, 54, 7,  23, 39, 55,
                                        8,  24, 40, 56, 9,  25, 41, 57, 10, 26, 42, 58, 11, 27, 43, 59,
                                        12, 28, 44, 60, 13, 29, 45, 61, 14, 30, 46, 62, 15, 31, 47, 63};

/* The 16 x 16 sums of xr_conv1x1_planes_u8s8's block over its `full` whole groups of 4 channels:
 * 16 pixels (x, planes p bytes apart, m the pixels present) by the 16 channels of the packed
 * weights wb, into acc[channel][pixel]; or, with dst (e in its vector form, no partial group
 * left), requantized in registers -- each channel's offset and multiplier broadcast -- and
 * stored as 16 bytes of its output plane, dst + j * p, for the nch channels from co0. Its own
 * function with one loop, the accumulators named variables, so they stay in registers (with
 * a second loop or the epilogue's calls in the same function the compiler copied them between
 * registers at every step). */
__attribute__((noinline)) static void xr_pw_dot(const uint8_t *x, i64 p, __mmask16 m, i64 full,
                                                const int8_t *wb, int32_t acc[16][16], const xr_epi *e,
                                                i64 co0, i64 nch, uint8_t *dst, int sat, const uint8_t *xs) {
    const __m512i perm = _mm512_loadu_si512((const void *)xr_pw_index);
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    __m512i a8 = a0, a9 = a0, a10 = a0, a11 = a0, a12 = a0, a13 = a0, a14 = a0, a15 = a0;
    if (dst != NULL && e->offset != NULL) { /* the sums start at their channel's offset (wrapping) */
        int32_t off[16] = {0};
        memcpy(off, e->offset + co0, (size_t)nch * sizeof(int32_t));
#define XR_PW_INIT(j) a##j = _mm512_set1_epi32(off[j]);
        XR_PW_INIT(0) XR_PW_INIT(1) XR_PW_INIT(2) XR_PW_INIT(3) XR_PW_INIT(4) XR_PW_INIT(5) XR_PW_INIT(6)
        XR_PW_INIT(7) XR_PW_INIT(8) XR_PW_INIT(9) XR_PW_INIT(10) XR_PW_INIT(11) XR_PW_INIT(12)
        XR_PW_INIT(13) XR_PW_INIT(14) XR_PW_INIT(15)
#undef XR_PW_INIT
    }
    int32_t w4;
#define XR_PW(j)                  \
    memcpy(&w4, wk + 4 * (j), 4); \
    a##j = _mm512_dpbusd_epi32(a##j, v, _mm512_set1_epi32(w4));
    if (xs != NULL) /* the pixels' groups of four channels already interleaved (xr_pw_load's) */
        for (i64 k = 0; k < full; ++k) {
            const __m512i v = _mm512_load_si512((const void *)(xs + 64 * k));
            const int8_t *wk = wb + k * 64;
            XR_PW(0) XR_PW(1) XR_PW(2) XR_PW(3) XR_PW(4) XR_PW(5) XR_PW(6) XR_PW(7)
            XR_PW(8) XR_PW(9) XR_PW(10) XR_PW(11) XR_PW(12) XR_PW(13) XR_PW(14) XR_PW(15)
        }
    else
        for (i64 k = 0; k < full; ++k) {
            const __m512i v = xr_pw_load(x + 4 * k * p, p, m, 4, perm);
            const int8_t *wk = wb + k * 64;
            XR_PW(0) XR_PW(1) XR_PW(2) XR_PW(3) XR_PW(4) XR_PW(5) XR_PW(6) XR_PW(7)
            XR_PW(8) XR_PW(9) XR_PW(10) XR_PW(11) XR_PW(12) XR_PW(13) XR_PW(14) XR_PW(15)
        }
#undef XR_PW
#define XR_PW_REQ(j)                                                                                   \
    if ((j) < nch) _mm_mask_storeu_epi8(dst + (j) * p, m, xr_requant16_rq(a##j, _mm512_set1_ps(mult[j]), q));
    if (dst != NULL) {
        /* the constants read before the stores (a byte store may alias e's fields) */
        const xr_rq q = xr_rq_of(e);
        float mult[16] = {0};
        if (e->per_channel)
            memcpy(mult, e->fmult + co0, (size_t)nch * sizeof(float));
        else
            for (int j = 0; j < 16; ++j) mult[j] = e->fmult[0];
        if (sat) { /* four channels at a time (xr_requant64_sat), whole groups of four first */
            const __m512i zp16 = _mm512_set1_epi16((int16_t)e->zp);
            const __m512i sperm = _mm512_loadu_si512((const void *)xr_sat_index);
#define XR_PW_SAT(j0, s0, s1, s2, s3)                                                                          \
    if ((j0) + 3 < nch) {                                                                                      \
        const __m512i b = xr_requant64_sat(s0, s1, s2, s3, _mm512_set1_ps(mult[j0]), _mm512_set1_ps(mult[(j0) + 1]), \
                                           _mm512_set1_ps(mult[(j0) + 2]), _mm512_set1_ps(mult[(j0) + 3]), zp16, \
                                           sperm);                                                             \
        _mm_mask_storeu_epi8(dst + (j0) * p, m, _mm512_castsi512_si128(b));                                    \
        _mm_mask_storeu_epi8(dst + ((j0) + 1) * p, m, _mm512_extracti32x4_epi32(b, 1));                        \
        _mm_mask_storeu_epi8(dst + ((j0) + 2) * p, m, _mm512_extracti32x4_epi32(b, 2));                        \
        _mm_mask_storeu_epi8(dst + ((j0) + 3) * p, m, _mm512_extracti32x4_epi32(b, 3));                        \
    }
            XR_PW_SAT(0, a0, a1, a2, a3) XR_PW_SAT(4, a4, a5, a6, a7) XR_PW_SAT(8, a8, a9, a10, a11)
            XR_PW_SAT(12, a12, a13, a14, a15)
#undef XR_PW_SAT
            const i64 done = nch & ~(i64)3; /* the last partial group of four: one at a time */
#define XR_PW_REST(j) \
    if ((j) >= done && (j) < nch) _mm_mask_storeu_epi8(dst + (j) * p, m, xr_requant16_rq(a##j, _mm512_set1_ps(mult[j]), q));
            XR_PW_REST(0) XR_PW_REST(1) XR_PW_REST(2) XR_PW_REST(3) XR_PW_REST(4) XR_PW_REST(5) XR_PW_REST(6)
            XR_PW_REST(7) XR_PW_REST(8) XR_PW_REST(9) XR_PW_REST(10) XR_PW_REST(11) XR_PW_REST(12)
            XR_PW_REST(13) XR_PW_REST(14) XR_PW_REST(15)
#undef XR_PW_REST
            return;
        }
        XR_PW_REQ(0) XR_PW_REQ(1) XR_PW_REQ(2) XR_PW_REQ(3) XR_PW_REQ(4) XR_PW_REQ(5) XR_PW_REQ(6)
        XR_PW_REQ(7) XR_PW_REQ(8) XR_PW_REQ(9) XR_PW_REQ(10) XR_PW_REQ(11) XR_PW_REQ(12) XR_PW_REQ(13)
        XR_PW_REQ(14) XR_PW_REQ(15)
        return;
    }
#undef XR_PW_REQ
#define XR_PW_SAVE(j) _mm512_storeu_si512((void *)acc[j], a##j);
    XR_PW_SAVE(0) XR_PW_SAVE(1) XR_PW_SAVE(2) XR_PW_SAVE(3) XR_PW_SAVE(4) XR_PW_SAVE(5) XR_PW_SAVE(6)
    XR_PW_SAVE(7) XR_PW_SAVE(8) XR_PW_SAVE(9) XR_PW_SAVE(10) XR_PW_SAVE(11) XR_PW_SAVE(12)
    XR_PW_SAVE(13) XR_PW_SAVE(14) XR_PW_SAVE(15)
#undef XR_PW_SAVE
}

/* The last partial group of `rest` (1-3) channels added to acc (the missing planes read as zero;
 * their packed weights wk are zero too). */
static void xr_pw_tail(const uint8_t *x, i64 p, __mmask16 m, i64 rest, const int8_t *wk, int32_t acc[16][16]) {
    const __m512i v = xr_pw_load(x, p, m, rest, _mm512_loadu_si512((const void *)xr_pw_index));
    for (int j = 0; j < 16; ++j) {
        int32_t w4;
        memcpy(&w4, wk + 4 * j, 4);
        const __m512i a = _mm512_loadu_si512((const void *)acc[j]);
        _mm512_storeu_si512((void *)acc[j], _mm512_dpbusd_epi32(a, v, _mm512_set1_epi32(w4)));
    }
}
#endif

#define XR_PW_CHUNK 4096 /* pixels whose planes (ch x 256 bytes) every channel block reads in turn */
#define XR_PW_XS 256     /* groups of four channels (1024 channels, 16 KB) interleaved once for all blocks */
int xr_conv1x1_planes_u8s8(const uint8_t *x, const int8_t *w, void *c, i64 ch, i64 p, i64 kp, i64 o, i64 b0,
                           i64 b1, i64 q0, i64 q1, const xr_epi *e) {
#if XR_VBMI
    const i64 full = ch / 4, rest = ch - full * 4;
    const int vec = e != NULL && xr_epi_vector(e);
    const int sat = vec && xr_epi_saturating(e, o);
    int32_t acc[16][16];
    if (vec && rest == 0 && full <= XR_PW_XS && b1 - b0 > 1) {
        /* requantized in registers, several blocks: each group of 16 pixels interleaved once
         * (xr_pw_load) into xs, then every block's product reads it */
        _Alignas(64) uint8_t xs[XR_PW_XS * 64];
        const __m512i perm = _mm512_loadu_si512((const void *)xr_pw_index);
        for (i64 q = q0; q < q1; q += 16) {
            const i64 n = (q1 - q) < 16 ? (q1 - q) : 16;
            const __mmask16 m = n == 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1u);
            for (i64 k = 0; k < full; ++k)
                _mm512_store_si512((void *)(xs + 64 * k), xr_pw_load(x + 4 * k * p + q, p, m, 4, perm));
            for (i64 b = b0; b < b1; ++b) {
                const i64 nch = (o - b * 16) < 16 ? (o - b * 16) : 16;
                xr_pw_dot(x + q, p, m, full, w + b * (kp / 4) * 64, acc, e, b * 16, nch,
                          (uint8_t *)c + b * 16 * p + q, sat, xs);
            }
        }
        return 1;
    }
    for (i64 t0 = q0; t0 < q1; t0 += XR_PW_CHUNK) {
        const i64 t1 = (q1 - t0) < XR_PW_CHUNK ? q1 : t0 + XR_PW_CHUNK;
        for (i64 b = b0; b < b1; ++b) {
            const int8_t *wb = w + b * (kp / 4) * 64;
            const i64 nch = (o - b * 16) < 16 ? (o - b * 16) : 16;
            for (i64 q = t0; q < t1; q += 16) {
                const i64 n = (t1 - q) < 16 ? (t1 - q) : 16;
                const __mmask16 m = n == 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1u);
                if (vec && rest == 0) {
                    xr_pw_dot(x + q, p, m, full, wb, acc, e, b * 16, nch, (uint8_t *)c + b * 16 * p + q, sat, NULL);
                    continue;
                }
                xr_pw_dot(x + q, p, m, full, wb, acc, e, 0, 0, NULL, 0, NULL);
                if (rest) xr_pw_tail(x + 4 * full * p + q, p, m, rest, wb + full * 64, acc);
#define XR_PW_OUT(j)                                                                                     \
    if ((j) < nch) {                                                                                     \
        const i64 co = b * 16 + (j);                                                                     \
        if (e == NULL) {                                                                                 \
            _mm512_mask_storeu_epi32((int32_t *)c + co * p + q, m, _mm512_loadu_si512((const void *)acc[j])); \
        } else if (vec) {                                                                                \
            const __m512i offv = _mm512_set1_epi32(e->offset ? e->offset[co] : 0);                       \
            const __m512 mv = _mm512_set1_ps(e->fmult[e->per_channel ? co : 0]);                         \
            _mm_mask_storeu_epi8((uint8_t *)c + co * p + q, m,                                         \
                                 xr_requant16(_mm512_loadu_si512((const void *)acc[j]), offv, mv, e));  \
        } else {                                                                                         \
            xr_epi_row(e, c, co * p + q, co, acc[j], n);                                                 \
        }                                                                                                \
    }
                XR_PW_OUT(0) XR_PW_OUT(1) XR_PW_OUT(2) XR_PW_OUT(3) XR_PW_OUT(4) XR_PW_OUT(5) XR_PW_OUT(6)
                XR_PW_OUT(7) XR_PW_OUT(8) XR_PW_OUT(9) XR_PW_OUT(10) XR_PW_OUT(11) XR_PW_OUT(12)
                XR_PW_OUT(13) XR_PW_OUT(14) XR_PW_OUT(15)
#undef XR_PW_OUT
            }
        }
    }
    return 1;
#else
    (void)x; (void)w; (void)c; (void)ch; (void)p; (void)kp; (void)o; (void)b0; (void)b1; (void)q0; (void)q1;
    (void)e;
    return 0;
#endif
}

/* The rows of a 1x1 unpadded convolution with strides (sh, sw): output pixel q = (y, xo) reads
 * input pixel (y * sh, xo * sw) of the (c, h, wd) planes, written as xr_planes_to_rows_u8 writes
 * its rows (ld bytes apart, the ld - c tail zeroed), pixels [p0, p1) of oh * ow. Only the pixels
 * the convolution reads are copied: the rows are the strided image's, not the whole image's.
 * Blocks of 16 pixels x 16 channels are gathered into 16 contiguous bytes per channel and
 * transposed like xr_planes_to_rows_u8's. */
void xr_strided_to_rows_u8(const uint8_t *x, uint8_t *rows, i64 c, i64 h, i64 wd, i64 sh, i64 sw, i64 ow,
                           i64 ld, i64 p0, i64 p1) {
    const i64 hw = h * wd;
    i64 q0 = p0;
#if defined(__SSE2__)
    for (; c >= 16 && q0 + 16 <= p1; q0 += 16) {
        i64 src[16];
        uint8_t block[16 * 16];
        for (int j = 0; j < 16; ++j) src[j] = ((q0 + j) / ow) * sh * wd + ((q0 + j) % ow) * sw;
        i64 ch = 0;
        /* stride 2 along W, the 16 pixels in one output row: each channel's 16 bytes are the
         * even bytes of 31 consecutive ones (two loads, 16-bit shifts/masks and one pack) */
        const int pairs = sw == 2 && src[15] == src[0] + 30;
        for (; ch + 16 <= c; ch += 16) {
            for (int z = 0; z < 16; ++z) {
                const uint8_t *plane = x + (ch + z) * hw;
                if (pairs) {
                    const __m128i lo = _mm_loadu_si128((const __m128i *)(plane + src[0]));
                    const __m128i hi = _mm_loadu_si128((const __m128i *)(plane + src[0] + 15)); /* not past src[15] */
                    _mm_storeu_si128((__m128i *)(block + z * 16),
                                     _mm_packus_epi16(_mm_and_si128(lo, _mm_set1_epi16(0xff)), _mm_srli_epi16(hi, 8)));
                    continue;
                }
                for (int j = 0; j < 16; ++j) block[z * 16 + j] = plane[src[j]];
            }
            xr_transpose16(block, 16, rows + q0 * ld + ch, ld);
        }
        for (; ch < c; ++ch)
            for (int j = 0; j < 16; ++j) rows[(q0 + j) * ld + ch] = x[ch * hw + src[j]];
        if (ld > c)
            for (i64 q = q0; q < q0 + 16; ++q) memset(rows + q * ld + c, 0, (size_t)(ld - c));
    }
#endif
    for (; q0 < p1; ++q0) {
        const i64 at = (q0 / ow) * sh * wd + (q0 % ow) * sw;
        for (i64 ch = 0; ch < c; ++ch) rows[q0 * ld + ch] = x[ch * hw + at];
        if (ld > c) memset(rows + q0 * ld + c, 0, (size_t)(ld - c));
    }
}

/* Depthwise convolution, one uint8 channel with its int8 kernel per output channel (groups = C,
 * one output channel per group), channels [c0, c1): int32 sums, taps outside the image read the
 * pad value pv. Row by row: for each tap the valid output columns are found once and the inner
 * loop runs over them without tests (contiguous for stride 1, so the compiler vectorises it).
 * With e NULL, o is the int32 result; else o is the 8-bit result, each row requantized by e from
 * a row of int32 on the stack (rows longer than XR_DW_ROW are done in pieces). */
#define XR_DW_ROW 512
/* The sum of one output column xo of row y of one channel (taps outside the image read pv). */
static inline int32_t xr_dw_point(const uint8_t *plane, const int8_t *k, i64 y, i64 xo, i64 h, i64 wd, i64 kh,
                                  i64 kw, i64 sh, i64 sw, i64 dh, i64 dw, i64 pt, i64 pl, i64 pv) {
    int32_t sum = 0;
    for (i64 i = 0; i < kh; ++i) {
        const i64 iy = y * sh + i * dh - pt;
        for (i64 j = 0; j < kw; ++j) {
            const i64 ix = xo * sw + j * dw - pl;
            const int32_t v = (iy < 0 || iy >= h || ix < 0 || ix >= wd) ? (int32_t)pv : (int32_t)plane[iy * wd + ix];
            sum += v * (int32_t)k[i * kw + j];
        }
    }
    return sum;
}

#if XR_VNNI
/* Output columns [x0, x1) of row y of one channel into acc (int32, indexed by column): up to
 * sixteen columns at a time in AVX-512 registers over all taps where every tap lies inside the
 * image row (stride 1 or 2; masked loads), the border columns one by one (xr_dw_point). The
 * same int32 sums. */
static void xr_dw_row16(const uint8_t *plane, const int8_t *k, int32_t *acc, i64 y, i64 h, i64 wd, i64 x0, i64 x1,
                        i64 kh, i64 kw, i64 sh, i64 sw, i64 dh, i64 dw, i64 pt, i64 pl, i64 pv) {
    /* the last column whose taps all lie inside the row */
    const i64 last = (wd - 1 - (kw - 1) * dw + pl) >= 0 ? (wd - 1 - (kw - 1) * dw + pl) / sw : -1;
    for (i64 xo = x0; xo < x1;) {
        const i64 ix0 = xo * sw - pl;
        i64 n = x1 - xo < 16 ? x1 - xo : 16;
        if (last - xo + 1 < n) n = last - xo + 1;
        if (ix0 < 0 || n <= 0 || (sw != 1 && sw != 2)) {
            acc[xo] = xr_dw_point(plane, k, y, xo, h, wd, kh, kw, sh, sw, dh, dw, pt, pl, pv);
            ++xo;
            continue;
        }
        /* masked loads read only the bytes of these n columns (2n - 1 at stride 2) */
        const __mmask16 m16 = (__mmask16)((1u << n) - 1u);
        const __mmask32 m32 = (__mmask32)((1u << (2 * n - 1)) - 1u);
        __m512i a = _mm512_setzero_si512();
        for (i64 i = 0; i < kh; ++i) {
            const i64 iy = y * sh + i * dh - pt;
            if (iy < 0 || iy >= h) { /* a padded row: pv times the row's taps */
                int32_t ks = 0;
                for (i64 j = 0; j < kw; ++j) ks += (int32_t)k[i * kw + j];
                a = _mm512_add_epi32(a, _mm512_set1_epi32((int32_t)pv * ks));
                continue;
            }
            const uint8_t *src = plane + iy * wd + ix0;
            for (i64 j = 0; j < kw; ++j) {
                __m512i v;
                if (sw == 1) {
                    v = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m16, src + j * dw));
                } else { /* the even bytes of 32: the low half of each int32 lane of the widening */
                    v = _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(m32, src + j * dw));
                    v = _mm512_and_si512(v, _mm512_set1_epi32(0xFFFF));
                }
                a = _mm512_add_epi32(a, _mm512_mullo_epi32(v, _mm512_set1_epi32((int32_t)k[i * kw + j])));
            }
        }
        _mm512_mask_storeu_epi32(acc + xo, m16, a);
        xo += n;
    }
}
#endif

#if XR_VBMI
#define XR_DW_KH 7

/* Whether xr_depthwise_vbmi takes this geometry: each lane's four taps within one 64-byte load
 * (15 * sw + 3 * dw < 64), at most XR_DW_KH x 8 taps, a left pad within one load. */
static int xr_dw_vbmi_fits(i64 kh, i64 kw, i64 sw, i64 dw, i64 pl) {
    return kh <= XR_DW_KH && kw <= 8 && 15 * sw + 3 * dw < 64 && pl < 64;
}

/* Depthwise as xr_depthwise_u8s8, with VNNI products: sixteen output columns take each kernel
 * row's taps four at a time from one 64-byte masked load of the image row (bytes outside the
 * image, left or right of it, or a whole padded row, read the pad value pv; a masked load
 * touches only the bytes inside): one byte permutation puts lane l's taps (bytes
 * l * sw + b * dw) in its four bytes and one vpdpbusd multiplies them by the four weights
 * (taps past kw weigh 0). The same int32 sums (exact: no saturation), requantized in
 * registers when e is the vector form. Nothing is copied. */
/* n sums of one output row of channel ch at o[at]: int32 (e NULL), requantized in registers
 * (vec) or through xr_epi_row. */
static inline void xr_dw_store(const xr_epi *e, int vec, void *o, i64 at, i64 ch, __m512i a, __m512i offv, __m512 mv,
                               __mmask16 m16, i64 n) {
    if (e == NULL) {
        _mm512_mask_storeu_epi32((int32_t *)o + at, m16, a);
    } else if (vec) {
        _mm_mask_storeu_epi8((uint8_t *)o + at, m16, xr_requant16(a, offv, mv, e));
    } else {
        int32_t acc32[16];
        _mm512_storeu_si512((void *)acc32, a);
        xr_epi_row(e, o, at, ch, acc32, n);
    }
}

static void xr_depthwise_vbmi(const uint8_t *x, const int8_t *w, void *o, i64 h, i64 wd, i64 oh, i64 ow, i64 kh,
                              i64 kw, i64 sh, i64 sw, i64 dh, i64 dw, i64 pt, i64 pl, i64 c0, i64 c1, i64 pv,
                              const xr_epi *e) {
    const __m512i pvv = _mm512_set1_epi8((char)pv);
    const i64 chunks = (kw + 3) / 4;
    uint8_t idx[64]; /* the same for every chunk: chunk jc's load starts 4 * jc * dw further */
    for (int l = 0; l < 16; ++l)
        for (int b = 0; b < 4; ++b) idx[l * 4 + b] = (uint8_t)(l * sw + b * dw);
    const __m512i perm = _mm512_loadu_si512((const void *)idx);
    const int vec = e != NULL && xr_epi_vector(e);
    for (i64 ch = c0; ch < c1; ++ch) {
        const uint8_t *plane = x + ch * h * wd;
        __m512i wv[XR_DW_KH][2];
        for (i64 i = 0; i < kh; ++i)
            for (i64 jc = 0; jc < chunks; ++jc) {
                int8_t k4[4] = {0, 0, 0, 0};
                for (int b = 0; b < 4; ++b)
                    if (jc * 4 + b < kw) k4[b] = w[(ch * kh + i) * kw + jc * 4 + b];
                int32_t word;
                memcpy(&word, k4, 4);
                wv[i][jc] = _mm512_set1_epi32(word);
            }
        __m512i offv = _mm512_setzero_si512();
        __m512 mv = _mm512_setzero_ps();
        if (vec) {
            offv = _mm512_set1_epi32(e->offset ? e->offset[ch] : 0);
            mv = _mm512_set1_ps(e->fmult[e->per_channel ? ch : 0]);
        }
        i64 y = 0;
        if (sh == 1 && dh == 1) /* two output rows at a time: their kh + 1 image rows loaded once */
            for (; y + 2 <= oh; y += 2) {
                const uint8_t *src[XR_DW_KH + 1];
                for (i64 i = 0; i <= kh; ++i) {
                    const i64 iy = y + i - pt;
                    src[i] = (iy < 0 || iy >= h) ? NULL : plane + iy * wd;
                }
                for (i64 x0 = 0; x0 < ow; x0 += 16) {
                    const i64 n = ow - x0 < 16 ? ow - x0 : 16;
                    const __mmask16 m16 = (__mmask16)((1u << n) - 1u);
                    __m512i a = _mm512_setzero_si512(), b = a;
                    for (i64 jc = 0; jc < chunks; ++jc) {
                        const i64 ix = x0 * sw + jc * 4 * dw - pl;
                        const i64 lo = ix < 0 ? -ix : 0, hi = wd - ix < 64 ? wd - ix : 64;
                        const __mmask64 inside = hi <= lo ? 0
                            : ((hi >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << hi) - 1)) & ~(((__mmask64)1 << lo) - 1));
                        for (i64 i = 0; i <= kh; ++i) { /* image row i: kernel row i of y, i - 1 of y + 1 */
                            const __m512i v = _mm512_permutexvar_epi8(perm, src[i] == NULL ? pvv
                                : _mm512_mask_loadu_epi8(pvv, inside, (const void *)((uintptr_t)src[i] + (uintptr_t)ix)));
                            if (i < kh) a = _mm512_dpbusd_epi32(a, v, wv[i][jc]);
                            if (i > 0) b = _mm512_dpbusd_epi32(b, v, wv[i - 1][jc]);
                        }
                    }
                    xr_dw_store(e, vec, o, (ch * oh + y) * ow + x0, ch, a, offv, mv, m16, n);
                    xr_dw_store(e, vec, o, (ch * oh + y + 1) * ow + x0, ch, b, offv, mv, m16, n);
                }
            }
        for (; y < oh; ++y) {
            const uint8_t *src[XR_DW_KH]; /* each kernel row's image row, NULL where it is padding */
            for (i64 i = 0; i < kh; ++i) {
                const i64 iy = y * sh + i * dh - pt;
                src[i] = (iy < 0 || iy >= h) ? NULL : plane + iy * wd;
            }
            for (i64 x0 = 0; x0 < ow; x0 += 16) {
                const i64 n = ow - x0 < 16 ? ow - x0 : 16;
                const __mmask16 m16 = (__mmask16)((1u << n) - 1u);
                __m512i a = _mm512_setzero_si512();
                for (i64 jc = 0; jc < chunks; ++jc) {
                    /* the 64 bytes from column ix of each row; those outside the image read pv
                     * (a masked load touches only the bytes inside) */
                    const i64 ix = x0 * sw + jc * 4 * dw - pl;
                    const i64 lo = ix < 0 ? -ix : 0, hi = wd - ix < 64 ? wd - ix : 64;
                    const __mmask64 inside = hi <= lo ? 0
                        : ((hi >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << hi) - 1)) & ~(((__mmask64)1 << lo) - 1));
                    for (i64 i = 0; i < kh; ++i) {
                        const __m512i v = src[i] == NULL ? pvv
                            : _mm512_mask_loadu_epi8(pvv, inside, (const void *)((uintptr_t)src[i] + (uintptr_t)ix));
                        a = _mm512_dpbusd_epi32(a, _mm512_permutexvar_epi8(perm, v), wv[i][jc]);
                    }
                }
                xr_dw_store(e, vec, o, (ch * oh + y) * ow + x0, ch, a, offv, mv, m16, n);
            }
        }
    }
}
#endif

#if XR_VBMI
/* Depthwise convolution of small images: a channel's whole plane (h * wd <= 256 bytes) held in
 * up to four registers, its output taken as one run of pixels, sixteen at a time in the lanes
 * of a register whatever rows they lie on (a 7x7 output fills 49 of 64 lanes, not 7 of 16 per
 * row). The kernel's taps in their row-major order are cut into `chunks` groups of four (the
 * last padded with zero weights): for group g of sixteen pixels and chunk t, idx[g][t] (64
 * bytes) names the plane byte each lane's four taps read and pad[g][t] the bytes outside the
 * image (they read the pad value pv): byte permutations across the plane's registers and a
 * blend with pv gather them, one vpdpbusd multiplies them by the chunk's four weights (wk[ch][t],
 * packed as an int32). The tables depend on the geometry only, made once (fast_int8.
 * plane_tables). The same int32 sums as xr_depthwise_u8s8, stored as it stores them (int32, or
 * requantized by e), channels [c0, c1). */
void xr_depthwise_plane_u8s8(const uint8_t *x, const int32_t *wk, void *o, i64 hw, i64 ohw, i64 chunks,
                             const uint8_t *idx, const uint64_t *pad, i64 c0, i64 c1, i64 pv, const xr_epi *e) {
    const __m512i pvv = _mm512_set1_epi8((char)pv);
    const int vec = e != NULL && xr_epi_vector(e);
    const i64 groups = (ohw + 15) / 16;
    for (i64 ch = c0; ch < c1; ++ch) {
        const uint8_t *plane = x + ch * hw;
        __m512i part[4];
        for (int r = 0; r < 4; ++r) {
            const i64 n = hw - 64 * r; /* the plane's bytes in this register: masked, never read past it */
            const __mmask64 m = n >= 64 ? ~(__mmask64)0 : n <= 0 ? 0 : (((__mmask64)1 << n) - 1);
            part[r] = _mm512_maskz_loadu_epi8(m, (const void *)(plane + (n > 0 ? 64 * r : 0)));
        }
        __m512i offv = _mm512_setzero_si512();
        __m512 mv = _mm512_setzero_ps();
        if (vec) {
            offv = _mm512_set1_epi32(e->offset ? e->offset[ch] : 0);
            mv = _mm512_set1_ps(e->fmult[e->per_channel ? ch : 0]);
        }
        const int32_t *wc = wk + ch * chunks;
        for (i64 g = 0; g < groups; ++g) {
            __m512i a = _mm512_setzero_si512();
            for (i64 t = 0; t < chunks; ++t) {
                const i64 at = g * chunks + t;
                const __m512i ix = _mm512_loadu_si512((const void *)(idx + 64 * at));
                __m512i v = _mm512_permutex2var_epi8(part[0], ix, part[1]);
                if (hw > 128) /* bytes 128-255: index bit 7 */
                    v = _mm512_mask_blend_epi8(_mm512_movepi8_mask(ix), v, _mm512_permutex2var_epi8(part[2], ix, part[3]));
                v = _mm512_mask_blend_epi8((__mmask64)pad[at], v, pvv);
                a = _mm512_dpbusd_epi32(a, v, _mm512_set1_epi32(wc[t]));
            }
            const i64 n = ohw - 16 * g < 16 ? ohw - 16 * g : 16;
            xr_dw_store(e, vec, o, ch * ohw + 16 * g, ch, a, offv, mv, (__mmask16)((1u << n) - 1u), n);
        }
    }
}
#endif

/* Whether xr_depthwise_plane_u8s8 is built (AVX-512 VBMI). */
int xr_depthwise_plane_available(void) { return XR_VBMI; }

void xr_depthwise_u8s8(const uint8_t *x, const int8_t *w, void *o, i64 h, i64 wd, i64 oh, i64 ow,
                       i64 kh, i64 kw, i64 sh, i64 sw, i64 dh, i64 dw, i64 pt, i64 pl, i64 c0, i64 c1,
                       i64 pv, const xr_epi *e) {
#if XR_VBMI
    if (xr_dw_vbmi_fits(kh, kw, sw, dw, pl)) {
        xr_depthwise_vbmi(x, w, o, h, wd, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl, c0, c1, pv, e);
        return;
    }
#endif
    int32_t row[XR_DW_ROW];
    for (i64 ch = c0; ch < c1; ++ch) {
        const uint8_t *plane = x + ch * h * wd;
        const int8_t *k = w + ch * kh * kw;
        for (i64 y = 0; y < oh; ++y) {
            for (i64 x0 = 0; x0 < ow; x0 += (e ? XR_DW_ROW : ow)) {
                const i64 x1 = e ? (x0 + XR_DW_ROW < ow ? x0 + XR_DW_ROW : ow) : ow;
                int32_t *acc = e ? row - x0 : (int32_t *)o + (ch * oh + y) * ow;
#if XR_VNNI
                xr_dw_row16(plane, k, acc, y, h, wd, x0, x1, kh, kw, sh, sw, dh, dw, pt, pl, pv);
#else
                for (i64 xo = x0; xo < x1; ++xo) acc[xo] = 0;
                for (i64 i = 0; i < kh; ++i) {
                    const i64 iy = y * sh + i * dh - pt;
                    const int inside = iy >= 0 && iy < h;
                    const uint8_t *src = plane + (inside ? iy : 0) * wd;
                    for (i64 j = 0; j < kw; ++j) {
                        const int32_t kij = k[i * kw + j];
                        const int32_t padded = (int32_t)pv * kij;
                        if (!inside) {
                            if (pv)
                                for (i64 xo = x0; xo < x1; ++xo) acc[xo] += padded;
                            continue;
                        }
                        const i64 off = j * dw - pl; /* ix = xo * sw + off */
                        i64 lo = off < 0 ? (-off + sw - 1) / sw : 0;
                        i64 hi = (wd - 1 - off) >= 0 ? (wd - 1 - off) / sw + 1 : 0;
                        if (hi > ow) hi = ow;
                        if (lo < x0) lo = x0;
                        if (lo > x1) lo = x1;
                        if (hi > x1) hi = x1;
                        if (hi < lo) hi = lo;
                        if (pv) {
                            for (i64 xo = x0; xo < lo; ++xo) acc[xo] += padded;
                            for (i64 xo = hi; xo < x1; ++xo) acc[xo] += padded;
                        }
                        if (sw == 1) {
                            const uint8_t *s1 = src + off;
                            for (i64 xo = lo; xo < hi; ++xo) acc[xo] += (int32_t)s1[xo] * kij;
                        } else {
                            for (i64 xo = lo; xo < hi; ++xo) acc[xo] += (int32_t)src[xo * sw + off] * kij;
                        }
                    }
                }
#endif
                if (e) xr_epi_row(e, o, (ch * oh + y) * ow + x0, ch, acc + x0, x1 - x0);
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
 * element, f = (float)acc * mult[channel] + fzp in float32 (fzp: QLinearMul's zero point, added
 * before rounding; 0 otherwise, which changes nothing), clamped to [flo, fhi] (NaN stays NaN),
 * rounded half to even as the relay ops write it, (f + 1.5 * 2^23) - 1.5 * 2^23 (compiled with
 * -ffp-contract=off: no FMA), converted to int32 (xr_f32_to_i32), plus zp (wrapping), stored as
 * int8 (kind 0) or uint8 (kind 1), wrapping like the reference cast. Channel ch = (i / inner) % c. */
void xr_requant_float(const int32_t *acc, void *out, i64 kind, i64 n, i64 c, i64 inner, const float *mult,
                      i64 per_channel, float fzp, float flo, float fhi, i64 zp) {
    const float magic = 12582912.0f;
    for (i64 b = 0; b < n; ++b) {
        for (i64 ch = 0; ch < c; ++ch) {
            const float m = mult[per_channel ? ch : 0];
            const i64 base = (b * c + ch) * inner;
            for (i64 k = 0; k < inner; ++k) {
                float f = (float)acc[base + k] * m + fzp;
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

/* s rounded half to even in float32 ((s + 1.5 * 2^23) - 1.5 * 2^23), to int32, clipped to
 * [lo, hi], stored as out[i] (int8: kind 0, uint8: kind 1) */
static inline void xr_store_rounded(float s, i64 lo, i64 hi, void *out, i64 okind, i64 i) {
    const float magic = 12582912.0f;
    s = s + magic;
    s = s - magic;
    int32_t r = xr_f32_to_i32(s);
    if (r < lo) r = (int32_t)lo;
    if (r > hi) r = (int32_t)hi;
    if (okind == 0) ((int8_t *)out)[i] = (int8_t)r;
    else ((uint8_t *)out)[i] = (uint8_t)r;
}

#if XR_VNNI
/* 16 8-bit values (int8 for kind 0, else uint8; m the lanes present) widened to int32 */
static inline __m512i xr_widen8(const void *p, i64 kind, __mmask16 m) {
    const __m128i b = _mm_maskz_loadu_epi8(m, p);
    return kind == 0 ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
}

/* 8 lanes of xr_qlinear_add's arithmetic in double, rounded to float as its scalar loop rounds */
static inline __m256 xr_qadd8(__m256i xi, __m256i yi, __m512d ra, __m512d rb, __m512d fixed) {
    const __m256 t = _mm512_cvtpd_ps(_mm512_add_pd(_mm512_mul_pd(_mm512_cvtepi32_pd(yi), rb), fixed));
    return _mm512_cvtpd_ps(_mm512_add_pd(_mm512_mul_pd(_mm512_cvtepi32_pd(xi), ra), _mm512_cvtps_pd(t)));
}
#endif

void xr_qlinear_add(const void *x, i64 xkind, const void *y, i64 ykind, void *out, i64 okind, i64 count,
                    double ra, double rb, double fixed, i64 lo, i64 hi) {
    i64 start = 0;
#if XR_VNNI
    /* 16 at a time: the same double products and sums (no fused multiply-add), rounded to
     * float, the same rounding additions; truncation to int32 is the scalar loop's where every
     * sum is well inside int32 (8-bit values times these multipliers), else the loop runs */
    if (255.0 * (ra < 0 ? -ra : ra) + 255.0 * (rb < 0 ? -rb : rb) + (fixed < 0 ? -fixed : fixed) < 1073741824.0) {
        const __m512d rav = _mm512_set1_pd(ra), rbv = _mm512_set1_pd(rb), fv = _mm512_set1_pd(fixed);
        const __m512 mg = _mm512_set1_ps(12582912.0f);
        const __m512i lov = _mm512_set1_epi32((int32_t)lo), hiv = _mm512_set1_epi32((int32_t)hi);
        for (; start < count; start += 16) {
            const i64 n = count - start < 16 ? count - start : 16;
            const __mmask16 m = (__mmask16)(n == 16 ? 0xFFFFu : (1u << n) - 1u);
            const __m512i xi = xr_widen8((const uint8_t *)x + start, xkind, m);
            const __m512i yi = xr_widen8((const uint8_t *)y + start, ykind, m);
            const __m256 s0 = xr_qadd8(_mm512_castsi512_si256(xi), _mm512_castsi512_si256(yi), rav, rbv, fv);
            const __m256 s1 = xr_qadd8(_mm512_extracti64x4_epi64(xi, 1), _mm512_extracti64x4_epi64(yi, 1), rav, rbv, fv);
            __m512 sv = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(s0)),
                                                            _mm256_castps_pd(s1), 1));
            sv = _mm512_sub_ps(_mm512_add_ps(sv, mg), mg);
            const __m512i r = _mm512_min_epi32(_mm512_max_epi32(_mm512_cvttps_epi32(sv), lov), hiv);
            _mm_mask_storeu_epi8((uint8_t *)out + start, m, _mm512_cvtepi32_epi8(r));
        }
    }
#endif
    for (i64 i = start; i < count; ++i) {
        const float t = (float)(xr_load8(y, ykind, i) * rb + fixed);
        float s = (float)(xr_load8(x, xkind, i) * ra + (double)t);
        xr_store_rounded(s, lo, hi, out, okind, i);
    }
}

/* xr_qlinear_add as onnxruntime's kernel computes it, in float32 with two fused multiply-adds:
 * s = fma(x, ra, fma(y, rb, fixed)), rounded half to even to int32 (an embedded rounding mode,
 * not MXCSR's), clipped to [lo, hi]. Every element, the last partial vector too, runs the same
 * masked AVX-512 code, so xr_qlinear_add_fma_exact, which runs it on all 256 x 256 pairs of
 * bytes, decides for every input whether it gives xr_qlinear_add's bits (the float64 form the
 * relay ops write: equal wherever no float64 sum is rounded twice). With AVX2 and FMA3 instead, 8
 * at a time, the same arithmetic. Returns 0 (nothing done) without either. */
int xr_qlinear_add_fma(const void *x, i64 xkind, const void *y, i64 ykind, void *out, i64 count, float ra, float rb,
                       float fixed, i64 lo, i64 hi) {
#if XR_VNNI
    const __m512 rav = _mm512_set1_ps(ra), rbv = _mm512_set1_ps(rb), fv = _mm512_set1_ps(fixed);
    const __m512i lov = _mm512_set1_epi32((int32_t)lo), hiv = _mm512_set1_epi32((int32_t)hi);
    for (i64 start = 0; start < count; start += 16) {
        const i64 n = count - start < 16 ? count - start : 16;
        const __mmask16 m = (__mmask16)(n == 16 ? 0xFFFFu : (1u << n) - 1u);
        const __m512 xf = _mm512_cvtepi32_ps(xr_widen8((const uint8_t *)x + start, xkind, m));
        const __m512 yf = _mm512_cvtepi32_ps(xr_widen8((const uint8_t *)y + start, ykind, m));
        const __m512 s = _mm512_fmadd_ps(xf, rav, _mm512_fmadd_ps(yf, rbv, fv));
        const __m512i r = _mm512_cvt_roundps_epi32(s, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm_mask_storeu_epi8((uint8_t *)out + start, m, _mm512_cvtepi32_epi8(_mm512_min_epi32(_mm512_max_epi32(r, lov), hiv)));
    }
    return 1;
#elif defined(__AVX2__) && defined(__FMA__)
    /* AVX2 with FMA3: the same two fused multiply-adds and rounding, 8 at a time; the last
     * partial vector is copied into zeroed 8-byte buffers so it runs the same vector code */
    const __m256 rav = _mm256_set1_ps(ra), rbv = _mm256_set1_ps(rb), fv = _mm256_set1_ps(fixed);
    const __m256i lov = _mm256_set1_epi32((int32_t)lo), hiv = _mm256_set1_epi32((int32_t)hi);
    for (i64 start = 0; start < count; start += 8) {
        const i64 n = count - start < 8 ? count - start : 8;
        uint8_t xb[8] = {0}, yb[8] = {0}, ob[16];
        memcpy(xb, (const uint8_t *)x + start, (size_t)n);
        memcpy(yb, (const uint8_t *)y + start, (size_t)n);
        const __m128i xv = _mm_loadl_epi64((const __m128i *)xb), yv = _mm_loadl_epi64((const __m128i *)yb);
        const __m256 xf = _mm256_cvtepi32_ps(xkind == 0 ? _mm256_cvtepi8_epi32(xv) : _mm256_cvtepu8_epi32(xv));
        const __m256 yf = _mm256_cvtepi32_ps(ykind == 0 ? _mm256_cvtepi8_epi32(yv) : _mm256_cvtepu8_epi32(yv));
        const __m256 s = _mm256_fmadd_ps(xf, rav, _mm256_fmadd_ps(yf, rbv, fv));
        /* rounded half to even whatever MXCSR says, then an exact conversion */
        const __m256i r = _mm256_cvttps_epi32(_mm256_round_ps(s, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        const __m256i c = _mm256_min_epi32(_mm256_max_epi32(r, lov), hiv);
        /* the low byte of each int32 lane (two's complement: int8 or uint8 alike) */
        const __m256i bytes = _mm256_shuffle_epi8(c, _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                                                      -1, -1, -1, 0, 4, 8, 12, -1, -1, -1, -1, -1, -1,
                                                                      -1, -1, -1, -1, -1, -1));
        _mm_storeu_si128((__m128i *)ob, _mm_unpacklo_epi32(_mm256_castsi256_si128(bytes),
                                                           _mm256_extracti128_si256(bytes, 1)));
        memcpy((uint8_t *)out + start, ob, (size_t)n);
    }
    return 1;
#else
    (void)x; (void)xkind; (void)y; (void)ykind; (void)out; (void)count; (void)ra; (void)rb; (void)fixed; (void)lo;
    (void)hi;
    return 0;
#endif
}

/* Whether xr_qlinear_add_fma with (ra, rb, fixed) as float32 gives xr_qlinear_add's bits with
 * (ra_d, rb_d, fixed_d) for every pair of 8-bit inputs of these kinds (out: int8 for okind 0,
 * else uint8): both run on the 65536 pairs, compared byte for byte. */
int xr_qlinear_add_fma_exact(i64 xkind, i64 ykind, i64 okind, double ra_d, double rb_d, double fixed_d, i64 lo,
                             i64 hi) {
    uint8_t xs[256], ys[256], fast[256], ref[256];
    for (int v = 0; v < 256; ++v) ys[v] = (uint8_t)v;
    for (int u = 0; u < 256; ++u) {
        memset(xs, u, sizeof xs);
        if (!xr_qlinear_add_fma(xs, xkind, ys, ykind, fast, 256, (float)ra_d, (float)rb_d, (float)fixed_d, lo, hi))
            return 0;
        for (int v = 0; v < 256; ++v) {
            const float t = (float)(xr_load8(ys, ykind, v) * rb_d + fixed_d);
            xr_store_rounded((float)(xr_load8(xs, xkind, v) * ra_d + (double)t), lo, hi, ref, okind, v);
        }
        if (memcmp(fast, ref, sizeof fast) != 0) return 0;
    }
    return 1;
}

/* xr_qlinear_add with a constant side: QLinearAdd of an 8-bit x and a constant (a bias vector
 * broadcast over the rows), whose inner multiply-add t = float32(b * rb + fixed) is the same for
 * every row, so it is given as `period` float32 values repeating along x (element i reads
 * t[(first + i) % period]); the rest as xr_qlinear_add. */
void xr_qlinear_add_const(const void *x, i64 xkind, const float *t, i64 period, i64 first, void *out, i64 okind,
                          i64 count, double ra, i64 lo, i64 hi) {
    const float flo = (float)lo, fhi = (float)hi;
    i64 i = 0, j = first % period;
    while (i < count) {
        const i64 len = period - j < count - i ? period - j : count - i;
        const float *tj = t + j;
        if (xkind == 1 && okind == 1) {
            /* uint8 in and out (the quantized zoo's activations) */
            xr_add_const_u8((const uint8_t *)x + i, tj, ra, flo, fhi, (uint8_t *)out + i, len);
        } else {
            for (i64 k = 0; k < len; ++k)
                xr_store_rounded((float)(xr_load8(x, xkind, i + k) * ra + (double)tj[k]), lo, hi, out, okind, i + k);
        }
        i += len;
        j = 0;
    }
}

/* A convolution without its full im2row matrix: output pixels [q0, q1) (of p = oh * ow) in
 * tiles of XR_TILE, each tile's rows made by im2row into tile (XR_TILE x kp bytes, this range's
 * own) from the channels-last image (or, planar, from the image's channel planes, a byte per
 * channel: for a few channels), then multiplied by the channel blocks [b0, b1) of 16 (all of
 * them when the threads share the pixels; a range each when they share the channels). c as
 * xr_gemm_tile's. */
#define XR_TILE 16
void xr_conv_tiles_u8s8(const uint8_t *hwc, const int8_t *w, void *c, uint8_t *tile, i64 ch, i64 h, i64 wd,
                        i64 kh, i64 kw, i64 sh, i64 sw, i64 dh, i64 dw, i64 pt, i64 pl, i64 ow, i64 kp, i64 o,
                        i64 pv, i64 p, i64 q0, i64 q1, i64 b0, i64 b1, const xr_epi *e, i64 planar,
                        uint8_t *band, i64 cap) {
    const i64 k = ch * kh * kw;
    /* with band: hwc holds the NCHW planes, and the input rows [row0, row1) a tile reads are
     * copied channels-last into band (cap rows) just before it, when they are not there yet */
    const uint8_t *x = hwc;
    i64 row0 = 0, row1 = band != NULL ? 0 : h;
    if (band != NULL) hwc = band;
#if XR_VBMI
    /* planar, up to 4 channels and a kernel row within 16 bytes of a plane row: rows by byte
     * permutation (perm[j * ch + z] = z * 16 + j * dw), for the taps wholly inside the image */
    const int interleave = planar && ch <= 4 && (kw - 1) * dw < 16;
    uint8_t idx[64] = {0};
    if (interleave)
        for (i64 j = 0; j < kw; ++j)
            for (i64 z = 0; z < ch; ++z) idx[j * ch + z] = (uint8_t)(z * 16 + j * dw);
    const __m512i perm = _mm512_loadu_si512((const void *)idx);
    const __mmask16 span = interleave ? (__mmask16)((1u << ((kw - 1) * dw + 1)) - 1u) : 0;
    const __mmask64 rowmask = kw * ch >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (kw * ch)) - 1);
#endif
    for (i64 t0 = q0; t0 < q1; t0 += XR_TILE) {
        const i64 n = (q1 - t0) < XR_TILE ? (q1 - t0) : XR_TILE;
        if (band != NULL) { /* the input rows of the tile's output rows, inside the image */
            i64 lo = (t0 / ow) * sh - pt, hi = ((t0 + n - 1) / ow) * sh - pt + (kh - 1) * dh + 1;
            lo = lo < 0 ? 0 : lo;
            hi = hi > h ? h : hi;
            if (hi > lo && (lo < row0 || hi > row1)) {
                row0 = lo;
                row1 = lo + cap < h ? lo + cap : h;
                xr_planes_to_rows_u8(x + row0 * wd, band, ch, h * wd, ch, 0, (row1 - row0) * wd);
            }
        }
        for (i64 q = 0; q < n; ++q) {
            const i64 y = (t0 + q) / ow, xo = (t0 + q) % ow;
            const i64 ix0 = xo * sw - pl;
            /* the taps [jlo, jhi) of a kernel row that lie inside the image row */
            const i64 jlo = ix0 >= 0 ? 0 : (-ix0 + dw - 1) / dw;
            i64 jhi = wd - 1 - ix0 >= 0 ? (wd - 1 - ix0) / dw + 1 : 0;
            if (jhi > kw) jhi = kw;
            if (jhi < jlo) jhi = jlo;
            uint8_t *r = tile + q * kp;
            for (i64 i = 0; i < kh; ++i, r += kw * ch) {
                const i64 iy = y * sh + i * dh - pt;
                if (iy < 0 || iy >= h) {
                    memset(r, (int)pv, (size_t)(kw * ch));
                    continue;
                }
                if (jlo > 0) memset(r, (int)pv, (size_t)(jlo * ch));
                if (jhi < kw) memset(r + jhi * ch, (int)pv, (size_t)((kw - jhi) * ch));
#if XR_VBMI
                if (planar && interleave && jlo == 0 && jhi == kw) {
                    /* the kernel row's bytes of each plane in one 128-bit lane each, interleaved
                     * to (j, channel) order by one byte permutation */
                    const uint8_t *src = hwc + iy * wd + ix0;
                    __m512i v = _mm512_castsi128_si512(_mm_maskz_loadu_epi8(span, src));
                    if (ch > 1) v = _mm512_inserti32x4(v, _mm_maskz_loadu_epi8(span, src + h * wd), 1);
                    if (ch > 2) v = _mm512_inserti32x4(v, _mm_maskz_loadu_epi8(span, src + 2 * h * wd), 2);
                    if (ch > 3) v = _mm512_inserti32x4(v, _mm_maskz_loadu_epi8(span, src + 3 * h * wd), 3);
                    _mm512_mask_storeu_epi8(r, rowmask, _mm512_permutexvar_epi8(perm, v));
                    continue;
                }
#endif
                if (planar) { /* a run of taps of each channel's row, ch bytes apart in r */
                    for (i64 z = 0; z < ch; ++z) {
                        const uint8_t *src = hwc + (z * h + iy) * wd + ix0;
                        for (i64 j = jlo; j < jhi; ++j) r[j * ch + z] = src[j * dw];
                    }
                } else if (dw == 1) { /* the taps of a kernel row are one run of the channels-last row */
                    memcpy(r + jlo * ch, hwc + ((iy - row0) * wd + ix0 + jlo) * ch, (size_t)((jhi - jlo) * ch));
                } else {
                    for (i64 j = jlo; j < jhi; ++j)
                        memcpy(r + j * ch, hwc + ((iy - row0) * wd + ix0 + j * dw) * ch, (size_t)ch);
                }
            }
            if (kp > k) memset(r, 0, (size_t)(kp - k));
        }
        xr_gemm_tile(tile, w, c, n, t0, p, kp, o, b0, b1, e, 0);
    }
}

/* A convolution read straight from a channels-last padded copy of its input (no im2row rows):
 * with the image's padding written into the copy, every output pixel's taps of one kernel row
 * are kw * ch consecutive bytes of one padded row (dilation 1 along W), in the (i, j, channel)
 * order of the packed weights' K, so the product reads them where they lie. x holds the ch
 * NCHW planes (h x wd); band holds cap padded rows of wp = (ow - 1) * sw + kw pixels of ch bytes
 * (padded row r is input row r - pt, padded column u input column u - pl; taps outside the image
 * read pv), those of a chunk of output pixels (the output rows the band holds, below) copied
 * just before it when they are not there yet (xr_planes_to_padded_u8). Output pixels [q0, q1)
 * of oh * ow, channel blocks [b0, b1) of 16; c as xr_gemm_tile's channel-major result. Needs
 * cap at least the kernel's padded rows. A kernel row of kw * ch bytes not a multiple of 4 is
 * read as seg4 = ceil(kw * ch / 4) steps: the packed weights of each kernel row are zero past
 * its kw * ch bytes (fast_int8._direct_weights), so the bytes read past it (the next taps, or
 * up to 3 bytes past the band's last row: the band has that slack) add nothing. */
static void xr_planes_to_padded_u8(const uint8_t *x, uint8_t *band, i64 ch, i64 h, i64 wd, i64 pt, i64 pl, i64 wp,
                                   i64 pv, i64 r0, i64 r1) {
    const i64 used = (wp - pl) < wd ? (wp - pl) : wd; /* input columns a padded row holds */
    for (i64 r = r0; r < r1; ++r) {                   /* the padding first */
        uint8_t *row = band + (r - r0) * wp * ch;
        const i64 iy = r - pt;
        if (iy < 0 || iy >= h || used <= 0) {
            memset(row, (int)pv, (size_t)(wp * ch));
            continue;
        }
        if (pl > 0) memset(row, (int)pv, (size_t)(pl * ch));
        if (pl + used < wp) memset(row + (pl + used) * ch, (int)pv, (size_t)((wp - pl - used) * ch));
    }
    i64 y0 = r0 - pt < 0 ? 0 : r0 - pt, y1 = r1 - pt > h ? h : r1 - pt;
    if (used <= 0 || y1 <= y0) return;
    const i64 hw = h * wd, qe = y1 * wd;
#define XR_PAD_AT(q) (band + (((q) / wd + pt - r0) * wp + pl + (q) % wd) * ch)
    i64 q = y0 * wd;
#if defined(__SSE2__)
    /* 16 consecutive pixels of the planes (one image row or across rows) by 16 channels at a
     * time, transposed in registers: in place when they are one run of the padded row */
    uint8_t block[16 * 16];
    for (; ch >= 16 && q + 16 <= qe; q += 16) {
        const int run = (q + 15) / wd == q / wd && (q + 15) % wd < used;
        i64 z = 0;
        for (; z + 16 <= ch; z += 16) {
            if (run) {
                xr_transpose16(x + z * hw + q, hw, XR_PAD_AT(q) + z, ch);
                continue;
            }
            xr_transpose16(x + z * hw + q, hw, block, 16);
            for (i64 j = 0; j < 16; ++j)
                if ((q + j) % wd < used) memcpy(XR_PAD_AT(q + j) + z, block + j * 16, 16);
        }
        for (; z < ch; ++z)
            for (i64 j = 0; j < 16; ++j)
                if ((q + j) % wd < used) XR_PAD_AT(q + j)[z] = x[z * hw + q + j];
    }
#endif
#if XR_VBMI
    /* up to 4 channels (a stem's 3): 16 consecutive pixels of one padded row's run, the planes'
     * 16-byte loads interleaved to (pixel, channel) order by one byte permutation
     * (idx[j * ch + z] = z * 16 + j) and stored as 16 * ch bytes */
    if (ch <= 4) {
        uint8_t idx[64] = {0};
        for (i64 j = 0; j < 16; ++j)
            for (i64 z = 0; z < ch; ++z) idx[j * ch + z] = (uint8_t)(z * 16 + j);
        const __m512i perm = _mm512_loadu_si512((const void *)idx);
        const __mmask64 bytes = ch == 4 ? ~(__mmask64)0 : (((__mmask64)1 << (16 * ch)) - 1);
        for (; q + 16 <= qe; q += 16) {
            if (!((q + 15) / wd == q / wd && (q + 15) % wd < used)) {
                for (i64 j = 0; j < 16; ++j) {
                    if ((q + j) % wd >= used) continue;
                    uint8_t *d = XR_PAD_AT(q + j);
                    for (i64 z = 0; z < ch; ++z) d[z] = x[z * hw + q + j];
                }
                continue;
            }
            __m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(x + q)));
            if (ch > 1) v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(x + hw + q)), 1);
            if (ch > 2) v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(x + 2 * hw + q)), 2);
            if (ch > 3) v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(x + 3 * hw + q)), 3);
            _mm512_mask_storeu_epi8(XR_PAD_AT(q), bytes, _mm512_permutexvar_epi8(perm, v));
        }
    }
#endif
    for (; q < qe; ++q) {
        if (q % wd >= used) continue;
        uint8_t *d = XR_PAD_AT(q);
        for (i64 z = 0; z < ch; ++z) d[z] = x[z * hw + q];
    }
#undef XR_PAD_AT
}


/* Pixels at most a chunk of a direct convolution has (the band offsets of their first taps on
 * the stack): each channel block's weights are read once per chunk (ResNet's 7x7 x 512-channel
 * 3x3 has 2.4 MB of them, more than the L2 cache). */
#define XR_DIRECT_CHUNK 512
void xr_conv_direct_u8s8(const uint8_t *x, const int8_t *w, void *c, uint8_t *band, i64 ch, i64 h, i64 wd, i64 kh,
                         i64 kw, i64 sh, i64 sw, i64 dh, i64 pt, i64 pl, i64 oh, i64 ow, i64 kp, i64 o, i64 pv,
                         i64 q0, i64 q1, i64 b0, i64 b1, const xr_epi *e, i64 cap) {
    const i64 p = oh * ow, wp = (ow - 1) * sw + kw, k4 = kp / 4, seg4 = (kw * ch + 3) / 4, rs = dh * wp * ch;
    const i64 hp = (oh - 1) * sh + (kh - 1) * dh + 1, span = (kh - 1) * dh + 1;
    if (q1 <= q0 || cap < span) return;
    const i64 last = ((q1 - 1) / ow) * sh + span; /* the padded rows this range reads end there */
    const i64 fit = (cap - span) / sh + 1;         /* output rows whose taps the band holds */
    i64 row0 = 0, row1 = 0, off[XR_DIRECT_CHUNK];
    int32_t tile[8][16];
#if XR_VNNI
    int32_t tile1[8][16];
#endif
    for (i64 t0 = q0; t0 < q1;) {
        /* a chunk: the pixels from t0 to the end of the last output row the band holds */
        i64 end = (t0 / ow + fit) * ow;
        end = end < q1 ? end : q1;
        end = end - t0 < XR_DIRECT_CHUNK ? end : t0 + XR_DIRECT_CHUNK;
        const i64 n = end - t0, lo = (t0 / ow) * sh, hi = ((end - 1) / ow) * sh + span;
        if (lo < row0 || hi > row1) {
            row0 = lo;
            row1 = lo + cap < last ? lo + cap : last;
            if (row1 > hp) row1 = hp;
            xr_planes_to_padded_u8(x, band, ch, h, wd, pt, pl, wp, pv, row0, row1);
        }
        for (i64 q = t0; q < end; ++q) off[q - t0] = (((q / ow) * sh - row0) * wp + (q % ow) * sw) * ch;
        const uint8_t *px[8];
        i64 b = b0;
#if XR_VNNI
        const i64 whole = n / 8 * 8; /* the pixels of whole groups of 8 */
        for (; b + 1 < b1; b += 2)
            for (i64 g = 0; g < whole; g += 8) {
                for (i64 j = 0; j < 8; ++j) px[j] = band + off[g + j];
                xr_direct8x2(px, rs, kh, seg4, w + b * k4 * 64, w + (b + 1) * k4 * 64, tile, tile1);
                xr_store_block(tile, 8, b, o, c, t0 + g, 0, p, e, 0);
                xr_store_block(tile1, 8, b + 1, o, c, t0 + g, 0, p, e, 0);
            }
        for (; b < b1; ++b)
            for (i64 g = 0; g < whole; g += 8) {
                for (i64 j = 0; j < 8; ++j) px[j] = band + off[g + j];
                xr_direct8x1(px, 8, rs, kh, seg4, w + b * k4 * 64, tile);
                xr_store_block(tile, 8, b, o, c, t0 + g, 0, p, e, 0);
            }
        if (whole < n) { /* the last group of fewer than 8 pixels, every block */
            for (i64 j = 0; j < 8; ++j) px[j] = band + off[whole + (j < n - whole ? j : 0)];
            xr_few_group(px, n - whole, rs, kh, seg4, w, k4, b0, b1, o, c, t0 + whole, 0, p, e, 0);
        }
        b = b1;
#endif
        for (; b < b1; ++b)
            for (i64 g = 0; g < n; g += 8) {
                const i64 np_ = (n - g) < 8 ? (n - g) : 8;
                for (i64 j = 0; j < 8; ++j) px[j] = band + off[g + (j < np_ ? j : np_ - 1)];
                xr_direct8x1(px, np_, rs, kh, seg4, w + b * k4 * 64, tile);
                xr_store_block(tile, np_, b, o, c, t0 + g, 0, p, e, 0);
            }
        t0 = end;
    }
}

/* A unary function of an 8-bit value as a table (xr_lookup8): out[i] = table[src[i]] for count
 * elements, src read as bytes (an int8 value indexes by its two's-complement byte), table and out
 * of `size`-byte elements (1, 2, 4 or 8). In place (out == src) for size 1. */
void xr_lookup8(const uint8_t *src, const void *table, void *out, i64 size, i64 count) {
    if (size == 1) {
        const uint8_t *t = (const uint8_t *)table;
        uint8_t *o = (uint8_t *)out;
        i64 i = 0;
#if XR_VBMI
        /* 64 bytes at a time: the table's halves in two pairs of registers, each byte looked up
         * in both by its low 7 bits (one two-register byte permutation each), the half chosen
         * by its top bit; the last bytes under a mask */
        const __m512i t0 = _mm512_loadu_si512((const void *)t), t1 = _mm512_loadu_si512((const void *)(t + 64));
        const __m512i t2 = _mm512_loadu_si512((const void *)(t + 128)), t3 = _mm512_loadu_si512((const void *)(t + 192));
        for (; i < count; i += 64) {
            const __mmask64 m = count - i >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (count - i)) - 1);
            const __m512i v = _mm512_maskz_loadu_epi8(m, (const void *)(src + i));
            const __m512i lo = _mm512_permutex2var_epi8(t0, v, t1), hi = _mm512_permutex2var_epi8(t2, v, t3);
            _mm512_mask_storeu_epi8((void *)(o + i), m, _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi));
        }
#endif
        for (; i < count; i++) o[i] = t[src[i]];
    } else if (size == 2) {
        const uint16_t *t = (const uint16_t *)table;
        uint16_t *restrict o = (uint16_t *)out;
        for (i64 i = 0; i < count; i++) o[i] = t[src[i]];
    } else if (size == 4) {
        const uint32_t *t = (const uint32_t *)table;
        uint32_t *restrict o = (uint32_t *)out;
        for (i64 i = 0; i < count; i++) o[i] = t[src[i]];
    } else {
        const uint64_t *t = (const uint64_t *)table;
        uint64_t *restrict o = (uint64_t *)out;
        for (i64 i = 0; i < count; i++) o[i] = t[src[i]];
    }
}

/* onnxruntime's QuantizeLinear as fake-quantization-to-integer{onnxruntime=true} writes it
 * (xr_quantize_float): v = x / scale in float32, clipped to [lo, hi], rounded half to even by
 * adding and subtracting 1.5 * 2^23 in float32, converted to int32, the zero point added, and
 * the low byte stored as int8 (kind 0) or uint8 (kind 1). x is `planes` planes of h x w; out
 * has them padded by top/bottom/left/right with `padv` (all 0 for no pad). A NaN gives the
 * int32 that numpy's cast gives on x86-64 (INT32_MIN). */
void xr_quantize_float(const float *x, uint8_t *out, i64 planes, i64 h, i64 w, float scale, float lo, float hi,
                       i64 zp, i64 top, i64 bottom, i64 left, i64 right, i64 padv) {
    const float round = 12582912.0f;
    i64 ow = w + left + right, oh = h + top + bottom;
    for (i64 p = 0; p < planes; p++) {
        const float *xp = x + p * h * w;
        uint8_t *op = out + p * oh * ow;
        if (top) memset(op, (int)padv, (size_t)(top * ow));
        if (bottom) memset(op + (top + h) * ow, (int)padv, (size_t)(bottom * ow));
        for (i64 i = 0; i < h; i++) {
            uint8_t *row = op + (top + i) * ow;
            if (left) memset(row, (int)padv, (size_t)left);
            if (right) memset(row + left + w, (int)padv, (size_t)right);
            for (i64 j = 0; j < w; j++) {
                float v = xp[i * w + j] / scale;
                v = v < lo ? lo : v;
                v = v > hi ? hi : v;
                v = (v + round) - round; /* two float32 roundings (no fast-math, no contraction) */
                int32_t q = v != v ? INT32_MIN : (int32_t)v;
                row[left + j] = (uint8_t)(uint32_t)(q + (int32_t)zp);
            }
        }
    }
}

/* nn.max_pool2d of 8-bit NCHW planes (T uint8_t or int8_t), channels [c0, c1): each output the
 * largest value over its window's taps inside the image. The reference pads with the dtype's
 * lowest value, which never wins (a window wholly in padding gives it). Separable, as max is:
 * for each output row the maximum of its kh input rows (contiguous, vectorised) goes into a
 * row buffer padded with the lowest value on both sides, then each output takes the maximum
 * of its kw taps of that buffer, tap by tap over the whole row (no tests in the inner loops).
 * Rows wider than the buffer run tap by tap on the image. */
#define XR_POOL_ROW 4096
#if XR_VBMI
/* A padded row within one 64-byte register (pl + wd <= 64, the columns read too): the window
 * rows' maximum of masked loads (the lowest value outside the image), then for each tap
 * j one byte permutation (lane xo takes byte xo * sw + j * dw) and a maximum; one masked
 * store of the output row. GoogLeNet's 28, 14 and 7 wide pools were loop overhead. */
#define XR_POOL_REG(T, LOWEST, MAX)                                                                      \
    if (span <= 64 && pl + wd <= 64 && kw <= 8) {                                                        \
        __m512i perm[8];                                                                                 \
        for (i64 j = 0; j < kw; ++j) {                                                                   \
            uint8_t idx[64] = {0};                                                                       \
            for (i64 l = 0; l < ow; ++l) idx[l] = (uint8_t)(l * sw + j * dw);                            \
            perm[j] = _mm512_loadu_si512((const void *)idx);                                             \
        }                                                                                                \
        const __m512i low = _mm512_set1_epi8((char)(LOWEST));                                            \
        const __mmask64 inside = (wd >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << wd) - 1)) << pl;           \
        const __mmask64 outmask = ow >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << ow) - 1);                 \
        for (i64 ch = c0; ch < c1; ++ch) {                                                               \
            const T *plane = x + ch * h * wd;                                                            \
            for (i64 y = 0; y < oh; ++y) {                                                               \
                __m512i v = low;                                                                         \
                for (i64 i = 0; i < kh; ++i) {                                                           \
                    const i64 iy = y * sh + i * dh - pt;                                                 \
                    if (iy < 0 || iy >= h) continue;                                                     \
                    v = MAX(v, _mm512_mask_loadu_epi8(low, inside,                                       \
                                                      (const void *)((uintptr_t)(plane + iy * wd) - (uintptr_t)pl))); \
                }                                                                                        \
                __m512i r = _mm512_permutexvar_epi8(perm[0], v);                                         \
                for (i64 j = 1; j < kw; ++j) r = MAX(r, _mm512_permutexvar_epi8(perm[j], v));            \
                _mm512_mask_storeu_epi8((void *)(o + (ch * oh + y) * ow), outmask, r);                   \
            }                                                                                            \
        }                                                                                                \
        return;                                                                                          \
    }
/* Bits [a, b) of a 64-bit mask (a, b clamped to 0..64). */
static inline __mmask64 xr_bits(i64 a, i64 b) {
    a = a < 0 ? 0 : a > 64 ? 64 : a;
    b = b < 0 ? 0 : b > 64 ? 64 : b;
    if (b <= a) return 0;
    const __mmask64 upto = b >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << b) - 1);
    return upto & ~(((__mmask64)1 << a) - 1);
}

/* Wider rows (ResNet's 112-wide 3x3/2 pool) by windows of 128 bytes in two registers: for each
 * output row and run of g outputs (as many as one window holds, at most 64), the window rows'
 * maximum of masked loads (the lowest value outside the image), then per tap j one two-register
 * byte permutation (lane l takes byte l * sw + j * dw) and a maximum; one masked store. The
 * separable row-buffer loop below ran its strided taps a byte at a time. */
#define XR_POOL_WIN(T, LOWEST, MAX)                                                                      \
    if ((kw - 1) * dw < 128 && kw <= 16) {                                                               \
        i64 g = (127 - (kw - 1) * dw) / sw + 1;                                                          \
        if (g > 64) g = 64;                                                                              \
        __m512i perm[16];                                                                                \
        for (i64 j = 0; j < kw; ++j) {                                                                   \
            uint8_t idx[64] = {0};                                                                       \
            for (i64 l = 0; l < g; ++l) idx[l] = (uint8_t)(l * sw + j * dw);                             \
            perm[j] = _mm512_loadu_si512((const void *)idx);                                             \
        }                                                                                                \
        const __m512i low = _mm512_set1_epi8((char)(LOWEST));                                            \
        for (i64 ch = c0; ch < c1; ++ch) {                                                               \
            const T *plane = x + ch * h * wd;                                                            \
            for (i64 y = 0; y < oh; ++y) {                                                               \
                for (i64 x0 = 0; x0 < ow; x0 += g) {                                                     \
                    const i64 n = ow - x0 < g ? ow - x0 : g, ix0 = x0 * sw - pl;                         \
                    const __mmask64 m0 = xr_bits(-ix0, wd - ix0), m1 = xr_bits(-ix0 - 64, wd - ix0 - 64); \
                    __m512i v0 = low, v1 = low;                                                          \
                    for (i64 i = 0; i < kh; ++i) {                                                       \
                        const i64 iy = y * sh + i * dh - pt;                                             \
                        if (iy < 0 || iy >= h) continue;                                                 \
                        const uintptr_t at = (uintptr_t)(plane + iy * wd) + (uintptr_t)ix0;              \
                        v0 = MAX(v0, _mm512_mask_loadu_epi8(low, m0, (const void *)at));                 \
                        v1 = MAX(v1, _mm512_mask_loadu_epi8(low, m1, (const void *)(at + 64)));          \
                    }                                                                                    \
                    __m512i r = _mm512_permutex2var_epi8(v0, perm[0], v1);                               \
                    for (i64 j = 1; j < kw; ++j) r = MAX(r, _mm512_permutex2var_epi8(v0, perm[j], v1));  \
                    _mm512_mask_storeu_epi8((void *)(o + (ch * oh + y) * ow + x0), xr_bits(0, n), r);    \
                }                                                                                        \
            }                                                                                            \
        }                                                                                                \
        return;                                                                                          \
    }
#else
#define XR_POOL_REG(T, LOWEST, MAX)
#define XR_POOL_WIN(T, LOWEST, MAX)
#endif
#define XR_MAX_POOL(NAME, T, LOWEST, MAX)                                                                \
    void NAME(const T *x, T *o, i64 h, i64 wd, i64 oh, i64 ow, i64 kh, i64 kw, i64 sh, i64 sw, i64 dh,   \
              i64 dw, i64 pt, i64 pl, i64 c0, i64 c1) {                                                  \
        T vm[XR_POOL_ROW];                                                                               \
        const i64 span = (ow - 1) * sw + (kw - 1) * dw + 1; /* buffer columns read, from -pl */          \
        const int buffered = span <= XR_POOL_ROW && pl + wd <= XR_POOL_ROW;                              \
        XR_POOL_REG(T, LOWEST, MAX)                                                                      \
        XR_POOL_WIN(T, LOWEST, MAX)                                                                      \
        for (i64 ch = c0; ch < c1; ++ch) {                                                               \
            const T *plane = x + ch * h * wd;                                                            \
            for (i64 y = 0; y < oh; ++y) {                                                               \
                T *row = o + (ch * oh + y) * ow;                                                         \
                if (buffered) {                                                                          \
                    const i64 width = span > pl + wd ? span : pl + wd;                                   \
                    for (i64 q = 0; q < width; ++q) vm[q] = (T)(LOWEST);                                 \
                    for (i64 i = 0; i < kh; ++i) {                                                       \
                        const i64 iy = y * sh + i * dh - pt;                                             \
                        if (iy < 0 || iy >= h) continue;                                                 \
                        const T *src = plane + iy * wd;                                                  \
                        T *d = vm + pl;                                                                  \
                        for (i64 q = 0; q < wd; ++q) d[q] = src[q] > d[q] ? src[q] : d[q];               \
                    }                                                                                    \
                    for (i64 xo = 0; xo < ow; ++xo) row[xo] = vm[xo * sw];                               \
                    for (i64 j = 1; j < kw; ++j) {                                                       \
                        const T *t = vm + j * dw;                                                        \
                        if (sw == 1)                                                                     \
                            for (i64 xo = 0; xo < ow; ++xo) row[xo] = t[xo] > row[xo] ? t[xo] : row[xo]; \
                        else if (sw == 2)                                                                \
                            for (i64 xo = 0; xo < ow; ++xo)                                              \
                                row[xo] = t[2 * xo] > row[xo] ? t[2 * xo] : row[xo];                     \
                        else                                                                             \
                            for (i64 xo = 0; xo < ow; ++xo)                                              \
                                row[xo] = t[xo * sw] > row[xo] ? t[xo * sw] : row[xo];                   \
                    }                                                                                    \
                    continue;                                                                            \
                }                                                                                        \
                for (i64 xo = 0; xo < ow; ++xo) row[xo] = (T)(LOWEST);                                   \
                for (i64 i = 0; i < kh; ++i) {                                                           \
                    const i64 iy = y * sh + i * dh - pt;                                                 \
                    if (iy < 0 || iy >= h) continue;                                                     \
                    const T *src = plane + iy * wd;                                                      \
                    for (i64 j = 0; j < kw; ++j) {                                                       \
                        const i64 off = j * dw - pl; /* ix = xo * sw + off */                            \
                        i64 lo = off < 0 ? (-off + sw - 1) / sw : 0;                                     \
                        i64 hi = (wd - 1 - off) >= 0 ? (wd - 1 - off) / sw + 1 : 0;                      \
                        if (hi > ow) hi = ow;                                                            \
                        for (i64 xo = lo; xo < hi; ++xo) {                                               \
                            const T v = src[xo * sw + off];                                              \
                            row[xo] = v > row[xo] ? v : row[xo];                                         \
                        }                                                                                \
                    }                                                                                    \
                }                                                                                        \
            }                                                                                            \
        }                                                                                                \
    }
XR_MAX_POOL(xr_max_pool_u8, uint8_t, 0, _mm512_max_epu8)
XR_MAX_POOL(xr_max_pool_s8, int8_t, -128, _mm512_max_epi8)
#undef XR_MAX_POOL
#undef XR_POOL_REG

/* Relay's cumsum of float32 along one axis, viewed as [outer][n][inner]: each running sum
 * out[o][k][i] = out[o][k-1][i] + x[o][k][i], added first to last (compiled without FMA or
 * reassociation, so the bits are the sequential sums; the loop over i vectorises across
 * independent sums). fake-quantization-to-integer{onnxruntime=true} writes onnxruntime's float
 * reductions with it. exclusive: the sums before each element, starting from +0. */
void xr_cumsum_f32(const float *x, float *out, i64 outer, i64 n, i64 inner, i64 exclusive) {
    i64 first = 0;
    if (inner == 1 && !exclusive && n > 0) {
        /* rows of one running sum each: eight rows side by side, so eight independent chains of
         * additions hide the adder's latency (each chain still adds in order) */
        for (; first + 8 <= outer; first += 8) {
            const float *src = x + first * n;
            float *dst = out + first * n;
            float acc[8];
            for (int r = 0; r < 8; ++r) acc[r] = dst[r * n] = src[r * n];
            for (i64 k = 1; k < n; ++k)
                for (int r = 0; r < 8; ++r) acc[r] = dst[r * n + k] = acc[r] + src[r * n + k];
        }
    }
    for (i64 o = first; o < outer; ++o) {
        const float *src = x + o * n * inner;
        float *dst = out + o * n * inner;
        if (n == 0) continue;
        if (exclusive) {
            for (i64 i = 0; i < inner; ++i) dst[i] = 0.0f;
            for (i64 k = 1; k < n; ++k)
                for (i64 i = 0; i < inner; ++i) dst[k * inner + i] = dst[(k - 1) * inner + i] + src[(k - 1) * inner + i];
        } else {
            for (i64 i = 0; i < inner; ++i) dst[i] = src[i];
            for (i64 k = 1; k < n; ++k)
                for (i64 i = 0; i < inner; ++i) dst[k * inner + i] = dst[(k - 1) * inner + i] + src[k * inner + i];
        }
    }
}

/* qnn.dequantize_sum: the sums of table[q] (table: the 256 float32 values
 * float32(byte - zero point) * scale) over the middle axis of q viewed [outer][n][inner], the
 * reference kernel's bits. sequential: first to last; eigen (inner == 1): Eigen's 4-float packet
 * order for rows stored from an aligned address (row r's head is -(r * n) mod 4 values).
 * Rows [r0, r1) of outer only, so the rows can be cut between threads. */
static float xr_eigen_row(const uint8_t *q, const float *table, i64 n, i64 h) {
    i64 packed = (n - h) / 4 * 4, paired = (n - h) / 8 * 8;
    if (packed == 0) {
        float acc = table[q[0]];
        for (i64 i = 1; i < n; ++i) acc += table[q[i]];
        return acc;
    }
    float p0[4], p1[4];
    for (int l = 0; l < 4; ++l) p0[l] = table[q[h + l]];
    if (packed > 4) {
        for (int l = 0; l < 4; ++l) p1[l] = table[q[h + 4 + l]];
        for (i64 i = h + 8; i < h + paired; i += 8)
            for (int l = 0; l < 4; ++l) {
                p0[l] += table[q[i + l]];
                p1[l] += table[q[i + 4 + l]];
            }
        for (int l = 0; l < 4; ++l) p0[l] += p1[l];
        if (packed > paired)
            for (int l = 0; l < 4; ++l) p0[l] += table[q[h + paired + l]];
    }
    float acc = (p0[0] + p0[2]) + (p0[1] + p0[3]);
    for (i64 i = 0; i < h; ++i) acc += table[q[i]];
    for (i64 i = h + packed; i < n; ++i) acc += table[q[i]];
    return acc;
}

void xr_dequantize_sum(const uint8_t *q, const float *table, float *out, i64 n, i64 inner, i64 eigen,
                       i64 r0, i64 r1) {
    i64 o = r0;
    if (n == 0) {
        for (; o < r1; ++o)
            for (i64 j = 0; j < inner; ++j) out[o * inner + j] = 0.0f;
        return;
    }
    if (eigen) {
        for (; o < r1; ++o) {
            i64 h = (4 - (o * n) % 4) % 4;
            out[o] = xr_eigen_row(q + o * n, table, n, h < n ? h : n);
        }
        return;
    }
    if (inner == 1) {
        /* eight rows side by side: eight independent chains, each still first to last */
        for (; o + 8 <= r1; o += 8) {
            const uint8_t *src = q + o * n;
            float acc[8];
            for (int r = 0; r < 8; ++r) acc[r] = table[src[r * n]];
            for (i64 k = 1; k < n; ++k)
                for (int r = 0; r < 8; ++r) acc[r] += table[src[r * n + k]];
            for (int r = 0; r < 8; ++r) out[o + r] = acc[r];
        }
    }
    for (; o < r1; ++o) {
        const uint8_t *src = q + o * n * inner;
        float *dst = out + o * inner;
        for (i64 j = 0; j < inner; ++j) dst[j] = table[src[j]];
        for (i64 k = 1; k < n; ++k)
            for (i64 j = 0; j < inner; ++j) dst[j] += table[src[k * inner + j]];
    }
}

/* onnxruntime's QLinearMul as fake-quantization-to-integer{onnxruntime=true} writes it (ort_mul):
 * the int32 product of two functions of 8-bit values, each read as bytes through its 256-entry
 * int32 table (ta, tb: the chains (q - zp) computed by the reference kernels), then
 * xr_requant_float's arithmetic. The result is rows x inner; an operand's mode says which of
 * its bytes an element reads: 0 the element's own, 1 its row's (one value per row), 2 the only
 * one. Rows [r0, r1). */
static inline int32_t xr_mul_requant(int32_t pa, int32_t pb, float m, float fzp, float flo, float fhi, i64 zp) {
    const float magic = 12582912.0f;
    const int32_t acc = (int32_t)((uint32_t)pa * (uint32_t)pb);
    float f = (float)acc * m + fzp;
    f = f < flo ? flo : f;
    f = f > fhi ? fhi : f;
    f = f + magic;
    f = f - magic;
    return (int32_t)((uint32_t)xr_f32_to_i32(f) + (uint32_t)(int32_t)zp);
}

void xr_qlinear_mul(const uint8_t *a, const int32_t *ta, i64 amode, const uint8_t *b, const int32_t *tb,
                    i64 bmode, void *out, i64 kind, i64 inner, float m, float fzp, float flo, float fhi,
                    i64 zp, i64 r0, i64 r1) {
    if (amode != 0 && bmode == 0) { /* the full operand first */
        const uint8_t *t8 = a; const int32_t *tt = ta; i64 tm = amode;
        a = b; ta = tb; amode = 0; b = t8; tb = tt; bmode = tm;
    }
    for (i64 r = r0; r < r1; ++r) {
        uint8_t *o = (uint8_t *)out + r * inner;
        const uint8_t *ar = a + (amode == 0 ? r * inner : 0);
        if (amode == 0 && bmode != 0) {
            /* one value of b for the whole row: the result is a function of a's byte */
            const int32_t pb = tb[b[bmode == 1 ? r : 0]];
            if (inner >= 256) {
                uint8_t tab[256];
                for (int v = 0; v < 256; ++v) tab[v] = (uint8_t)xr_mul_requant(ta[v], pb, m, fzp, flo, fhi, zp);
                xr_lookup8(ar, tab, o, 1, inner);
            } else {
                for (i64 k = 0; k < inner; ++k) o[k] = (uint8_t)xr_mul_requant(ta[ar[k]], pb, m, fzp, flo, fhi, zp);
            }
            continue;
        }
        const int32_t ra = ta[a[amode == 1 ? r : 0]], rb = tb[b[bmode == 1 ? r : 0]];
        const uint8_t *br = b + (bmode == 0 ? r * inner : 0);
        for (i64 k = 0; k < inner; ++k) {
            const int32_t pa = amode == 0 ? ta[ar[k]] : ra, pb = bmode == 0 ? tb[br[k]] : rb;
            o[k] = (uint8_t)xr_mul_requant(pa, pb, m, fzp, flo, fhi, zp);
        }
    }
    (void)kind; /* int8 and uint8 results have the same bytes */
}

/* qnn.ort_layer_norm: rows [lo, hi) of `n` float32 values normalised as onnxruntime's x86-64
 * kernel does (the op's docstring): the mean in double, the centred squares in eight lanes of
 * fused multiply-adds folded as halves, the tail after the fold, a float32 division and square
 * root, y = fma(c * inv, gamma, beta). */
static void xr_ort_layer_norm_row(const float *src, const float *gamma, const float *beta, float *dst, i64 n,
                                  float eps, float mean);

void xr_ort_layer_norm(const float *x, const float *gamma, const float *beta, float *y, i64 n, float eps,
                       i64 lo, i64 hi) {
    i64 r = lo;
    /* four rows' means at a time: four chains of double additions in flight, each row's still
     * added first to last */
    for (; r + 4 <= hi; r += 4) {
        const float *s0 = x + r * n, *s1 = s0 + n, *s2 = s1 + n, *s3 = s2 + n;
        double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
        for (i64 i = 0; i < n; ++i) {
            a0 += (double)s0[i];
            a1 += (double)s1[i];
            a2 += (double)s2[i];
            a3 += (double)s3[i];
        }
        const double sums[4] = {a0, a1, a2, a3};
        for (int j = 0; j < 4; ++j)
            xr_ort_layer_norm_row(x + (r + j) * n, gamma, beta, y + (r + j) * n, n, eps, (float)(sums[j] / (double)n));
    }
    for (; r < hi; ++r) {
        const float *src = x + r * n;
        double s = 0.0;
        for (i64 i = 0; i < n; ++i) s += (double)src[i];
        xr_ort_layer_norm_row(src, gamma, beta, y + r * n, n, eps, (float)(s / (double)n));
    }
}

/* One row of xr_ort_layer_norm after its mean. */
static void xr_ort_layer_norm_row(const float *src, const float *gamma, const float *beta, float *dst, i64 n,
                                  float eps, float mean) {
    {
        float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        const i64 whole = n - n % 8;
        for (i64 i = 0; i < whole; i += 8)
            for (int l = 0; l < 8; ++l) {
                const float c = src[i + l] - mean;
                lane[l] = fmaf(c, c, lane[l]);
            }
        float h[4], q[2];
        for (int l = 0; l < 4; ++l) h[l] = lane[l] + lane[l + 4];
        q[0] = h[0] + h[2];
        q[1] = h[1] + h[3];
        float total = q[0] + q[1];
        for (i64 i = whole; i < n; ++i) {
            const float c = src[i] - mean;
            total = fmaf(c, c, total);
        }
        const float inv = 1.0f / sqrtf(total / (float)n + eps);
        for (i64 i = 0; i < n; ++i) dst[i] = fmaf((src[i] - mean) * inv, gamma[i], beta[i]);
    }
}

static inline float xr_ort_erf(float t) {
    static const float small_p[6] = {-5.99104969e-4f, 4.99339588e-3f, -2.67667342e-2f, 1.12818025e-1f,
                                     -3.76124859e-1f, 1.28379151e-1f};
    static const float big_p[7] = {1.72948930e-5f, -3.83208680e-4f, 3.88393435e-3f, -2.42545605e-2f,
                                   1.06777847e-1f, 6.34846687e-1f, 1.28717512e-1f};
    static const float exp_p[7] = {1.38319808e-3f, 8.37550033e-3f, 4.16689515e-2f, 1.66664466e-1f,
                                   4.99999851e-1f, 1.0f, 1.0f};
    float a = fabsf(t);
    a = a < 3.925f ? a : 3.925f;
    const float sq = a * a;
    float sm = small_p[0];
    for (int k = 1; k < 6; ++k) sm = fmaf(sm, sq, small_p[k]);
    sm = fmaf(sm, a, a);
    const int split = a > 0.921875f;
    const float bi = split ? a : 0.0f;
    float bg = big_p[0];
    for (int k = 1; k < 7; ++k) bg = fmaf(bg, bi, big_p[k]);
    bg = -fmaf(bg, bi, bi);
    bg = bg > -88.3762626647949f ? bg : -88.3762626647949f;
    const float shift = 1.25829120e7f;
    const float r = fmaf(1.44269504088896341f, bg, shift) - shift;
    float fx = fmaf(r, -6.93145752e-1f, bg);
    fx = fmaf(r, -1.42860677e-6f, fx);
    float p = exp_p[0];
    for (int k = 1; k < 7; ++k) p = fmaf(p, fx, exp_p[k]);
    /* 2^r exactly: r is an integer in [-23, 0] here (|t| <= 3.925) */
    union { uint32_t u; float f; } two;
    two.u = (uint32_t)((int32_t)r + 127) << 23;
    const float e = 1.0f - p * two.f;
    const float res = split ? e : sm;
    return signbit(t) ? -res : res;
}

/* qnn.ort_gelu on values [lo, hi) (lo a multiple of 4096): onnxruntime's GELU, each chunk of
 * 4096's last partial block of 16 through the C library's erff as onnxruntime's is. */
void xr_ort_gelu(const float *x, float *y, i64 size, i64 lo, i64 hi) {
    for (i64 start = lo; start < hi; start += 4096) {
        const i64 count = size - start < 4096 ? size - start : 4096;
        const i64 blocks = start + count - count % 16;
        for (i64 i = start; i < blocks; ++i) {
            const float v = x[i];
            y[i] = (0.5f * v) * (xr_ort_erf(v * 0.70710678118654752440f) + 1.0f);
        }
        for (i64 i = blocks; i < start + count; ++i) {
            const float v = x[i];
            y[i] = (0.5f * v) * (erff(v * 0.70710678118654752440f) + 1.0f);
        }
    }
}

/* qnn.ort_softmax along the last axis: rows [lo, hi) of d bytes (uint8), onnxruntime's
 * QLinearSoftmax (the op's docstring): each row's maximum, the table (256 float32 values)
 * read at q - max + 255, the float32 sum first to last, y = min(255, nearbyint(t * ys / sum)
 * + zp). Four rows at a time: four sums in flight, each still added in its row's order. */
static inline uint8_t xr_softmax_byte(float t, float ys, float sum, int32_t zp) {
    const float v = (t * ys) / sum;
    /* v >= 0; from 256 up (or an infinite t * ys) every result clamps to 255 */
    const int32_t q = v < 256.0f ? (int32_t)nearbyintf(v) + zp : 255;
    return (uint8_t)(q > 255 ? 255 : q);
}

void xr_ort_softmax(const uint8_t *x, uint8_t *y, const float *table, i64 d, float ys, i64 zp, i64 lo, i64 hi) {
    const int32_t z = (int32_t)zp;
    i64 r = lo;
    for (; r + 4 <= hi; r += 4) {
        const uint8_t *s[4];
        const float *tb[4];
        float sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (int j = 0; j < 4; ++j) {
            s[j] = x + (r + j) * d;
            uint8_t m = 0;
            for (i64 i = 0; i < d; ++i) m = s[j][i] > m ? s[j][i] : m;
            tb[j] = table + 255 - m;
        }
        for (i64 i = 0; i < d; ++i) {
            sum[0] += tb[0][s[0][i]];
            sum[1] += tb[1][s[1][i]];
            sum[2] += tb[2][s[2][i]];
            sum[3] += tb[3][s[3][i]];
        }
        for (int j = 0; j < 4; ++j) {
            uint8_t *o = y + (r + j) * d;
            for (i64 i = 0; i < d; ++i) o[i] = xr_softmax_byte(tb[j][s[j][i]], ys, sum[j], z);
        }
    }
    for (; r < hi; ++r) {
        const uint8_t *s = x + r * d;
        uint8_t m = 0;
        for (i64 i = 0; i < d; ++i) m = s[i] > m ? s[i] : m;
        const float *tb = table + 255 - m;
        float sum = 0.0f;
        for (i64 i = 0; i < d; ++i) sum += tb[s[i]];
        uint8_t *o = y + r * d;
        for (i64 i = 0; i < d; ++i) o[i] = xr_softmax_byte(tb[s[i]], ys, sum, z);
    }
}

/* The integer terms a quantized batch product adds to each sum (xr_bmm_u8x8): its zero-point
 * terms, r[b][i][j] = acc + rcoef * rows[b * rstride + i] + ccoef * cols[b * cstride + j] + c0
 * in wrapping int32 (numpy's), rows / cols NULL when absent: (a - za)(b - zb) summed over k is
 * a.b - zb * rowsum(a) - za * colsum(b) + k * za * zb. */
typedef struct {
    const int32_t *rows, *cols;
    i64 rstride, cstride, rcoef, ccoef, c0;
} xr_bmm_terms;

/* nn.batch_matmul of a uint8 A (m x k rows, k a multiple of 4) and an 8-bit B: batches [b0, b1)
 * of c[b] (m x n) = a[b] . b[b]^T (trans_b: b[b] is n x k) or a[b] . b[b] (b[b] is k x n). B is
 * packed per batch into the VNNI product's layout (pack: n rounded up to 16, times k bytes) -- a
 * uint8 B shifted by 128 into int8 (b ^ 0x80), the shift given back exactly in int32 as 128
 * times each A row's sum -- and multiplied by xr_gemm_tile. With t, its terms are added to each
 * sum in the same pass as the shift (no int32 pass of its own); with e (a per-tensor requantize,
 * no offset) the sums go to acc (m x n int32, this range's own) and each row is requantized
 * into c's bytes (xr_epi_row), else c holds the int32 sums. */
void xr_bmm_u8x8(const uint8_t *a, const uint8_t *b, i64 b_unsigned, void *c, i64 m, i64 k, i64 n, i64 trans_b,
                 i64 b0, i64 b1, int8_t *pack, const xr_bmm_terms *t, const xr_epi *e, int32_t *acc) {
    const i64 k4 = k / 4, blocks = (n + 15) / 16;
    const uint8_t flip = b_unsigned ? 0x80 : 0x00;
    for (i64 bt = b0; bt < b1; ++bt) {
        const uint8_t *ab = a + bt * m * k, *bb = b + bt * n * k;
        int32_t *cb = e != NULL ? acc : (int32_t *)c + bt * m * n;
        for (i64 blk = 0; blk < blocks; ++blk)
            for (i64 kk = 0; kk < k4; ++kk)
                for (i64 j = 0; j < 16; ++j) {
                    const i64 col = blk * 16 + j;
                    int8_t *dst = pack + ((blk * k4 + kk) * 16 + j) * 4;
                    for (i64 q = 0; q < 4; ++q) {
                        const i64 kq = kk * 4 + q;
                        dst[q] = col < n ? (int8_t)(uint8_t)((trans_b ? bb[col * k + kq] : bb[kq * n + col]) ^ flip) : 0;
                    }
                }
        xr_gemm_tile(ab, pack, cb, m, 0, m, k, n, 0, blocks, NULL, 1);
        if (b_unsigned || t != NULL) {
            const int32_t *rows = t && t->rows ? t->rows + bt * t->rstride : NULL;
            const int32_t *cols = t && t->cols ? t->cols + bt * t->cstride : NULL;
            const uint32_t rc = t ? (uint32_t)t->rcoef : 0u, cc = t ? (uint32_t)t->ccoef : 0u;
            const uint32_t c0 = t ? (uint32_t)t->c0 : 0u;
            for (i64 i = 0; i < m; ++i) {
                uint32_t shift = c0;
                if (b_unsigned) {
                    uint32_t s = 0;
                    for (i64 q = 0; q < k; ++q) s += ab[i * k + q];
                    shift += 128u * s;
                }
                if (rows) shift += rc * (uint32_t)rows[i];
                int32_t *ci = cb + i * n;
                if (cols)
                    for (i64 j = 0; j < n; ++j) ci[j] = (int32_t)((uint32_t)ci[j] + shift + cc * (uint32_t)cols[j]);
                else
                    for (i64 j = 0; j < n; ++j) ci[j] = (int32_t)((uint32_t)ci[j] + shift);
            }
        }
        if (e != NULL)
            for (i64 i = 0; i < m; ++i) xr_epi_row(e, c, (bt * m + i) * n, 0, cb + i * n, n);
    }
}

/* sum(cast(q, int32)) over the last axis of n 8-bit values (int8 with is_signed), rows [lo, hi)
 * into int32 (exact for n below 2^23): the zero-point terms' row sums of a quantized product,
 * read from the bytes. */
void xr_rowsum_8bit(const void *x, i64 is_signed, int32_t *out, i64 n, i64 lo, i64 hi) {
    for (i64 r = lo; r < hi; ++r) {
        int32_t s = 0;
        if (is_signed) {
            const int8_t *p = (const int8_t *)x + r * n;
            for (i64 i = 0; i < n; ++i) s += p[i];
        } else {
            const uint8_t *p = (const uint8_t *)x + r * n;
            for (i64 i = 0; i < n; ++i) s += p[i];
        }
        out[r] = s;
    }
}

/* A native job (WorkerPool.run_native -> xrelay_native_run in native_kernels.c): one of the
 * kernels above called once per part, with the arguments in args except those a part or a
 * thread's slot sets -- n_part values from part_vals[part] at the argument indexes part_at
 * (its pixel or channel range), n_slot from slot_vals[slot] at slot_at (its tile and band
 * buffers: each thread its own). Every argument is an int64 or an address. */
#define XR_JOB_ARGS 28
typedef struct {
    i64 kind; /* 0 conv tiles, 1 1x1 planes, 2 gemm, 3 planes to rows, 4 strided to rows, 5 depthwise,
                 6 depthwise planes, 7 QLinearAdd (FMA form), 8 direct conv */
    i64 args[XR_JOB_ARGS];
    i64 n_part, part_at[4];
    const i64 *part_vals;
    i64 n_slot, slot_at[2];
    const i64 *slot_vals;
} xr_job;

/* xr_qlinear_add_fma on elements [i0, i1), its float32 constants given as their bits (a native
 * job's arguments are int64). */
static void xr_qlinear_add_fma_range(const uint8_t *x, i64 xkind, const uint8_t *y, i64 ykind, uint8_t *out, i64 i0,
                                     i64 i1, i64 ra_bits, i64 rb_bits, i64 fixed_bits, i64 lo, i64 hi) {
    const uint32_t bits[3] = {(uint32_t)ra_bits, (uint32_t)rb_bits, (uint32_t)fixed_bits};
    float f[3];
    memcpy(f, bits, sizeof f);
    xr_qlinear_add_fma(x + i0, xkind, y + i0, ykind, out + i0, i1 - i0, f[0], f[1], f[2], lo, hi);
}

#define XR_P(i, T) ((T)(intptr_t)a[i])
void xr_job_part(const void *job, i64 part, i64 slot) {
    const xr_job *j = (const xr_job *)job;
    i64 a[XR_JOB_ARGS];
    memcpy(a, j->args, sizeof a);
    for (i64 i = 0; i < j->n_part; ++i) a[j->part_at[i]] = j->part_vals[part * j->n_part + i];
    for (i64 i = 0; i < j->n_slot; ++i) a[j->slot_at[i]] = j->slot_vals[slot * j->n_slot + i];
    switch (j->kind) {
    case 0:
        xr_conv_tiles_u8s8(XR_P(0, const uint8_t *), XR_P(1, const int8_t *), XR_P(2, void *), XR_P(3, uint8_t *),
                           a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15], a[16],
                           a[17], a[18], a[19], a[20], a[21], a[22], a[23], XR_P(24, const xr_epi *), a[25],
                           XR_P(26, uint8_t *), a[27]);
        break;
    case 8:
        xr_conv_direct_u8s8(XR_P(0, const uint8_t *), XR_P(1, const int8_t *), XR_P(2, void *), XR_P(3, uint8_t *),
                            a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15], a[16], a[17],
                            a[18], a[19], a[20], a[21], a[22], XR_P(23, const xr_epi *), a[24]);
        break;
    case 7:
        xr_qlinear_add_fma_range(XR_P(0, const uint8_t *), a[1], XR_P(2, const uint8_t *), a[3], XR_P(4, uint8_t *), a[5],
                                 a[6], a[7], a[8], a[9], a[10], a[11]);
        break;
    case 5:
        xr_depthwise_u8s8(XR_P(0, const uint8_t *), XR_P(1, const int8_t *), XR_P(2, void *), a[3], a[4], a[5], a[6],
                          a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15], a[16], a[17],
                          XR_P(18, const xr_epi *));
        break;
#if XR_VBMI
    case 6:
        xr_depthwise_plane_u8s8(XR_P(0, const uint8_t *), XR_P(1, const int32_t *), XR_P(2, void *), a[3], a[4], a[5],
                                XR_P(6, const uint8_t *), XR_P(7, const uint64_t *), a[8], a[9], a[10],
                                XR_P(11, const xr_epi *));
        break;
#endif
    case 1:
        xr_conv1x1_planes_u8s8(XR_P(0, const uint8_t *), XR_P(1, const int8_t *), XR_P(2, void *), a[3], a[4], a[5],
                               a[6], a[7], a[8], a[9], a[10], XR_P(11, const xr_epi *));
        break;
    case 2:
        xr_gemm_u8s8(XR_P(0, const uint8_t *), XR_P(1, const int8_t *), XR_P(2, void *), a[3], a[4], a[5], a[6], a[7],
                     XR_P(8, const xr_epi *), a[9]);
        break;
    case 3:
        xr_planes_to_rows_u8(XR_P(0, const uint8_t *), XR_P(1, uint8_t *), a[2], a[3], a[4], a[5], a[6]);
        break;
    case 4:
        xr_strided_to_rows_u8(XR_P(0, const uint8_t *), XR_P(1, uint8_t *), a[2], a[3], a[4], a[5], a[6], a[7], a[8],
                              a[9], a[10]);
        break;
    default:
        break;
    }
}
#undef XR_P
