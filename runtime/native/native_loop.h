/*
 * Elementwise loops: a fused function of float32 elementwise ops (and the slices, splits,
 * reshapes and broadcasts that only say where its operands' elements are) run as one pass
 * over its result (xrelay.runtime.native.elementwise_loop writes the program). The result's
 * index space is up to five dimensions; the innermost one is cut into blocks of XR_LOOP_BLOCK
 * elements, and every instruction of the program runs on a block held in a small register
 * file on the stack, so each value is read once and written once, whatever the chain's length.
 *
 * exp, tanh and sigmoid are computed here (Cephes' single-precision polynomials, written
 * branch-free so the compiler vectorises them): within 2 units in the last place of the
 * correctly rounded value, not numpy's bits (xrelay.runtime.native.elementwise_loop).
 */

#define XR_LOOP_BLOCK 64
#define XR_LOOP_REGS 32
#define XR_ROW_ONCE 256 /* flag: a value the same along the innermost dimension */

enum {
    XR_LOAD = 0, XR_LOAD_BOOL = 1, XR_STORE = 2,
    XR_ADD = 10, XR_SUB = 11, XR_MUL = 12, XR_DIV = 13, XR_MAX = 14, XR_MIN = 15, XR_PRELU = 16,
    XR_NEG = 20, XR_ABS = 21, XR_EXP = 22, XR_TANH = 23, XR_SIGMOID = 24, XR_RELU = 25, XR_SQRT = 26,
    XR_SELECT = 30,
};

static inline float xr_bits_f32(int32_t i) {
    union { int32_t i; float f; } u = {.i = i};
    return u.f;
}

/* exp(x): x = n ln2 + r, |r| <= ln2 / 2, exp(r) by Cephes' expf polynomial, 2^n applied as two
   normal powers of two (so results in the subnormal range are rounded once). */
static inline float xr_expf(float x) {
    float xc = x < -104.0f ? -104.0f : (x > 88.75f ? 88.75f : x);
    xc = xc == xc ? xc : 0.0f;
    float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = xc - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    int32_t k = (int32_t)n, k1 = k >> 1, k2 = k - k1;
    float y = p * xr_bits_f32((k1 + 127) << 23) * xr_bits_f32((k2 + 127) << 23);
    y = x > 88.7228393555f ? __builtin_inff() : y;
    y = x < -104.0f ? 0.0f : y;
    return x == x ? y : x;
}

/* tanh(x): Cephes' tanhf, an odd polynomial for |x| < 0.625, 1 - 2 / (exp(2|x|) + 1) above. */
static inline float xr_tanhf(float x) {
    float a = x < 0.0f ? -x : x;
    float z = x * x;
    float s = -5.70498872745e-3f;
    s = s * z + 2.06390887954e-2f;
    s = s * z - 5.37397155531e-2f;
    s = s * z + 1.33314422036e-1f;
    s = s * z - 3.33332819422e-1f;
    float small = s * z * x + x;
    float big = 1.0f - 2.0f / (xr_expf(a + a) + 1.0f);
    big = x < 0.0f ? -big : big;
    return a < 0.625f ? small : (x == x ? big : x);
}

/* sigmoid(x): e = exp(-|x|), 1 / (1 + e) for x >= 0, else e times that (one division). */
static inline float xr_sigmoidf(float x) {
    float e = xr_expf(x < 0.0f ? x : -x);
    float r = 1.0f / (1.0f + e);
    return x >= 0.0f ? r : e * r;
}

static inline float xr_maxf(float a, float b) { return (a > b || a != a) ? a : b; }  /* np.maximum */
static inline float xr_minf(float a, float b) { return (a < b || a != a) ? a : b; }  /* np.minimum */

