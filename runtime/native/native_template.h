/*
 * The executor's loop kernels, written once for a floating type: runtime/native_kernels.c
 * includes this file twice, with REAL = float / SFX(name) = name##_f32 and with REAL = double /
 * SFX(name) = name##_f64. See xrelay.runtime.native.library for what each kernel computes and why
 * it gives the numpy reference's bits (or, for Winograd and depthwise, which sums it orders).
 */

static inline void SFX(span)(i64 n_out, i64 n_in, i64 offset, i64 stride, i64 *lo, i64 *hi) {
    /* output indices o with 0 <= o * stride + offset < n_in */
    i64 l = 0, h;
    if (offset < 0) l = (-offset + stride - 1) / stride;
    if (n_in - 1 - offset >= 0) h = (n_in - 1 - offset) / stride + 1; else h = 0;
    if (h > n_out) h = n_out;
    if (h < l) h = l;
    *lo = l; *hi = h;
}

#include "native_concat.h" /* pick, pickmin, apply_run, concat_epi */

#define EPI_BLOCK 1024  /* elements every op of the epilogue finishes while they are in L1 */

/* The four epilogue ops (code -1: none) on channels [c0, c1), rows [y0, y1), in one pass:
   every block of a channel's elements gets op 0, 1, 2, 3 in turn while it is in cache. An
   operand constant over a channel's plane, or laid out like the output, is applied to the
   rows as one run (no per-row overhead on small images); other operands row by row.
   Elementwise ops give the same bits in any blocking. */
static void SFX(apply)(REAL *restrict o, i64 oh, i64 ow, const REAL *const *ops, const i64 *st,
                    const i64 *codes, const i64 *swapped, i64 c0, i64 c1, i64 y0, i64 y1) {
    int flat = 1;
    for (int k = 0; k < 4; k++) {
        const i64 *s = st + 3 * k;
        if (codes[k] >= 0 && !((s[1] == 0 && s[2] == 0) || (s[2] == 1 && s[1] == ow))) flat = 0;
    }
    i64 n = (y1 - y0) * ow;
    for (i64 ch = c0; ch < c1; ch++) {
        REAL *base = o + (ch * oh + y0) * ow;
        const REAL *src[4];
        for (int k = 0; k < 4; k++) src[k] = ops[k] + ch * st[3 * k] + y0 * st[3 * k + 1];
        if (flat) {
            for (i64 b = 0; b < n; b += EPI_BLOCK) {
                i64 m = n - b < EPI_BLOCK ? n - b : EPI_BLOCK;
                for (int k = 0; k < 4; k++)
                    if (codes[k] >= 0)
                        SFX(apply_run)(base + b, m, src[k] + b * st[3 * k + 2], st[3 * k + 2],
                                      codes[k], swapped[k]);
            }
        } else {
            for (i64 y = 0; y < y1 - y0; y++)
                for (int k = 0; k < 4; k++)
                    if (codes[k] >= 0)
                        SFX(apply_run)(base + y * ow, ow, src[k] + y * st[3 * k + 1],
                                      st[3 * k + 2], codes[k], swapped[k]);
        }
    }
}


void SFX(gather)(const REAL *restrict x, i64 h, i64 wd, REAL *restrict cols, i64 p, i64 c0, i64 c1,
              i64 y0, i64 y1, i64 oh, i64 ow, i64 kh, i64 kw, i64 sh, i64 sw, i64 dh, i64 dw,
              i64 pt, i64 pl) {
    (void)oh;
    for (i64 ch = c0; ch < c1; ch++)
        for (i64 i = 0; i < kh; i++)
            for (i64 j = 0; j < kw; j++) {
                REAL *row = cols + ((ch * kh + i) * kw + j) * p;
                i64 ix0 = j * dw - pl, lo, hi;
                SFX(span)(ow, wd, ix0, sw, &lo, &hi);
                for (i64 y = y0; y < y1; y++) {
                    REAL *out = row + y * ow;
                    i64 iy = y * sh + i * dh - pt;
                    if (iy < 0 || iy >= h || lo >= hi) {
                        for (i64 xo = 0; xo < ow; xo++) out[xo] = 0;
                        continue;
                    }
                    const REAL *src = x + (ch * h + iy) * wd;
                    for (i64 xo = 0; xo < lo; xo++) out[xo] = 0;
                    if (sw == 1) {
                        for (i64 xo = lo; xo < hi; xo++) out[xo] = src[xo + ix0];
                    } else {
                        for (i64 xo = lo; xo < hi; xo++) out[xo] = src[xo * sw + ix0];
                    }
                    for (i64 xo = hi; xo < ow; xo++) out[xo] = 0;
                }
            }
}

