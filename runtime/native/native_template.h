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

static inline REAL SFX(pick)(REAL a, REAL b) { return (a > b || a != a) ? a : b; }  /* np.maximum */
static inline REAL SFX(pickmin)(REAL a, REAL b) { return (a < b || a != a) ? a : b; }  /* np.minimum */

/* One epilogue op on n elements: row[i] = op(row[i], src[i * s]) (operands swapped when
   asked); s == 0 broadcasts src[0]. */
static inline void SFX(apply_run)(REAL *restrict row, i64 n, const REAL *src, i64 s, i64 code,
                                 i64 swapped) {
    if (s == 0) {
        REAL v = src[0];
        switch (code * 2 + (swapped != 0)) {
        case 0: for (i64 i = 0; i < n; i++) row[i] = row[i] + v; break;
        case 1: for (i64 i = 0; i < n; i++) row[i] = v + row[i]; break;
        case 2: for (i64 i = 0; i < n; i++) row[i] = row[i] - v; break;
        case 3: for (i64 i = 0; i < n; i++) row[i] = v - row[i]; break;
        case 4: for (i64 i = 0; i < n; i++) row[i] = row[i] * v; break;
        case 5: for (i64 i = 0; i < n; i++) row[i] = v * row[i]; break;
        case 6: for (i64 i = 0; i < n; i++) row[i] = SFX(pick)(row[i], v); break;
        case 7: for (i64 i = 0; i < n; i++) row[i] = SFX(pick)(v, row[i]); break;
        case 8: for (i64 i = 0; i < n; i++) row[i] = SFX(pickmin)(row[i], v); break;
        default: for (i64 i = 0; i < n; i++) row[i] = SFX(pickmin)(v, row[i]); break;
        }
    } else if (s == 1) {
        switch (code * 2 + (swapped != 0)) {
        case 0: for (i64 i = 0; i < n; i++) row[i] = row[i] + src[i]; break;
        case 1: for (i64 i = 0; i < n; i++) row[i] = src[i] + row[i]; break;
        case 2: for (i64 i = 0; i < n; i++) row[i] = row[i] - src[i]; break;
        case 3: for (i64 i = 0; i < n; i++) row[i] = src[i] - row[i]; break;
        case 4: for (i64 i = 0; i < n; i++) row[i] = row[i] * src[i]; break;
        case 5: for (i64 i = 0; i < n; i++) row[i] = src[i] * row[i]; break;
        case 6: for (i64 i = 0; i < n; i++) row[i] = SFX(pick)(row[i], src[i]); break;
        case 7: for (i64 i = 0; i < n; i++) row[i] = SFX(pick)(src[i], row[i]); break;
        case 8: for (i64 i = 0; i < n; i++) row[i] = SFX(pickmin)(row[i], src[i]); break;
        default: for (i64 i = 0; i < n; i++) row[i] = SFX(pickmin)(src[i], row[i]); break;
        }
    } else {
        switch (code * 2 + (swapped != 0)) {
        case 0: for (i64 i = 0; i < n; i++) row[i] = row[i] + src[i * s]; break;
        case 1: for (i64 i = 0; i < n; i++) row[i] = src[i * s] + row[i]; break;
        case 2: for (i64 i = 0; i < n; i++) row[i] = row[i] - src[i * s]; break;
        case 3: for (i64 i = 0; i < n; i++) row[i] = src[i * s] - row[i]; break;
        case 4: for (i64 i = 0; i < n; i++) row[i] = row[i] * src[i * s]; break;
        case 5: for (i64 i = 0; i < n; i++) row[i] = src[i * s] * row[i]; break;
        case 6: for (i64 i = 0; i < n; i++) row[i] = SFX(pick)(row[i], src[i * s]); break;
        case 7: for (i64 i = 0; i < n; i++) row[i] = SFX(pick)(src[i * s], row[i]); break;
        case 8: for (i64 i = 0; i < n; i++) row[i] = SFX(pickmin)(row[i], src[i * s]); break;
        default: for (i64 i = 0; i < n; i++) row[i] = SFX(pickmin)(src[i * s], row[i]); break;
        }
    }
}

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

