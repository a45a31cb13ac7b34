/* Winograd F(2x2, 3x3) and F(4x4, 3x3): the one implementation of the input and output
   transforms, over "lanes". A lane is one independent transform (one tile of one channel);
   the core transforms n lanes at once, each patch value of all n lanes contiguous, so every
   loop runs over lanes with unit stride (vectorised). The entry points differ only in what a
   lane is and where its values live:
     - channels first (native_template.h, x[c][h][w], v[k][c][tile]): a lane is a tile of a
       channel (consecutive lanes run over a channel's tiles, then the next channel's); the
       entry point gathers a block of tiles' patches into scratch rows (zero padding) and
       scatters the output blocks from scratch back into the image rows;
     - channels last (native_nhwc.h, x[h][w][c], v[k][tile][c], also the oneDNN shim): a
       lane is a channel of one tile; the patch values are pointers straight into the image
       (or a zero row) and the output blocks are written straight to the image (strides:
       a row, a pixel).
   Between the two transforms the (tile + 2)^2 matrix products run elsewhere (BLAS in the
   executor, oneDNN in the shim).

   Every value takes the same operations in the same order whatever the layout and the lane
   count, so both layouts give the same bits (build with -ffp-contract=off: a fused
   multiply-add would change them).

   Portable C99: the includer defines REAL (float or double) and SFX(name) (the function
   names for that type), and passes all scratch (nothing is allocated here); int64_t
   counts and strides in elements. Include it once per REAL. */

#include <stdint.h>

#include "winograd4.h"

#ifndef XR_WINOGRAD2_H
#define XR_WINOGRAD2_H
/* F(2x2, 3x3)'s one-dimensional transforms (points 0, 1, -1, infinity):
   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], A^T = [1 1 1 0; 0 1 -1 -1]. */
#define WINO2_IN(o0, o1, o2, o3, x0, x1, x2, x3)                                               \
    do {                                                                                       \
        REAL d0_ = (x0), d1_ = (x1), d2_ = (x2), d3_ = (x3);                                   \
        (o0) = d0_ - d2_;                                                                      \
        (o1) = d1_ + d2_;                                                                      \
        (o2) = d2_ - d1_;                                                                      \
        (o3) = d1_ - d3_;                                                                      \
    } while (0)

#define WINO2_OUT(y0, y1, m0, m1, m2, m3)                                                      \
    do {                                                                                       \
        REAL m1_ = (m1), m2_ = (m2);                                                           \
        (y0) = (m0) + m1_ + m2_;                                                               \
        (y1) = m1_ - m2_ - (m3);                                                               \
    } while (0)
#endif

/* Input transform of n lanes, F(2x2): d[4 i + j] points at patch value (i, j) of the n
   lanes; (B^T d B)[k] of lane q goes to v[k * ks + q]. e: 16 scratch rows es >= n values
   apart (a constant es makes better code). Down the patch rows, then across. */
static inline void SFX(wino2_in_lanes)(const REAL *const *d, REAL *restrict v, int64_t ks,
                                       int64_t n, REAL *restrict e, int64_t es) {
    for (int j = 0; j < 4; j++) {
        const REAL *d0 = d[j], *d1 = d[4 + j], *d2 = d[8 + j], *d3 = d[12 + j];
        REAL *e0 = e + j * es, *e1 = e + (4 + j) * es, *e2 = e + (8 + j) * es, *e3 = e + (12 + j) * es;
#pragma GCC ivdep
        for (int64_t q = 0; q < n; q++) WINO2_IN(e0[q], e1[q], e2[q], e3[q], d0[q], d1[q], d2[q], d3[q]);
    }
    for (int i = 0; i < 4; i++) {
        const REAL *q0 = e + 4 * i * es, *q1 = q0 + es, *q2 = q1 + es, *q3 = q2 + es;
        REAL *o0 = v + 4 * i * ks, *o1 = o0 + ks, *o2 = o1 + ks, *o3 = o2 + ks;
#pragma GCC ivdep
        for (int64_t q = 0; q < n; q++) WINO2_IN(o0[q], o1[q], o2[q], o3[q], q0[q], q1[q], q2[q], q3[q]);
    }
}

/* Input transform of n lanes, F(4x4): as wino2_in_lanes with 6x6 patches (d[6 i + j]), 36
   matrices and 36 scratch rows. */