void SFX(depthwise)(const REAL *restrict x, i64 h, i64 wd, const REAL *restrict w, i64 kh, i64 kw,
                 REAL *restrict o, i64 oh, i64 ow, i64 c0, i64 c1, i64 sh, i64 sw, i64 dh, i64 dw,
                 i64 pt, i64 pl) {
    for (i64 ch = c0; ch < c1; ch++)
        for (i64 y = 0; y < oh; y++) {
            REAL *row = o + (ch * oh + y) * ow;
            for (i64 xo = 0; xo < ow; xo++) row[xo] = 0;
            for (i64 i = 0; i < kh; i++) {
                i64 iy = y * sh + i * dh - pt;
                if (iy < 0 || iy >= h) continue;
                const REAL *src = x + (ch * h + iy) * wd;
                for (i64 j = 0; j < kw; j++) {
                    REAL wv = w[(ch * kh + i) * kw + j];
                    i64 ix0 = j * dw - pl, lo, hi;
                    SFX(span)(ow, wd, ix0, sw, &lo, &hi);
                    if (sw == 1) {
                        for (i64 xo = lo; xo < hi; xo++) row[xo] += wv * src[xo + ix0];
                    } else if (sw == 2) {
                        for (i64 xo = lo; xo < hi; xo++) row[xo] += wv * src[2 * xo + ix0];
                    } else {
                        for (i64 xo = lo; xo < hi; xo++) row[xo] += wv * src[xo * sw + ix0];
                    }
                }
            }
        }
}

static void SFX(depthwise_edge)(const REAL *restrict x, i64 h, i64 wd, const REAL *restrict w,
                             REAL *restrict o, i64 oh, i64 ow, i64 ch, i64 y, i64 x0, i64 x1,
                             i64 sh, i64 sw, i64 pt, i64 pl) {
    for (i64 xo = x0; xo < x1; xo++) {
        REAL acc = 0;
        for (i64 i = 0; i < 3; i++) {
            i64 iy = y * sh + i - pt;
            if (iy < 0 || iy >= h) continue;
            for (i64 j = 0; j < 3; j++) {
                i64 ix = xo * sw + j - pl;
                if (ix >= 0 && ix < wd) acc += w[ch * 9 + i * 3 + j] * x[(ch * h + iy) * wd + ix];
            }
        }
        o[(ch * oh + y) * ow + xo] = acc;
    }
}

static void SFX(depthwise3x3_rows)(const REAL *restrict x, i64 h, i64 wd, const REAL *restrict w,
                    REAL *restrict o, i64 oh, i64 ow, i64 c0, i64 c1, i64 sh, i64 sw, i64 pt, i64 pl) {
    i64 xlo, xhi;
    SFX(span)(ow, wd - 2, -pl, sw, &xlo, &xhi);
    for (i64 ch = c0; ch < c1; ch++) {
        const REAL *k = w + ch * 9;
        for (i64 y = 0; y < oh; y++) {
            i64 iy = y * sh - pt;
            if (iy < 0 || iy + 2 >= h || xlo >= xhi) {
                SFX(depthwise_edge)(x, h, wd, w, o, oh, ow, ch, y, 0, ow, sh, sw, pt, pl);
                continue;
            }
            SFX(depthwise_edge)(x, h, wd, w, o, oh, ow, ch, y, 0, xlo, sh, sw, pt, pl);
            SFX(depthwise_edge)(x, h, wd, w, o, oh, ow, ch, y, xhi, ow, sh, sw, pt, pl);
            REAL *row = o + (ch * oh + y) * ow;
            const REAL *r0 = x + (ch * h + iy) * wd, *r1 = r0 + wd, *r2 = r1 + wd;
            for (i64 xo = xlo; xo < xhi; xo++) {
                i64 b = xo * sw - pl;
                REAL acc = 0;
                acc += k[0] * r0[b]; acc += k[1] * r0[b + 1]; acc += k[2] * r0[b + 2];
                acc += k[3] * r1[b]; acc += k[4] * r1[b + 1]; acc += k[5] * r1[b + 2];
                acc += k[6] * r2[b]; acc += k[7] * r2[b + 1]; acc += k[8] * r2[b + 2];
                row[xo] = acc;
            }
        }
    }
}