/* Winograd F(2x2, 3x3): input tiles of tile rows [r0, r1) of channels [c0, c1):
   v[k * ks + ch * nt + t] = (B^T d B)[k] for the 4x4 patch d at (2 ty - pt, 2 tx - pl), zero
   outside. */
void SFX(wino_input)(const REAL *restrict x, i64 h, i64 wd, REAL *restrict v, i64 ks, i64 nt,
                  i64 tw, i64 c0, i64 c1, i64 r0, i64 r1, i64 pt, i64 pl) {
    for (i64 ch = c0; ch < c1; ch++) {
        const REAL *xc = x + ch * h * wd;
        REAL *vc = v + ch * nt;
        for (i64 ty = r0; ty < r1; ty++) {
            i64 iy = 2 * ty - pt;
            int inside_y = iy >= 0 && iy + 3 < h;
            for (i64 tx = 0; tx < tw; tx++) {
                i64 ix = 2 * tx - pl;
                REAL d[4][4];
                if (inside_y && ix >= 0 && ix + 3 < wd) {
                    for (int i = 0; i < 4; i++)
                        for (int j = 0; j < 4; j++) d[i][j] = xc[(iy + i) * wd + ix + j];
                } else {
                    for (int i = 0; i < 4; i++)
                        for (int j = 0; j < 4; j++) {
                            i64 yy = iy + i, xx = ix + j;
                            d[i][j] = (yy >= 0 && yy < h && xx >= 0 && xx < wd)
                                ? xc[yy * wd + xx] : (REAL)0;
                        }
                }
                REAL e[4][4];
                for (int j = 0; j < 4; j++) {
                    e[0][j] = d[0][j] - d[2][j];
                    e[1][j] = d[1][j] + d[2][j];
                    e[2][j] = d[2][j] - d[1][j];
                    e[3][j] = d[1][j] - d[3][j];
                }
                i64 t = ty * tw + tx;
                for (int i = 0; i < 4; i++) {
                    REAL *o = vc + (4 * i) * ks + t;
                    o[0] = e[i][0] - e[i][2];
                    o[ks] = e[i][1] + e[i][2];
                    o[2 * ks] = e[i][2] - e[i][1];
                    o[3 * ks] = e[i][1] - e[i][3];
                }
            }
        }
    }
}

/* Winograd F(2x2, 3x3): output 2x2 blocks (A^T m A) of tile rows [r0, r1), channels
   [o0, o1), from m[k * ks + oc * nt + t] into o[oc][oh][ow] (blocks cut at the image's
   edge). */
void SFX(wino_output)(const REAL *restrict m, i64 ks, i64 nt, i64 tw, REAL *restrict out,
                   i64 oh, i64 ow, i64 o0, i64 o1, i64 r0, i64 r1) {
    for (i64 oc = o0; oc < o1; oc++) {
        const REAL *mc = m + oc * nt;
        REAL *dst = out + oc * oh * ow;
        for (i64 ty = r0; ty < r1; ty++)
            for (i64 tx = 0; tx < tw; tx++) {
                i64 t = ty * tw + tx;
                REAL s[2][4];
                for (int j = 0; j < 4; j++) {
                    REAL a0 = mc[j * ks + t], a1 = mc[(4 + j) * ks + t];
                    REAL a2 = mc[(8 + j) * ks + t], a3 = mc[(12 + j) * ks + t];
                    s[0][j] = a0 + a1 + a2;
                    s[1][j] = a1 - a2 - a3;
                }
                i64 y = 2 * ty, xo = 2 * tx;
                for (int i = 0; i < 2; i++) {
                    if (y + i >= oh) break;
                    REAL *row = dst + (y + i) * ow + xo;
                    row[0] = s[i][0] + s[i][1] + s[i][2];
                    if (xo + 1 < ow) row[1] = s[i][1] - s[i][2] - s[i][3];
                }
            }
    }
}

