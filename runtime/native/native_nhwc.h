/*
 * Channels-last (NHWC) loop kernels for one floating type REAL (names through SFX(name)),
 * included by native_kernels.c beside native_template.h.
 *
 * Winograd F(2x2, 3x3) and F(4x4, 3x3) on a channels-last image x[h][wd][xs] (NHWC, or one
 * channel block of NCHW{c}c): the transformed input is (tile + 2)^2 matrices of tiles x
 * channels, v[k * ks + t * vs + ch], so the products are v[k] (tiles x C) times u[k] (C x O)
 * into m[k] (tiles x O, m[k * ks + t * ms + oc]), and the output transform writes
 * out[y][x][os] directly. A blocked layout passes one block's image and the matching column
 * offset of v or m; NHWC passes xs = vs = C and ms = os = O. Channels are the innermost loop everywhere (unit stride, vectorised):
 * no transposes to channels first and back. Every value takes the same operations in the
 * same order as the channels-first kernels, so the transformed tiles are the same bits.
 */

#include "winograd4.h"

#define NHWC_CB 64 /* channels per step: the 36 rows of a 6x6 patch stay in L1 */

/* Pointers to the NHWC patch of size P at (iy, ix): each tap's channel run [cb, cb + n), or
   the zero row outside the image. */
static inline void SFX(nhwc_patch)(const REAL *x, i64 h, i64 wd, i64 xs, i64 iy, i64 ix, i64 cb,
                                   int P, const REAL *zero, const REAL **p) {
    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++) {
            i64 yy = iy + i, xx = ix + j;
            p[i * P + j] = (yy >= 0 && yy < h && xx >= 0 && xx < wd) ? x + (yy * wd + xx) * xs + cb
                                                                      : zero;
        }
}

/* F(2x2, 3x3) input: 4x4 patches at (2 ty - pt, 2 tx - pl), tile rows [r0, r1), channels
   [c0, c1). */
void SFX(wino_input_nhwc)(const REAL *restrict x, i64 h, i64 wd, i64 xs, REAL *restrict v, i64 ks,
                          i64 vs, i64 tw, i64 c0, i64 c1, i64 r0, i64 r1, i64 pt, i64 pl) {
    REAL zero[NHWC_CB] = {0}, e[4][4][NHWC_CB];
    const REAL *p[16];
    for (i64 ty = r0; ty < r1; ty++)
        for (i64 tx = 0; tx < tw; tx++) {
            i64 t = ty * tw + tx;
            for (i64 cb = c0; cb < c1; cb += NHWC_CB) {
                i64 n = c1 - cb < NHWC_CB ? c1 - cb : NHWC_CB;
                SFX(nhwc_patch)(x, h, wd, xs, 2 * ty - pt, 2 * tx - pl, cb, 4, zero, p);
                for (int j = 0; j < 4; j++) {
                    const REAL *d0 = p[j], *d1 = p[4 + j], *d2 = p[8 + j], *d3 = p[12 + j];
                    for (i64 q = 0; q < n; q++) {
                        e[0][j][q] = d0[q] - d2[q];
                        e[1][j][q] = d1[q] + d2[q];
                        e[2][j][q] = d2[q] - d1[q];
                        e[3][j][q] = d1[q] - d3[q];
                    }
                }
                for (int i = 0; i < 4; i++) {
                    REAL *o0 = v + (4 * i) * ks + t * vs + cb, *o1 = o0 + ks, *o2 = o1 + ks,
                         *o3 = o2 + ks;
                    const REAL *q0 = e[i][0], *q1 = e[i][1], *q2 = e[i][2], *q3 = e[i][3];
                    for (i64 q = 0; q < n; q++) {
                        o0[q] = q0[q] - q2[q];
                        o1[q] = q1[q] + q2[q];
                        o2[q] = q2[q] - q1[q];
                        o3[q] = q1[q] - q3[q];
                    }
                }
            }
        }
}

/* F(2x2, 3x3) output: 2x2 blocks A^T m A of tile rows [r0, r1), channels [o0, o1), from
   m[k * ks + t * ms + oc] into out[oh][ow][os] (blocks cut at the image's edge). */
void SFX(wino_output_nhwc)(const REAL *restrict m, i64 ks, i64 ms, i64 tw, REAL *restrict out,
                           i64 oh, i64 ow, i64 os, i64 o0, i64 o1, i64 r0, i64 r1) {
    REAL s[2][4][NHWC_CB];
    for (i64 ty = r0; ty < r1; ty++)
        for (i64 tx = 0; tx < tw; tx++) {
            i64 t = ty * tw + tx, y = 2 * ty, xo = 2 * tx;
            for (i64 ob = o0; ob < o1; ob += NHWC_CB) {
                i64 n = o1 - ob < NHWC_CB ? o1 - ob : NHWC_CB;
                for (int j = 0; j < 4; j++) {
                    const REAL *a0 = m + j * ks + t * ms + ob, *a1 = a0 + 4 * ks,
                               *a2 = a1 + 4 * ks, *a3 = a2 + 4 * ks;
                    for (i64 q = 0; q < n; q++) {
                        s[0][j][q] = a0[q] + a1[q] + a2[q];
                        s[1][j][q] = a1[q] - a2[q] - a3[q];
                    }
                }
                for (int i = 0; i < 2 && y + i < oh; i++) {
                    REAL *row = out + ((y + i) * ow + xo) * os + ob;
                    const REAL *c0 = s[i][0], *c1 = s[i][1], *c2 = s[i][2], *c3 = s[i][3];
                    for (i64 q = 0; q < n; q++) row[q] = c0[q] + c1[q] + c2[q];
                    if (xo + 1 < ow)
                        for (i64 q = 0; q < n; q++) row[os + q] = c1[q] - c2[q] - c3[q];
                }
            }
        }
}