/* t[q] = the nine taps s[0..8][q] weighted by k, summed in (i, j) order from 0: the same
   operations per output as the kernels above. Vectorised over q. */
static void SFX(dw_taps)(const REAL *const *s, const REAL *restrict k, REAL *restrict t, i64 n) {
    const REAL *s0 = s[0], *s1 = s[1], *s2 = s[2], *s3 = s[3], *s4 = s[4];
    const REAL *s5 = s[5], *s6 = s[6], *s7 = s[7], *s8 = s[8];
    REAL k0 = k[0], k1 = k[1], k2 = k[2], k3 = k[3], k4 = k[4], k5 = k[5], k6 = k[6];
    REAL k7 = k[7], k8 = k[8];
    for (i64 q = 0; q < n; q++) {
        REAL acc = 0;
        acc += k0 * s0[q]; acc += k1 * s1[q]; acc += k2 * s2[q];
        acc += k3 * s3[q]; acc += k4 * s4[q]; acc += k5 * s5[q];
        acc += k6 * s6[q]; acc += k7 * s7[q]; acc += k8 * s8[q];
        t[q] = acc;
    }
}

#define DW_MAX_PLANE 65536  /* elements of a padded plane kept on the stack */
#define DW_FLAT_ROW 16      /* output rows shorter than this run as one flat loop */

/* 3x3 depthwise convolution, stride (sh, sw), padding (pt, pl), channels [c0, c1). Each
   channel is copied into a zero-padded plane (stride 2: its even and odd columns apart; the
   zero border is written once for all channels), so every output is the same nine
   multiply-adds with unit-stride loads, which the compiler vectorises; short rows run as one
   loop over the whole plane (the values between rows are computed and dropped). A padded
   tap adds w * 0 = +-0, which leaves the sum's bits unchanged for a finite weight; channels
   with a non-finite weight take the row kernel, which skips padded taps. */
__attribute__((optimize("no-tree-loop-distribute-patterns")))  /* no memcpy for tiny rows */
static void SFX(dw3)(const REAL *restrict x, i64 h, i64 wd, const REAL *restrict w,
                    REAL *restrict o, i64 oh, i64 ow, i64 c0, i64 c1, i64 sh, i64 sw, i64 pt,
                    i64 pl, const REAL *const *ops, const i64 *st, const i64 *codes,
                    const i64 *swapped) {
    if (oh <= 0 || ow <= 0 || c0 >= c1) return;
    i64 ph = (oh - 1) * sh + 3, pw = (ow - 1) * sw + 3;
    i64 qw = ow + 1;  /* stride 2: columns of the even and odd halves */
    int s1 = sh == 1 && sw == 1, s2 = sh == 2 && sw == 2;
    i64 plane = s1 ? ph * pw : 2 * ph * qw;
    i64 tmp = ow < DW_FLAT_ROW ? (s1 ? oh * pw : oh * 2 * qw) : 1;
    if (!(s1 || s2) || plane > DW_MAX_PLANE || tmp > DW_MAX_PLANE) {
        SFX(depthwise3x3_rows)(x, h, wd, w, o, oh, ow, c0, c1, sh, sw, pt, pl);
        if (codes) SFX(apply)(o, oh, ow, ops, st, codes, swapped, c0, c1, 0, oh);
        return;
    }
    REAL pad[plane], t[tmp];
    for (i64 q = 0; q < plane; q++) pad[q] = 0;
    /* the part of the padded plane the input covers: rows [r0, r1), columns [lo, hi) */
    i64 r0 = pt < 0 ? 0 : (pt > ph ? ph : pt);
    i64 r1 = pt + h < r0 ? r0 : (pt + h > ph ? ph : pt + h);
    i64 lo = pl < 0 ? 0 : (pl > pw ? pw : pl);
    i64 hi = pl + wd < lo ? lo : (pl + wd > pw ? pw : pl + wd);
    REAL *ev = pad, *od = pad + ph * qw;
    const REAL *s[9];
    i64 step;  /* plane elements between output rows */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            s[3 * i + j] = s1 ? pad + i * pw + j : (j == 1 ? od : ev) + i * qw + (j == 2);
    step = s1 ? pw : 2 * qw;
    for (i64 ch = c0; ch < c1; ch++) {
        const REAL *k = w + ch * 9;
        int finite = 1;
        for (int q = 0; q < 9; q++) finite &= isfinite(k[q]) != 0;
        if (!finite) {
            SFX(depthwise3x3_rows)(x, h, wd, w, o, oh, ow, ch, ch + 1, sh, sw, pt, pl);
            if (codes) SFX(apply)(o, oh, ow, ops, st, codes, swapped, ch, ch + 1, 0, oh);
            continue;
        }
        const REAL *xc = x + ch * h * wd;
        REAL *oc = o + ch * oh * ow;
        for (i64 r = r0; r < r1; r++) {
            const REAL *src = xc + (r - pt) * wd - pl;  /* src[c]: padded column c */
            if (s1) {
                REAL *dst = pad + r * pw;
                for (i64 c = lo; c < hi; c++) dst[c] = src[c];
            } else {
                REAL *de = ev + r * qw, *dd = od + r * qw;
                for (i64 c = (lo + 1) / 2; 2 * c < hi; c++) de[c] = src[2 * c];
                for (i64 c = lo / 2; 2 * c + 1 < hi; c++) dd[c] = src[2 * c + 1];
            }
        }
        if (ow < DW_FLAT_ROW) {
            SFX(dw_taps)(s, k, t, (oh - 1) * step + ow);
            for (i64 y = 0; y < oh; y++)
                for (i64 xo = 0; xo < ow; xo++) oc[y * ow + xo] = t[y * step + xo];
        } else {
            for (i64 y = 0; y < oh; y++) {
                const REAL *sy[9];
                for (int q = 0; q < 9; q++) sy[q] = s[q] + y * step;
                SFX(dw_taps)(sy, k, oc + y * ow, ow);
            }
        }
        /* the epilogue while the channel is in cache */
        if (codes) SFX(apply)(o, oh, ow, ops, st, codes, swapped, ch, ch + 1, 0, oh);
    }
}