/* One instruction that computes (every code but the loads and the store) on m elements. */
static void xr_loop_op(i64 code, float *restrict o, const float *a, const float *b, const float *c, i64 m) {
    switch (code) {
    case XR_ADD: for (i64 e = 0; e < m; e++) o[e] = a[e] + b[e]; break;
    case XR_SUB: for (i64 e = 0; e < m; e++) o[e] = a[e] - b[e]; break;
    case XR_MUL: for (i64 e = 0; e < m; e++) o[e] = a[e] * b[e]; break;
    case XR_DIV: for (i64 e = 0; e < m; e++) o[e] = a[e] / b[e]; break;
    case XR_MAX: for (i64 e = 0; e < m; e++) o[e] = xr_maxf(a[e], b[e]); break;
    case XR_MIN: for (i64 e = 0; e < m; e++) o[e] = xr_minf(a[e], b[e]); break;
    case XR_PRELU: for (i64 e = 0; e < m; e++) o[e] = a[e] > 0.0f ? a[e] : a[e] * b[e]; break;  /* nn.prelu's where(x > 0, x, x * alpha) */
    case XR_NEG: for (i64 e = 0; e < m; e++) o[e] = -a[e]; break;
    case XR_ABS: for (i64 e = 0; e < m; e++) o[e] = __builtin_fabsf(a[e]); break;
    case XR_EXP: for (i64 e = 0; e < m; e++) o[e] = xr_expf(a[e]); break;
    case XR_TANH: for (i64 e = 0; e < m; e++) o[e] = xr_tanhf(a[e]); break;
    case XR_SIGMOID: for (i64 e = 0; e < m; e++) o[e] = xr_sigmoidf(a[e]); break;
    case XR_RELU: for (i64 e = 0; e < m; e++) o[e] = xr_maxf(a[e], 0.0f); break;
    case XR_SQRT: for (i64 e = 0; e < m; e++) o[e] = __builtin_sqrtf(a[e]); break;
    default: for (i64 e = 0; e < m; e++) o[e] = a[e] != 0.0f ? b[e] : c[e]; break;
    }
}

/* Row u's index (i0, i1, i2, i3) in the outer space. */
static inline void xr_loop_row(const i64 *t, i64 u, i64 *at_row) {
    const i64 d1 = t[1], d2 = t[2], d3 = t[3];
    at_row[0] = u / (d1 * d2 * d3);
    at_row[1] = (u / (d2 * d3)) % d1;
    at_row[2] = (u / d3) % d2;
    at_row[3] = u % d3;
}

/* Block j of the row at at_row: every instruction of the program on its m elements. */
static inline void xr_loop_block(const i64 *t, float reg[XR_LOOP_REGS][XR_LOOP_BLOCK], const i64 *at_row, i64 j) {
    const i64 d4 = t[4], nops = t[5], nins = t[6];
    const i64 *ops = t + 7, *ins = t + 7 + 6 * nops;
    const i64 i0 = at_row[0], i1 = at_row[1], i2 = at_row[2], i3 = at_row[3];
    const i64 m = d4 - j < XR_LOOP_BLOCK ? d4 - j : XR_LOOP_BLOCK;
    for (i64 k = 0; k < nins; k++) {
        const i64 *q = ins + 5 * k;
        if (q[0] & XR_ROW_ONCE) {
            /* computed once, in the row's first block, on one element and broadcast: its
               operands are such values too, and its register is its own */
            if (j > 0) continue;
            const i64 *op = ops + 6 * q[2];
            float *restrict o = reg[q[1]];
            const i64 code = q[0] & ~(i64)XR_ROW_ONCE;
            const i64 at = i0 * op[1] + i1 * op[2] + i2 * op[3] + i3 * op[4];
            if (code == XR_LOAD_BOOL)
                o[0] = *((const uint8_t *)(intptr_t)op[0] + at) ? 1.0f : 0.0f;
            else if (code == XR_LOAD)
                o[0] = *((const float *)(intptr_t)op[0] + at);
            else
                xr_loop_op(code, o, reg[q[2]], reg[q[3]], reg[q[4]], 1);
            for (i64 e = 1; e < XR_LOOP_BLOCK; e++) o[e] = o[0];
            continue;
        }
        switch (q[0]) {
        case XR_LOAD:
        case XR_LOAD_BOOL:
        case XR_STORE: {
            const i64 *op = ops + 6 * (q[0] == XR_STORE ? q[1] : q[2]);
            const i64 at = i0 * op[1] + i1 * op[2] + i2 * op[3] + i3 * op[4] + j * op[5], s = op[5];
            if (q[0] == XR_STORE) {
                const float *a = reg[q[2]];
                float *restrict p = (float *)(intptr_t)op[0] + at;
                if (s == 1) for (i64 e = 0; e < m; e++) p[e] = a[e];
                else for (i64 e = 0; e < m; e++) p[e * s] = a[e];
                break;
            }
            float *restrict o = reg[q[1]];
            if (q[0] == XR_LOAD_BOOL) {
                const uint8_t *p = (const uint8_t *)(intptr_t)op[0] + at;
                for (i64 e = 0; e < m; e++) o[e] = p[e * s] ? 1.0f : 0.0f;
            } else {
                const float *p = (const float *)(intptr_t)op[0] + at;
                if (s == 1) for (i64 e = 0; e < m; e++) o[e] = p[e];
                else for (i64 e = 0; e < m; e++) o[e] = p[e * s];
            }
            break;
        }
        default: xr_loop_op(q[0], reg[q[1]], reg[q[2]], reg[q[3]], reg[q[4]], m); break;
        }
    }
}