/* Winograd F(4x4, 3x3): as wino_input with 6x6 patches at (4 ty - pt, 4 tx - pl) and 36
   matrices (points 0, 1, -1, 2, -1/2, infinity: winograd4.h). Blocks of up to WTB consecutive tiles (across
   tile rows) at a time, arranged so the arithmetic runs over tiles with unit stride
   (vectorised): the patches' 36 values gathered tile by tile into 36 rows (zero padding),
   transformed down the patch rows, then across. Each value takes the same operations in
   the same order as one patch at a time, so the bits are the same. */
#include "winograd4.h"
#define WTB 128
void SFX(wino4_input)(const REAL *restrict x, i64 h, i64 wd, REAL *restrict v, i64 ks, i64 nt,
                   i64 tw, i64 c0, i64 c1, i64 r0, i64 r1, i64 pt, i64 pl) {
    REAL row[4 * WTB + 8], d[6][6][WTB], e[6][6][WTB];
    i64 first = r0 * tw, last = r1 * tw;
    for (i64 ch = c0; ch < c1; ch++) {
        const REAL *xc = x + ch * h * wd;
        REAL *vc = v + ch * nt;
        for (i64 b0 = first; b0 < last; b0 += WTB) {
            i64 nb = last - b0 < WTB ? last - b0 : WTB;
            /* Gather: tile-row segments [b, b + n) of the block. */
            for (i64 b = b0; b < b0 + nb;) {
                i64 ty = b / tw, tx0 = b % tw;
                i64 n = tw - tx0 < b0 + nb - b ? tw - tx0 : b0 + nb - b;
                i64 iy = 4 * ty - pt, ix0 = 4 * tx0 - pl, width = 4 * n + 2, off = b - b0;
                for (int i = 0; i < 6; i++) {
                    i64 yy = iy + i;
                    if (yy < 0 || yy >= h) {
                        for (i64 q = 0; q < width; q++) row[q] = 0;
                    } else {
                        const REAL *src = xc + yy * wd;
                        for (i64 q = 0; q < width; q++) {
                            i64 xx = ix0 + q;
                            row[q] = (xx >= 0 && xx < wd) ? src[xx] : (REAL)0;
                        }
                    }
                    for (int j = 0; j < 6; j++) {
                        REAL *dst = d[i][j] + off;
                        for (i64 t = 0; t < n; t++) dst[t] = row[4 * t + j];
                    }
                }
                b += n;
            }
            for (int j = 0; j < 6; j++) {
                const REAL *d0 = d[0][j], *d1 = d[1][j], *d2 = d[2][j];
                const REAL *d3 = d[3][j], *d4 = d[4][j], *d5 = d[5][j];
#pragma GCC ivdep
                for (i64 t = 0; t < nb; t++) {
                    WINO4_IN(e[0][j][t], e[1][j][t], e[2][j][t], e[3][j][t], e[4][j][t], e[5][j][t],
                             d0[t], d1[t], d2[t], d3[t], d4[t], d5[t]);
                }
            }
            for (int i = 0; i < 6; i++) {
                const REAL *q0 = e[i][0], *q1 = e[i][1], *q2 = e[i][2];
                const REAL *q3 = e[i][3], *q4 = e[i][4], *q5 = e[i][5];
                REAL *o0 = vc + (6 * i) * ks + b0, *o1 = o0 + ks, *o2 = o1 + ks;
                REAL *o3 = o2 + ks, *o4 = o3 + ks, *o5 = o4 + ks;
#pragma GCC ivdep
                for (i64 t = 0; t < nb; t++) {
                    WINO4_IN(o0[t], o1[t], o2[t], o3[t], o4[t], o5[t], q0[t], q1[t], q2[t], q3[t], q4[t], q5[t]);
                }
            }
        }
    }
}

