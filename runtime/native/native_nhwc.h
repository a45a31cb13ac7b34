/*
 * Channels-last (NHWC) Winograd for one floating type REAL (names through SFX(name)),
 * included by native_kernels.c beside native_template.h and by the oneDNN shim, each after
 * winograd_core.h for the same REAL (the transforms themselves).
 *
 * Winograd F(2x2, 3x3) and F(4x4, 3x3) on a channels-last image x[h][wd][xs] (NHWC, or one
 * channel block of NCHW{c}c): the transformed input is (tile + 2)^2 matrices of tiles x
 * channels, v[k * ks + t * vs + ch], so the products are v[k] (tiles x C) times u[k] (C x O)
 * into m[k] (tiles x O, m[k * ks + t * ms + oc]), and the output transform writes
 * out[y][x][os] directly. A blocked layout passes one block's image and the matching column
 * offset of v or m; NHWC passes xs = vs = C and ms = os = O. A lane of winograd_core.h is a
 * channel: up to NHWC_CB channels of one tile at a time, read from and written to the image
 * in place (unit stride, vectorised; no transposes to channels first and back). Every value
 * takes the same operations in the same order as the channels-first kernels, so the
 * transformed tiles are the same bits.
 */

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

/* Input: (tile + 2)^2 patches at (tile ty - pt, tile tx - pl), tile rows [r0, r1), channels
   [c0, c1); v holds the tiles from tile row rb on (0: the whole image; a band of rows, as the
   oneDNN backend runs a convolution in bands to bound its workspace, passes its first row). */
static inline void SFX(wino_input_hwc)(int tile, const REAL *restrict x, i64 h, i64 wd, i64 xs,
                                       REAL *restrict v, i64 ks, i64 vs, i64 tw, i64 c0, i64 c1,
                                       i64 r0, i64 r1, i64 rb, i64 pt, i64 pl) {
    REAL zero[NHWC_CB] = {0}, e[36 * NHWC_CB];
    const REAL *p[36];
    for (i64 ty = r0; ty < r1; ty++)
        for (i64 tx = 0; tx < tw; tx++) {
            i64 t = (ty - rb) * tw + tx;
            for (i64 cb = c0; cb < c1; cb += NHWC_CB) {
                i64 n = c1 - cb < NHWC_CB ? c1 - cb : NHWC_CB;
                SFX(nhwc_patch)(x, h, wd, xs, tile * ty - pt, tile * tx - pl, cb, tile + 2, zero, p);
                SFX(wino_in_lanes)(tile, p, v + t * vs + cb, ks, n, e, NHWC_CB);
            }
        }
}

/* Output: tile x tile blocks A^T m A of tile rows [r0, r1), channels [o0, o1), from
   m[k * ks + t * ms + oc] (m holding the tiles from tile row rb on, as v above) into
   out[oh][ow][os] (blocks cut at the image's edge: the rows past it are not computed; a block
   cut on the right goes through scratch). */
static inline void SFX(wino_output_hwc)(int tile, const REAL *restrict m, i64 ks, i64 ms, i64 tw,
                                        REAL *restrict out, i64 oh, i64 ow, i64 os, i64 o0, i64 o1,
                                        i64 r0, i64 r1, i64 rb) {
    REAL s[24 * NHWC_CB], cut[16 * NHWC_CB];
    for (i64 ty = r0; ty < r1; ty++)
        for (i64 tx = 0; tx < tw; tx++) {
            i64 t = (ty - rb) * tw + tx, y0 = tile * ty, x0 = tile * tx;
            int rows = oh - y0 < tile ? (int)(oh - y0) : tile;
            int cols = ow - x0 < tile ? (int)(ow - x0) : tile;
            for (i64 ob = o0; ob < o1; ob += NHWC_CB) {
                i64 n = o1 - ob < NHWC_CB ? o1 - ob : NHWC_CB;
                REAL *y = out + (y0 * ow + x0) * os + ob;
                if (cols == tile) {
                    SFX(wino_out_lanes)(tile, m + t * ms + ob, ks, n, s, NHWC_CB, y, ow * os, os, rows);
                    continue;
                }
                SFX(wino_out_lanes)(tile, m + t * ms + ob, ks, n, s, NHWC_CB, cut, tile * NHWC_CB,
                                    NHWC_CB, rows);
                for (int i = 0; i < rows; i++)
                    for (int j = 0; j < cols; j++)
                        for (i64 q = 0; q < n; q++)
                            y[(i * ow + j) * os + q] = cut[(i * tile + j) * NHWC_CB + q];
            }
        }
}

/* The entry points of F(2x2, 3x3) (wino_input_nhwc, wino_output_nhwc) and F(4x4, 3x3)
   (wino4_..._nhwc). */
#define WINO_HWC_ENTRIES(stem, tile)                                                           \
    void SFX(stem##_input_nhwc)(const REAL *restrict x, i64 h, i64 wd, i64 xs, REAL *restrict v, \
                                i64 ks, i64 vs, i64 tw, i64 c0, i64 c1, i64 r0, i64 r1, i64 pt, \
                                i64 pl) {                                                      \
        SFX(wino_input_hwc)(tile, x, h, wd, xs, v, ks, vs, tw, c0, c1, r0, r1, 0, pt, pl);     \
    }                                                                                          \
    void SFX(stem##_output_nhwc)(const REAL *restrict m, i64 ks, i64 ms, i64 tw,                \
                                 REAL *restrict out, i64 oh, i64 ow, i64 os, i64 o0, i64 o1,    \
                                 i64 r0, i64 r1) {                                             \
        SFX(wino_output_hwc)(tile, m, ks, ms, tw, out, oh, ow, os, o0, o1, r0, r1, 0);         \
    }
WINO_HWC_ENTRIES(wino, 2)
WINO_HWC_ENTRIES(wino4, 4)
#undef WINO_HWC_ENTRIES