void SFX(depthwise3x3)(const REAL *restrict x, i64 h, i64 wd, const REAL *restrict w,
                    REAL *restrict o, i64 oh, i64 ow, i64 c0, i64 c1, i64 sh, i64 sw, i64 pt,
                    i64 pl) {
    SFX(dw3)(x, h, wd, w, o, oh, ow, c0, c1, sh, sw, pt, pl, 0, 0, 0, 0);
}

/* depthwise3x3 followed by the epilogue (as epilogue's) on each channel it computed. */
void SFX(depthwise3x3_epi)(const REAL *restrict x, i64 h, i64 wd, const REAL *restrict w,
                    REAL *restrict o, i64 oh, i64 ow, i64 c0, i64 c1, i64 sh, i64 sw, i64 pt,
                    i64 pl, const REAL *p0, const REAL *p1, const REAL *p2, const REAL *p3,
                    const i64 *strides, const i64 *codes, const i64 *swapped) {
    const REAL *ops[4] = {p0, p1, p2, p3};
    SFX(dw3)(x, h, wd, w, o, oh, ow, c0, c1, sh, sw, pt, pl, ops, strides, codes, swapped);
}

void SFX(max_pool)(const REAL *restrict x, i64 h, i64 wd, REAL *restrict o, i64 oh, i64 ow,
                i64 ostride_c, i64 ostride_y, i64 c0, i64 c1, i64 kh, i64 kw, i64 sh, i64 sw,
                i64 dh, i64 dw, i64 pt, i64 pl) {
    for (i64 ch = c0; ch < c1; ch++)
        for (i64 y = 0; y < oh; y++) {
            REAL *row = o + ch * ostride_c + y * ostride_y;
            for (i64 xo = 0; xo < ow; xo++) row[xo] = -INFINITY;
            for (i64 i = 0; i < kh; i++) {
                i64 iy = y * sh + i * dh - pt;
                if (iy < 0 || iy >= h) continue;
                const REAL *src = x + (ch * h + iy) * wd;
                for (i64 j = 0; j < kw; j++) {
                    i64 ix0 = j * dw - pl, lo, hi;
                    SFX(span)(ow, wd, ix0, sw, &lo, &hi);
                    for (i64 xo = lo; xo < hi; xo++) row[xo] = SFX(pick)(row[xo], src[xo * sw + ix0]);
                }
            }
        }
}