/* Winograd F(4x4, 3x3): 4x4 output blocks A^T m A from 36 matrices, as wino_output; in
   blocks of up to WTB consecutive tiles, down the 6 rows then across, each loop over tiles
   with unit stride (the same operations per value as one tile at a time), then stored. */
void SFX(wino4_output)(const REAL *restrict m, i64 ks, i64 nt, i64 tw, REAL *restrict out,
                    i64 oh, i64 ow, i64 o0, i64 o1, i64 r0, i64 r1) {
    REAL sv[4][6][WTB], bv[4][4][WTB];
    i64 first = r0 * tw, last = r1 * tw;
    for (i64 oc = o0; oc < o1; oc++) {
        const REAL *mc = m + oc * nt;
        REAL *dst = out + oc * oh * ow;
        for (i64 b0 = first; b0 < last; b0 += WTB) {
            i64 nb = last - b0 < WTB ? last - b0 : WTB;
            for (int j = 0; j < 6; j++) {
                const REAL *a0 = mc + j * ks + b0, *a1 = a0 + 6 * ks, *a2 = a1 + 6 * ks;
                const REAL *a3 = a2 + 6 * ks, *a4 = a3 + 6 * ks, *a5 = a4 + 6 * ks;
#pragma GCC ivdep
                for (i64 t = 0; t < nb; t++) {
                    WINO4_OUT(sv[0][j][t], sv[1][j][t], sv[2][j][t], sv[3][j][t], a0[t], a1[t], a2[t], a3[t], a4[t], a5[t]);
                }
            }
            for (int i = 0; i < 4; i++) {
                const REAL *c0 = sv[i][0], *c1 = sv[i][1], *c2 = sv[i][2];
                const REAL *c3 = sv[i][3], *c4 = sv[i][4], *c5 = sv[i][5];
#pragma GCC ivdep
                for (i64 t = 0; t < nb; t++) {
                    WINO4_OUT(bv[i][0][t], bv[i][1][t], bv[i][2][t], bv[i][3][t], c0[t], c1[t], c2[t], c3[t], c4[t], c5[t]);
                }
            }
            for (i64 b = b0; b < b0 + nb;) {
                i64 ty = b / tw, tx0 = b % tw;
                i64 n = tw - tx0 < b0 + nb - b ? tw - tx0 : b0 + nb - b;
                i64 off = b - b0, full = (ow - 4 * tx0) / 4;  /* whole 4-wide blocks */
                if (full > n) full = n;
                for (int i = 0; i < 4; i++) {
                    i64 y = 4 * ty + i;
                    if (y >= oh) break;
                    REAL *row = dst + y * ow + 4 * tx0;
                    const REAL *e0 = bv[i][0] + off, *e1 = bv[i][1] + off;
                    const REAL *e2 = bv[i][2] + off, *e3 = bv[i][3] + off;
                    for (i64 t = 0; t < full; t++) {
                        row[4 * t] = e0[t];
                        row[4 * t + 1] = e1[t];
                        row[4 * t + 2] = e2[t];
                        row[4 * t + 3] = e3[t];
                    }
                    for (i64 t = full; t < n; t++)
                        for (int jj = 0; jj < 4 && 4 * (tx0 + t) + jj < ow; jj++)
                            row[4 * t + jj] = bv[i][jj][off + t];
                }
                b += n;
            }
        }
    }
}

void SFX(epilogue)(REAL *restrict o, i64 oh, i64 ow, const REAL *p0, const REAL *p1, const REAL *p2,
                const REAL *p3, const i64 *strides, const i64 *codes, const i64 *swapped, i64 c0,
                i64 c1, i64 y0, i64 y1) {
    const REAL *ops[4] = {p0, p1, p2, p3};
    SFX(apply)(o, oh, ow, ops, strides, codes, swapped, c0, c1, y0, y1);
}