static inline void SFX(wino4_in_lanes)(const REAL *const *d, REAL *restrict v, int64_t ks,
                                       int64_t n, REAL *restrict e, int64_t es) {
    for (int j = 0; j < 6; j++) {
        const REAL *d0 = d[j], *d1 = d[6 + j], *d2 = d[12 + j];
        const REAL *d3 = d[18 + j], *d4 = d[24 + j], *d5 = d[30 + j];
        REAL *e0 = e + j * es, *e1 = e0 + 6 * es, *e2 = e1 + 6 * es;
        REAL *e3 = e2 + 6 * es, *e4 = e3 + 6 * es, *e5 = e4 + 6 * es;
#pragma GCC ivdep
        for (int64_t q = 0; q < n; q++) {
            WINO4_IN(e0[q], e1[q], e2[q], e3[q], e4[q], e5[q], d0[q], d1[q], d2[q], d3[q], d4[q], d5[q]);
        }
    }
    for (int i = 0; i < 6; i++) {
        const REAL *q0 = e + 6 * i * es, *q1 = q0 + es, *q2 = q1 + es;
        const REAL *q3 = q2 + es, *q4 = q3 + es, *q5 = q4 + es;
        REAL *o0 = v + 6 * i * ks, *o1 = o0 + ks, *o2 = o1 + ks;
        REAL *o3 = o2 + ks, *o4 = o3 + ks, *o5 = o4 + ks;
#pragma GCC ivdep
        for (int64_t q = 0; q < n; q++) {
            WINO4_IN(o0[q], o1[q], o2[q], o3[q], o4[q], o5[q], q0[q], q1[q], q2[q], q3[q], q4[q], q5[q]);
        }
    }
}

/* Output transform of n lanes, F(2x2): the products m[k * ks + q] (16 matrices) give the 2x2
   block A^T m A, whose value (i, j) of lane q goes to y[i * ys + j * yx + q], for the block
   rows i < rows only (the others are not computed: cut at the image's edge). s: 8 scratch
   rows es >= n values apart. */
static inline void SFX(wino2_out_lanes)(const REAL *m, int64_t ks, int64_t n, REAL *restrict s,
                                        int64_t es, REAL *restrict y, int64_t ys, int64_t yx,
                                        int rows) {
    for (int j = 0; j < 4; j++) {
        const REAL *a0 = m + j * ks, *a1 = a0 + 4 * ks, *a2 = a1 + 4 * ks, *a3 = a2 + 4 * ks;
        REAL *s0 = s + j * es, *s1 = s + (4 + j) * es;
#pragma GCC ivdep
        for (int64_t q = 0; q < n; q++) WINO2_OUT(s0[q], s1[q], a0[q], a1[q], a2[q], a3[q]);
    }
    for (int i = 0; i < rows; i++) {
        const REAL *c0 = s + 4 * i * es, *c1 = c0 + es, *c2 = c1 + es, *c3 = c2 + es;
        REAL *y0 = y + i * ys, *y1 = y0 + yx;
#pragma GCC ivdep
        for (int64_t q = 0; q < n; q++) WINO2_OUT(y0[q], y1[q], c0[q], c1[q], c2[q], c3[q]);
    }
}

/* Output transform of n lanes, F(4x4): as wino2_out_lanes with 36 matrices, 4x4 blocks and
   24 scratch rows. */
static inline void SFX(wino4_out_lanes)(const REAL *m, int64_t ks, int64_t n, REAL *restrict s,
                                        int64_t es, REAL *restrict y, int64_t ys, int64_t yx,
                                        int rows) {
    for (int j = 0; j < 6; j++) {
        const REAL *a0 = m + j * ks, *a1 = a0 + 6 * ks, *a2 = a1 + 6 * ks;
        const REAL *a3 = a2 + 6 * ks, *a4 = a3 + 6 * ks, *a5 = a4 + 6 * ks;
        REAL *s0 = s + j * es, *s1 = s0 + 6 * es, *s2 = s1 + 6 * es, *s3 = s2 + 6 * es;
#pragma GCC ivdep
        for (int64_t q = 0; q < n; q++) {
            WINO4_OUT(s0[q], s1[q], s2[q], s3[q], a0[q], a1[q], a2[q], a3[q], a4[q], a5[q]);
        }
    }
    for (int i = 0; i < rows; i++) {
        const REAL *c0 = s + 6 * i * es, *c1 = c0 + es, *c2 = c1 + es;
        const REAL *c3 = c2 + es, *c4 = c3 + es, *c5 = c4 + es;
        REAL *y0 = y + i * ys, *y1 = y0 + yx, *y2 = y1 + yx, *y3 = y2 + yx;
#pragma GCC ivdep
        for (int64_t q = 0; q < n; q++) {
            WINO4_OUT(y0[q], y1[q], y2[q], y3[q], c0[q], c1[q], c2[q], c3[q], c4[q], c5[q]);
        }
    }
}

/* Either tile size (2 or 4; a constant where it is inlined). */
static inline void SFX(wino_in_lanes)(int tile, const REAL *const *d, REAL *restrict v, int64_t ks,
                                      int64_t n, REAL *restrict e, int64_t es) {
    if (tile == 2) SFX(wino2_in_lanes)(d, v, ks, n, e, es);
    else SFX(wino4_in_lanes)(d, v, ks, n, e, es);
}

static inline void SFX(wino_out_lanes)(int tile, const REAL *m, int64_t ks, int64_t n,
                                       REAL *restrict s, int64_t es, REAL *restrict y, int64_t ys,
                                       int64_t yx, int rows) {
    if (tile == 2) SFX(wino2_out_lanes)(m, ks, n, s, es, y, ys, yx, rows);
    else SFX(wino4_out_lanes)(m, ks, n, s, es, y, ys, yx, rows);
}