/* Tiles: when an operand is read or written with a stride along the innermost dimension (a
   transpose), each element of a row's block is in a cache line of its own, and a block of 64
   touches 64 lines an operand (at a stride of a power of two, in 8 of L1's 64 sets: they
   evict each other before the next row uses them; 2-4 ns an element). The loop then runs on
   tiles of XR_LOOP_TILE rows by XR_LOOP_TILE elements instead, a register holding a tile:
   each operand's tile is 16 lines, each used whole, read and written along whichever of the
   two dimensions it is contiguous in. Every element is computed by the same operations. */
#define XR_LOOP_TILE 16
#define XR_TILE_ELEMENTS (XR_LOOP_TILE * XR_LOOP_TILE)

#if defined(__AVX__)
#include <immintrin.h>
/* d[i * ds + k] = s[k * ss + i] for i, k < 8: eight rows of eight floats transposed in
   registers (unpack pairs of rows, shuffle pairs of pairs, swap the 128-bit halves). */
static inline void xr_transpose8(const float *s, i64 ss, float *d, i64 ds) {
    __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + ss), r2 = _mm256_loadu_ps(s + 2 * ss),
           r3 = _mm256_loadu_ps(s + 3 * ss), r4 = _mm256_loadu_ps(s + 4 * ss), r5 = _mm256_loadu_ps(s + 5 * ss),
           r6 = _mm256_loadu_ps(s + 6 * ss), r7 = _mm256_loadu_ps(s + 7 * ss);
    __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
    _mm256_storeu_ps(d + ds, _mm256_permute2f128_ps(u1, u5, 0x20));
    _mm256_storeu_ps(d + 2 * ds, _mm256_permute2f128_ps(u2, u6, 0x20));
    _mm256_storeu_ps(d + 3 * ds, _mm256_permute2f128_ps(u3, u7, 0x20));
    _mm256_storeu_ps(d + 4 * ds, _mm256_permute2f128_ps(u0, u4, 0x31));
    _mm256_storeu_ps(d + 5 * ds, _mm256_permute2f128_ps(u1, u5, 0x31));
    _mm256_storeu_ps(d + 6 * ds, _mm256_permute2f128_ps(u2, u6, 0x31));
    _mm256_storeu_ps(d + 7 * ds, _mm256_permute2f128_ps(u3, u7, 0x31));
}
#define XR_TRANSPOSE8 1
#else
#define XR_TRANSPOSE8 0
#endif

/* A whole tile between a register and an operand contiguous along the tile's rows (its
   elements along them one after another): to the register (load) or from it, as four 8 x 8
   transposes; 0 where it is not such a tile or no vector transpose is built. */
static inline int xr_tile_transposed(float *reg, float *p, i64 se, i64 nr, i64 nc, int load) {
    if (!XR_TRANSPOSE8 || nr != XR_LOOP_TILE || nc != XR_LOOP_TILE) return 0;
#if defined(__AVX__)
    for (i64 r0 = 0; r0 < XR_LOOP_TILE; r0 += 8)
        for (i64 e0 = 0; e0 < XR_LOOP_TILE; e0 += 8) {
            if (load) /* reg[r][e] = p[r + e * se] */
                xr_transpose8(p + r0 + e0 * se, se, reg + r0 * XR_LOOP_TILE + e0, XR_LOOP_TILE);
            else /* p[r + e * se] = reg[r][e] */
                xr_transpose8(reg + r0 * XR_LOOP_TILE + e0, XR_LOOP_TILE, p + r0 + e0 * se, se);
        }
#endif
    return 1;
}

/* Whether the loop runs in tiles: an operand strided along the innermost dimension. */
static int xr_loop_tiled(const i64 *t) {
    const i64 *ops = t + 7;
    for (i64 k = 0; k < t[5]; k++)
        if (ops[6 * k + 5] > 1 || ops[6 * k + 5] < -1) return 1;
    return 0;
}

/* The tile of rows u .. u + nr - 1 (one run of the fourth dimension: at_row is the first's
   index) by elements j .. j + nc - 1: a register's element (r, e) at r * XR_LOOP_TILE + e. */