/* F(4x4, 3x3) input: 6x6 patches at (4 ty - pt, 4 tx - pl), down the patch rows, then
   across. */
void SFX(wino4_input_nhwc)(const REAL *restrict x, i64 h, i64 wd, i64 xs, REAL *restrict v, i64 ks,
                           i64 vs, i64 tw, i64 c0, i64 c1, i64 r0, i64 r1, i64 pt, i64 pl) {
    REAL zero[NHWC_CB] = {0}, e[6][6][NHWC_CB];
    const REAL *p[36];
    for (i64 ty = r0; ty < r1; ty++)
        for (i64 tx = 0; tx < tw; tx++) {
            i64 t = ty * tw + tx;
            for (i64 cb = c0; cb < c1; cb += NHWC_CB) {
                i64 n = c1 - cb < NHWC_CB ? c1 - cb : NHWC_CB;
                SFX(nhwc_patch)(x, h, wd, xs, 4 * ty - pt, 4 * tx - pl, cb, 6, zero, p);
                for (int j = 0; j < 6; j++) {
                    const REAL *d0 = p[j], *d1 = p[6 + j], *d2 = p[12 + j];
                    const REAL *d3 = p[18 + j], *d4 = p[24 + j], *d5 = p[30 + j];
#pragma GCC ivdep
                    for (i64 q = 0; q < n; q++) {
                        WINO4_IN(e[0][j][q], e[1][j][q], e[2][j][q], e[3][j][q], e[4][j][q], e[5][j][q],
                                 d0[q], d1[q], d2[q], d3[q], d4[q], d5[q]);
                    }
                }
                for (int i = 0; i < 6; i++) {
                    const REAL *q0 = e[i][0], *q1 = e[i][1], *q2 = e[i][2];
                    const REAL *q3 = e[i][3], *q4 = e[i][4], *q5 = e[i][5];
                    REAL *w0 = v + (6 * i) * ks + t * vs + cb, *w1 = w0 + ks, *w2 = w1 + ks;
                    REAL *w3 = w2 + ks, *w4 = w3 + ks, *w5 = w4 + ks;
#pragma GCC ivdep
                    for (i64 q = 0; q < n; q++) {
                        WINO4_IN(w0[q], w1[q], w2[q], w3[q], w4[q], w5[q], q0[q], q1[q], q2[q], q3[q], q4[q], q5[q]);
                    }
                }
            }
        }
}

/* F(4x4, 3x3) output: 4x4 blocks A^T m A, down the 6 rows, then across, each block row
   stored column by column (cut at the image's edge). */
void SFX(wino4_output_nhwc)(const REAL *restrict m, i64 ks, i64 ms, i64 tw, REAL *restrict out,
                            i64 oh, i64 ow, i64 os, i64 o0, i64 o1, i64 r0, i64 r1) {
    REAL s[4][6][NHWC_CB];
    for (i64 ty = r0; ty < r1; ty++)
        for (i64 tx = 0; tx < tw; tx++) {
            i64 t = ty * tw + tx, y = 4 * ty, xo = 4 * tx;
            for (i64 ob = o0; ob < o1; ob += NHWC_CB) {
                i64 n = o1 - ob < NHWC_CB ? o1 - ob : NHWC_CB;
                for (int j = 0; j < 6; j++) {
                    const REAL *a0 = m + j * ks + t * ms + ob, *a1 = a0 + 6 * ks;
                    const REAL *a2 = a1 + 6 * ks, *a3 = a2 + 6 * ks;
                    const REAL *a4 = a3 + 6 * ks, *a5 = a4 + 6 * ks;
#pragma GCC ivdep
                    for (i64 q = 0; q < n; q++) {
                        WINO4_OUT(s[0][j][q], s[1][j][q], s[2][j][q], s[3][j][q], a0[q], a1[q], a2[q], a3[q], a4[q], a5[q]);
                    }
                }
                for (int i = 0; i < 4 && y + i < oh; i++) {
                    const REAL *c0 = s[i][0], *c1 = s[i][1], *c2 = s[i][2];
                    const REAL *c3 = s[i][3], *c4 = s[i][4], *c5 = s[i][5];
                    REAL *row = out + ((y + i) * ow + xo) * os + ob;
                    int cols = ow - xo < 4 ? (int)(ow - xo) : 4;
                    REAL *b0 = row, *b1 = row + os, *b2 = row + 2 * os, *b3 = row + 3 * os;
                    if (cols == 4) {
#pragma GCC ivdep
                        for (i64 q = 0; q < n; q++) {
                            WINO4_OUT(b0[q], b1[q], b2[q], b3[q], c0[q], c1[q], c2[q], c3[q], c4[q], c5[q]);
                        }
                    } else {
                        for (i64 q = 0; q < n; q++) {
                            REAL r[4];
                            WINO4_OUT(r[0], r[1], r[2], r[3], c0[q], c1[q], c2[q], c3[q], c4[q], c5[q]);
                            for (int j = 0; j < cols; j++) row[j * os + q] = r[j];
                        }
                    }
                }
            }
        }
}