/* image.grid_sample, 2-D, NCHW: x (n, c, h, wd) sampled at grid (n, 2, oh, ow) (x then y in
   [-1, 1]) into o (n, c, oh, ow), output rows [u0, u1) of the n * oh rows. method 0 nearest,
   1 bilinear; padding 0 zeros, 1 border, 2 reflection; align 1 for align_corners. The
   reference kernel's arithmetic in its order (kernels.algorithm.grid_sample): the coordinate
   ((g + 1) * size - 1) / 2 or (g + 1) / 2 * (size - 1), its padding, the taps' values times
   their validity times their weights, summed from 0 in (y, x) tap order. */
static REAL SFX(gs_reflect)(REAL x, REAL lo, REAL hi) {
    const REAL span = hi - lo;
    if (span <= 0) return lo;
    if (x >= lo && x <= hi) return x;
    const int below = x < lo;
    const REAL dx = below ? lo - x : x - hi;
    const REAL n = floor(dx / span), r = dx - n * span;
    const int even = fmod(n, 2) == 0;
    return below ? (even ? lo + r : hi - r) : (even ? hi - r : lo + r);
}

/* The padded coordinate of one axis of size `size`. */
static REAL SFX(gs_coord)(REAL g, i64 size, i64 method, i64 padding, i64 align) {
    REAL x = align ? (g + 1) / 2 * (REAL)(size - 1) : ((g + 1) * (REAL)size - 1) / 2;
    if (method == 0) x = nearbyint(x);
    const REAL lo = align ? 0 : (REAL)-0.5, hi = align ? (REAL)(size - 1) : (REAL)size - (REAL)0.5;
    if (padding == 1 && (x < lo || x > hi)) x = x < 0 ? 0 : (x > (REAL)(size - 1) ? (REAL)(size - 1) : x);
    else if (padding == 2) x = SFX(gs_reflect)(x, lo, hi);
    return x;
}

/* A tap's index along an axis (clamped for the fetch) and whether it is inside (zeros). */
static i64 SFX(gs_index)(i64 i, i64 size, i64 padding, i64 align, REAL *valid) {
    *valid = 1;
    if (padding == 2) {
        const REAL lo = align ? 0 : (REAL)-0.5, hi = align ? (REAL)(size - 1) : (REAL)size - (REAL)0.5;
        i = (i64)SFX(gs_reflect)((REAL)i, lo, hi);
    } else if (padding == 0 && (i < 0 || i >= size)) {
        *valid = 0;
    }
    return i < 0 ? 0 : (i >= size ? size - 1 : i);
}

void SFX(grid_sample)(const REAL *restrict x, const REAL *restrict grid, REAL *restrict o, i64 c, i64 h,
                      i64 wd, i64 oh, i64 ow, i64 method, i64 padding, i64 align, i64 u0, i64 u1) {
    for (i64 u = u0; u < u1; u++) {
        const i64 b = u / oh, y = u % oh;
        const REAL *gx = grid + (b * 2 * oh + y) * ow, *gy = gx + oh * ow;
        const REAL *src = x + b * c * h * wd;
        REAL *dst = o + b * c * oh * ow + y * ow;
        for (i64 xo = 0; xo < ow; xo++) {
            const REAL fy = SFX(gs_coord)(gy[xo], h, method, padding, align);
            const REAL fx = SFX(gs_coord)(gx[xo], wd, method, padding, align);
            if (method == 0) {
                REAL vy, vx;
                const i64 iy = SFX(gs_index)((i64)fy, h, padding, align, &vy);
                const i64 ix = SFX(gs_index)((i64)fx, wd, padding, align, &vx);
                const REAL valid = vy * vx;
                for (i64 ch = 0; ch < c; ch++) dst[ch * oh * ow + xo] = src[(ch * h + iy) * wd + ix] * valid;
                continue;
            }
            const REAL y0 = floor(fy), x0 = floor(fx), ty = fy - y0, tx = fx - x0;
            const REAL wy[2] = {1 - ty, ty}, wx[2] = {1 - tx, tx};
            i64 iy[2], ix[2];
            REAL vy[2], vx[2];
            for (int k = 0; k < 2; k++) {
                iy[k] = SFX(gs_index)((i64)y0 + k, h, padding, align, &vy[k]);
                ix[k] = SFX(gs_index)((i64)x0 + k, wd, padding, align, &vx[k]);
            }
            REAL w[4], v[4];
            i64 at[4];
            for (int k = 0; k < 4; k++) {
                w[k] = wy[k >> 1] * wx[k & 1];
                v[k] = vy[k >> 1] * vx[k & 1];
                at[k] = iy[k >> 1] * wd + ix[k & 1];
            }
            for (i64 ch = 0; ch < c; ch++) {
                const REAL *p = src + ch * h * wd;
                REAL acc = 0;
                for (int k = 0; k < 4; k++) acc += p[at[k]] * v[k] * w[k];
                dst[ch * oh * ow + xo] = acc;
            }
        }
    }
}