static void xr_loop_tile(const i64 *t, float (*reg)[XR_TILE_ELEMENTS], const i64 *at_row, i64 nr, i64 j, i64 nc) {
    const i64 nops = t[5], nins = t[6];
    const i64 *ops = t + 7, *ins = t + 7 + 6 * nops;
    const i64 i0 = at_row[0], i1 = at_row[1], i2 = at_row[2], i3 = at_row[3];
    for (i64 k = 0; k < nins; k++) {
        const i64 *q = ins + 5 * k;
        /* a value the same along a row is computed on every element of the tile (its rows'
           values differ): the same operations on the same values */
        const i64 code = q[0] & ~(i64)XR_ROW_ONCE;
        if (code != XR_LOAD && code != XR_LOAD_BOOL && code != XR_STORE) {
            xr_loop_op(code, reg[q[1]], reg[q[2]], reg[q[3]], reg[q[4]], XR_TILE_ELEMENTS);
            continue;
        }
        const i64 *op = ops + 6 * (code == XR_STORE ? q[1] : q[2]);
        const i64 at = i0 * op[1] + i1 * op[2] + i2 * op[3] + i3 * op[4] + j * op[5];
        const i64 sr = op[4], se = op[5];
        /* along the rows first where the operand is contiguous (or nearer so) along them */
        const int by_rows = (sr < 0 ? -sr : sr) < (se < 0 ? -se : se);
        if (code == XR_STORE) {
            const float *a = reg[q[2]];
            float *p = (float *)(intptr_t)op[0] + at;
            if (sr == 1 && xr_tile_transposed(reg[q[2]], p, se, nr, nc, 0)) continue;
            if (by_rows)
                for (i64 e = 0; e < nc; e++) for (i64 r = 0; r < nr; r++) p[r * sr + e * se] = a[r * XR_LOOP_TILE + e];
            else
                for (i64 r = 0; r < nr; r++) for (i64 e = 0; e < nc; e++) p[r * sr + e * se] = a[r * XR_LOOP_TILE + e];
        } else if (code == XR_LOAD_BOOL) {
            const uint8_t *p = (const uint8_t *)(intptr_t)op[0] + at;
            float *o = reg[q[1]];
            for (i64 r = 0; r < nr; r++) for (i64 e = 0; e < nc; e++) o[r * XR_LOOP_TILE + e] = p[r * sr + e * se] ? 1.0f : 0.0f;
        } else {
            const float *p = (const float *)(intptr_t)op[0] + at;
            float *o = reg[q[1]];
            if (sr == 1 && xr_tile_transposed(o, (float *)p, se, nr, nc, 1)) continue;
            if (by_rows)
                for (i64 e = 0; e < nc; e++) for (i64 r = 0; r < nr; r++) o[r * XR_LOOP_TILE + e] = p[r * sr + e * se];
            else
                for (i64 r = 0; r < nr; r++) for (i64 e = 0; e < nc; e++) o[r * XR_LOOP_TILE + e] = p[r * sr + e * se];
        }
    }
}

/* Rows [u0, u1) in tiles: each run of the fourth dimension cut into XR_LOOP_TILE rows. */
static void xr_loop_tiles(const i64 *t, i64 u0, i64 u1) {
    const i64 d3 = t[3], d4 = t[4];
    /* zeroed once: a partial tile's unused elements are computed on too (no garbage values,
       which might be slow subnormals) and never stored */
    float reg[XR_LOOP_REGS][XR_TILE_ELEMENTS] = {{0.0f}};
    i64 at_row[4];
    for (i64 u = u0; u < u1;) {
        xr_loop_row(t, u, at_row);
        i64 nr = d3 - at_row[3];
        nr = nr < XR_LOOP_TILE ? nr : XR_LOOP_TILE;
        nr = nr < u1 - u ? nr : u1 - u;
        for (i64 j = 0; j < d4; j += XR_LOOP_TILE)
            xr_loop_tile(t, reg, at_row, nr, j, d4 - j < XR_LOOP_TILE ? d4 - j : XR_LOOP_TILE);
        u += nr;
    }
}

/* The program t: t[0..4] the result's index space (outermost first), t[5] the number of
   operands, t[6] the number of instructions; then per operand (address, 5 strides in
   elements: 0 broadcasts) and per instruction (code, destination, a, b, c): LOAD reg <-
   operand a, LOAD_BOOL the same of a bool operand (1 or 0), STORE operand <- reg a, the
   binary ops reg <- a op b, the unary ones reg <- op(a), SELECT reg <- a ? b : c. Rows
   [u0, u1) of the collapsed outer space (t[0] * t[1] * t[2] * t[3] rows) are computed. */
void xrelay_loop_f32(const i64 *t, i64 u0, i64 u1) {
    if (xr_loop_tiled(t)) {
        xr_loop_tiles(t, u0, u1);
        return;
    }
    float reg[XR_LOOP_REGS][XR_LOOP_BLOCK];
    i64 at_row[4];
    for (i64 u = u0; u < u1; u++) {
        xr_loop_row(t, u, at_row);
        for (i64 j = 0; j < t[4]; j += XR_LOOP_BLOCK) xr_loop_block(t, reg, at_row, j);
    }
}