/* image.resize2d along one axis (a linear or cubic resize is two such passes): x (np, n_in, nq)
   into o (np, n_out, nq), o[p][j][q] = sum over t < k of w[j * k + t] * x[p][first[j] + t][q],
   the band of row j of the interpolation matrix (runtime.native.fast_kernels._resize_taps),
   for the output rows u = p * n_out + j in [u0, u1). The inner loop runs along q: the channels
   of a channels-last image, the output columns of a channels-first one's H pass. */
void SFX(resize_pass)(const REAL *restrict x, REAL *restrict o, const REAL *restrict w,
                      const i64 *restrict first, i64 n_in, i64 n_out, i64 nq, i64 k, i64 u0, i64 u1) {
    for (i64 u = u0; u < u1; u++) {
        const i64 p = u / n_out, j = u % n_out;
        const REAL *src = x + (p * n_in + first[j]) * nq, *wj = w + j * k;
        REAL *dst = o + u * nq;
        for (i64 q = 0; q < nq; q++) dst[q] = wj[0] * src[q];
        for (i64 t = 1; t < k; t++) {
            const REAL wt = wj[t], *s = src + t * nq;
            for (i64 q = 0; q < nq; q++) dst[q] += wt * s[q];
        }
    }
}

/* Winograd, channels first: x[c][h][w] into the (tile + 2)^2 matrices channels x tiles
   v[k * ks + ch * nt + t], and the products m[k * ks + oc * nt + t] into out[o][oh][ow]. A
   lane of winograd_core.h is a tile of a channel: blocks of up to WTB lanes consecutive in v
   (across tile rows, and across channels when every tile row is asked for: small images
   fill a block too). */
#define WTB 128

/* A walk over the lanes asked for (channels [c0, c1), tile rows [r0, r1); lane ch * nt + t)
   in blocks of up to WTB lanes consecutive in the matrices: every tile of the channels as one
   run when the tile rows are all of them (small images fill a block too), else a run per
   channel; in a block, its tile-row segments (channel ch, tiles tx0.. of row ty). */
typedef struct {
    i64 nt, tw, th, runs, len, first, r, b0;
    i64 lane, nb;     /* the block: its first lane, its lane count */
    i64 ch, ty, tx0;  /* the segment */
} SFX(wino_walk);

static inline SFX(wino_walk) SFX(wino_walk_start)(i64 nt, i64 tw, i64 c0, i64 c1, i64 r0, i64 r1) {
    i64 t0 = r0 * tw, t1 = r1 * tw;
    int whole = t0 == 0 && t1 == nt;
    SFX(wino_walk) w = {nt, tw, nt / tw, whole ? (c1 > c0) : c1 - c0, whole ? (c1 - c0) * nt : t1 - t0,
                        c0 * nt + t0, 0, -WTB, 0, 0, 0, 0, 0};
    if (w.runs <= 0) w.len = 0;
    return w;
}

/* The next block and its first segment; 0 when none is left. */
static inline int SFX(wino_walk_block)(SFX(wino_walk) *w) {
    w->b0 += WTB;
    while (w->b0 >= w->len) {
        if (++w->r >= w->runs) return 0;
        w->b0 = 0;
    }
    w->lane = w->first + w->r * w->nt + w->b0;
    w->nb = w->len - w->b0 < WTB ? w->len - w->b0 : WTB;
    w->ch = w->lane / w->nt, w->ty = w->lane % w->nt / w->tw, w->tx0 = w->lane % w->tw;
    return 1;
}

/* The segment's lane count from lane b of the block (to its tile row's end or the block's). */
static inline i64 SFX(wino_walk_run)(const SFX(wino_walk) *w, i64 b) {
    return w->tw - w->tx0 < w->nb - b ? w->tw - w->tx0 : w->nb - b;
}

/* Past the segment at lane b: the next one (without dividing; past the block's end when the
   block ended first). */
static inline void SFX(wino_walk_next)(SFX(wino_walk) *w, i64 *b) {
    *b += w->tw - w->tx0;
    w->tx0 = 0;
    if (++w->ty == w->th) {
        w->ty = 0;
        ++w->ch;
    }
}

/* Input tiles of tile rows [r0, r1) of channels [c0, c1): (B^T d B)[k] for the patch d of
   tile + 2 squared values at (tile ty - pt, tile tx - pl), zero outside. The patches'
   values are gathered tile-row segment by segment into (tile + 2)^2 scratch rows (the
   tiles whose columns are inside the image without bounds checks), then transformed. */
static inline void SFX(wino_input_chw)(int tile, const REAL *restrict x, i64 h, i64 wd,
                                       REAL *restrict v, i64 ks, i64 nt, i64 tw, i64 c0, i64 c1,
                                       i64 r0, i64 r1, i64 pt, i64 pl) {
    const int P = tile + 2;
    REAL d[36 * WTB], e[36 * WTB];
    const REAL *dp[36];
    for (int k = 0; k < P * P; k++) dp[k] = d + k * WTB;
    SFX(wino_walk) w = SFX(wino_walk_start)(nt, tw, c0, c1, r0, r1);
    while (SFX(wino_walk_block)(&w)) {
        for (i64 b = 0; b < w.nb; SFX(wino_walk_next)(&w, &b)) {
            i64 n = SFX(wino_walk_run)(&w, b), ch = w.ch, ty = w.ty, tx0 = w.tx0;
            i64 iy = tile * ty - pt, ix0 = tile * tx0 - pl;
            const REAL *rp[6]; /* the patch rows in the image, or NULL outside */
            for (int i = 0; i < P; i++) {
                i64 yy = iy + i;
                rp[i] = yy >= 0 && yy < h ? x + (ch * h + yy) * wd : 0;
            }
            /* A long segment: its tiles [qa, qb) whose columns are inside the image row by
               row (long unit-stride loops); the others (and a short segment's) tile by
               tile, checked. */
            i64 qa = 0, qb = 0;
            if (n >= 8) {
                qa = ix0 < 0 ? (-ix0 + tile - 1) / tile : 0;
                qb = wd - P - ix0 < 0 ? 0 : (wd - P - ix0) / tile + 1;
                if (qb > n) qb = n;
                if (qa > qb) qa = qb;
            }
            for (int i = 0; i < P && qa < qb; i++) {
                REAL *dst = d + i * P * WTB + b;
                if (!rp[i]) {
                    for (int j = 0; j < P; j++)
                        for (i64 q = qa; q < qb; q++) dst[j * WTB + q] = 0;
                    continue;
                }
                const REAL *src = rp[i] + ix0;
                for (i64 q = qa; q < qb; q++)
                    for (int j = 0; j < P; j++) dst[j * WTB + q] = src[tile * q + j];
            }
            for (int side = 0; side < 2; side++) /* before qa, from qb */
                for (i64 q = side ? qb : 0; q < (side ? n : qa); q++) {
                    i64 ix = ix0 + tile * q;
                    int inside = ix >= 0 && ix + P <= wd;
                    for (int i = 0; i < P; i++) {
                        REAL *dst = d + i * P * WTB + b + q;
                        const REAL *src = rp[i];
                        if (!src)
                            for (int j = 0; j < P; j++) dst[j * WTB] = 0;
                        else if (inside)
                            for (int j = 0; j < P; j++) dst[j * WTB] = src[ix + j];
                        else
                            for (int j = 0; j < P; j++)
                                dst[j * WTB] = ix + j >= 0 && ix + j < wd ? src[ix + j] : (REAL)0;
                    }
                }
        }
        SFX(wino_in_lanes)(tile, dp, v + w.lane, ks, w.nb, e, WTB);
    }
}

/* Output blocks A^T m A (tile x tile) of tile rows [r0, r1), channels [o0, o1), cut at the
   image's edge: transformed into scratch rows, then stored tile-row segment by segment. */
static inline void SFX(wino_output_chw)(int tile, const REAL *restrict m, i64 ks, i64 nt, i64 tw,
                                        REAL *restrict out, i64 oh, i64 ow, i64 o0, i64 o1, i64 r0,
                                        i64 r1) {
    REAL s[24 * WTB], bv[16 * WTB];
    SFX(wino_walk) w = SFX(wino_walk_start)(nt, tw, o0, o1, r0, r1);
    while (SFX(wino_walk_block)(&w)) {
        SFX(wino_out_lanes)(tile, m + w.lane, ks, w.nb, s, WTB, bv, tile * WTB, WTB, tile);
        for (i64 b = 0; b < w.nb; SFX(wino_walk_next)(&w, &b)) {
            i64 n = SFX(wino_walk_run)(&w, b), oc = w.ch, ty = w.ty, tx0 = w.tx0;
            i64 full = (ow - tile * tx0) / tile;  /* whole blocks */
            if (full > n) full = n;
            for (int i = 0; i < tile; i++) {
                i64 y = tile * ty + i;
                if (y >= oh) break;
                REAL *row = out + (oc * oh + y) * ow + tile * tx0;
                const REAL *e = bv + i * tile * WTB + b;
                for (i64 q = 0; q < full; q++)
                    for (int jj = 0; jj < tile; jj++) row[tile * q + jj] = e[jj * WTB + q];
                for (i64 q = full; q < n; q++)
                    for (int jj = 0; jj < tile && tile * (tx0 + q) + jj < ow; jj++)
                        row[tile * q + jj] = e[jj * WTB + q];
            }
        }
    }
}

/* The entry points of F(2x2, 3x3) (wino_input, wino_output) and F(4x4, 3x3) (wino4_...;
   winograd4.h: points 0, 1, -1, 2, -1/2, infinity). */
#define WINO_CHW_ENTRIES(stem, tile)                                                           \
    void SFX(stem##_input)(const REAL *restrict x, i64 h, i64 wd, REAL *restrict v, i64 ks,     \
                           i64 nt, i64 tw, i64 c0, i64 c1, i64 r0, i64 r1, i64 pt, i64 pl) {    \
        SFX(wino_input_chw)(tile, x, h, wd, v, ks, nt, tw, c0, c1, r0, r1, pt, pl);            \
    }                                                                                          \
    void SFX(stem##_output)(const REAL *restrict m, i64 ks, i64 nt, i64 tw, REAL *restrict out, \
                            i64 oh, i64 ow, i64 o0, i64 o1, i64 r0, i64 r1) {                   \
        SFX(wino_output_chw)(tile, m, ks, nt, tw, out, oh, ow, o0, o1, r0, r1);                \
    }
WINO_CHW_ENTRIES(wino, 2)
WINO_CHW_ENTRIES(wino4, 4)
#undef WINO_CHW_ENTRIES
#undef WTB

void SFX(epilogue)(REAL *restrict o, i64 oh, i64 ow, const REAL *p0, const REAL *p1, const REAL *p2,
                const REAL *p3, const i64 *strides, const i64 *codes, const i64 *swapped, i64 c0,
                i64 c1, i64 y0, i64 y1) {
    const REAL *ops[4] = {p0, p1, p2, p3};
    SFX(apply)(o, oh, ow, ops, strides, codes, swapped, c0, c1, y0, y1);
}


/* A rotation of rows (rotary position embeddings): o[r, j] = x[r, j] * a[r, j] + s * x[r, p]
   * b[r, j], the row's elements in runs [starts[k], starts[k + 1]) that read x from src[k] on
   with the sign sg[k] (rotate_half: two runs; an interleaved rotation: runs of one). a and b
   are broadcast: row r's first element at a + a_off[r], its j-th a_step elements on. Rows
   [r0, r1). The reference's operations in its order: x * a, the signed copy times b, their
   sum (a sign is exact), so its bits. */
void SFX(rotate_rows)(const REAL *restrict x, const REAL *a, const REAL *b, const i64 *a_off,
                      const i64 *b_off, i64 a_step, i64 b_step, const i64 *starts,
                      const i64 *src, const REAL *sg, i64 runs, REAL *restrict o, i64 d,
                      i64 r0, i64 r1) {
    for (i64 r = r0; r < r1; r++) {
        const REAL *xr = x + r * d, *ar = a + a_off[r], *br = b + b_off[r];
        REAL *orow = o + r * d;
        for (i64 k = 0; k < runs; k++) {
            const i64 j0 = starts[k], j1 = starts[k + 1];
            const REAL *g = xr + src[k] - j0;
            const REAL s = sg[k];
            if (a_step == 1 && b_step == 1) {
                for (i64 j = j0; j < j1; j++) orow[j] = xr[j] * ar[j] + (s * g[j]) * br[j];
            } else {
                for (i64 j = j0; j < j1; j++)
                    orow[j] = xr[j] * ar[j * a_step] + (s * g[j]) * br[j * b_step];
            }
        }
    }
}
