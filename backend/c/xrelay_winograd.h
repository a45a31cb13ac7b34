/*
 * xrelay_winograd.h: Winograd F(4x4, 3x3) for xrelay's C target, the C of
 * nn.contrib_conv2d_winograd_without_weight_transform on channel-blocked data (NCHW{ib}c in,
 * NCHW{ob}c out, ob a multiple of 8) with weights transformed at build time.
 *
 * The input and output transforms are xrelay's own (winograd_core.h and winograd4.h, shipped
 * beside this file: the native engine's and the oneDNN shim's, the same points and the same
 * operations); here a lane is one channel of one tile, the ib channels of a block at a pixel
 * being contiguous. Between the transforms, for each of the 36 tile elements k, the products
 *     m[k][t][o] = sum over c of v[k][t][c] * u[k][o / 8][c][o % 8]
 * run as register tiles of XR_WINO_TP tiles x 16 output channels (XR_F8 accumulators of
 * xrelay_kernels.h), each transformed weight row (8 output channels) one vector load and each
 * transformed input value broadcast.
 *
 * The image is cut into bands of `band` consecutive tiles (row-major over the tile grid) so
 * the transformed tiles and products of one band fit in the scratch the caller gives:
 *   v    36 * band * c floats   the band's transformed input tiles
 *   m    36 * band * o floats   their products with the weights
 *   work XR_WINO4_WORK(ib) floats: transform rows, a zero pixel, a cut output block
 * Nothing is allocated; C99 with libc.
 *
 * Rounding: float32 throughout; each output is A^T [U * (B^T d B)] A, a few more roundings
 * per value than the direct sum (the transforms' additions) -- results agree with the direct
 * convolution to about 1e-6 relative to the output's largest magnitude (docs/guide/c-target.md).
 */
#ifndef XRELAY_WINOGRAD_H
#define XRELAY_WINOGRAD_H

#include <stdint.h>
#include <string.h>

#include "xrelay_kernels.h"

#define REAL float
#define SFX(name) xr_f32_##name
#include "winograd_core.h"
#undef REAL
#undef SFX

/* Tiles of one register tile of the products (6 tiles x 16 channels: 12 AVX accumulators). */
#define XR_WINO_TP 6

/* Floats of `work` for input blocks of ib channels: 36 * ib transform rows, ib zeros (a pixel
   of padding), 24 * 8 output transform rows and a 4 x 4 x 8 block (tiles cut at the edge). */
#define XR_WINO4_WORK(ib) (37 * (ib) + 24 * 8 + 16 * 8)

/* The input transform of tiles t0 .. t0 + nt - 1 of one image x ([c / ib][h][w][ib]) into
   v[k][t][ch] = v[(k * nt + t) * c + ch] (k < 36 the tile element, t < nt the tile). */
static inline void xr_wino4_input_nchwc(const float *x, int64_t c, int64_t h, int64_t w, int64_t ib,
                                        int64_t pt, int64_t pl, int64_t tw, int64_t t0, int64_t nt,
                                        float *restrict v, float *restrict e, const float *zero) {
  const float *d[36];
  for (int64_t t = 0; t < nt; ++t) {
    const int64_t ty = (t0 + t) / tw, tx = (t0 + t) % tw;
    for (int64_t cb = 0; cb < c / ib; ++cb) {
      const float *xc = x + cb * h * w * ib;
      for (int i = 0; i < 6; ++i) {
        const int64_t iy = ty * 4 - pt + i;
        for (int j = 0; j < 6; ++j) {
          const int64_t ix = tx * 4 - pl + j;
          d[i * 6 + j] = (iy >= 0 && iy < h && ix >= 0 && ix < w) ? xc + (iy * w + ix) * ib : zero;
        }
      }
      xr_f32_wino4_in_lanes(d, v + t * c + cb * ib, nt * c, ib, e, ib);
    }
  }
}

/* Declares a register tile's accumulators (p: the tile within the register tile). */
#define XR_WINO_ZERO2(p) XR_F8_ZERO(a##p##_0); XR_F8_ZERO(a##p##_1)
#define XR_WINO_MAC2(p) { const float xv = vt[(p) * c + ci]; XR_F8_MAC(a##p##_0, xv, w0); XR_F8_MAC(a##p##_1, xv, w1); }
#define XR_WINO_STORE2(p) XR_F8_STORE(mt + (p) * o, a##p##_0); XR_F8_STORE(mt + (p) * o + 8, a##p##_1)

/* The products of nt tiles: m[k][t][o] = sum over c of v[k][t][c] * u[k][o / 8][c][o % 8]
   (u: the packed transformed weights, 36 x (o / 8) x c x 8; o a multiple of 8). */
static inline void xr_wino4_products(const float *restrict v, const float *restrict u, float *restrict m,
                                     int64_t nt, int64_t c, int64_t o) {
  for (int k = 0; k < 36; ++k) {
    const float *vk = v + k * nt * c, *uk = u + k * o * c;
    float *mk = m + k * nt * o;
    for (int64_t ob = 0; ob < o; ob += 16) {
      const float *u0 = uk + ob * c, *u1 = u0 + 8 * c;
      const int two = ob + 16 <= o; /* else one block of 8 channels is left */
      int64_t t = 0;
      if (two) {
        for (; t + XR_WINO_TP <= nt; t += XR_WINO_TP) {
          const float *vt = vk + t * c;
          float *mt = mk + t * o + ob;
          XR_WINO_ZERO2(0); XR_WINO_ZERO2(1); XR_WINO_ZERO2(2);
          XR_WINO_ZERO2(3); XR_WINO_ZERO2(4); XR_WINO_ZERO2(5);
          for (int64_t ci = 0; ci < c; ++ci) {
            XR_F8_LOAD(w0, u0 + ci * 8);
            XR_F8_LOAD(w1, u1 + ci * 8);
            XR_WINO_MAC2(0) XR_WINO_MAC2(1) XR_WINO_MAC2(2)
            XR_WINO_MAC2(3) XR_WINO_MAC2(4) XR_WINO_MAC2(5)
          }
          XR_WINO_STORE2(0); XR_WINO_STORE2(1); XR_WINO_STORE2(2);
          XR_WINO_STORE2(3); XR_WINO_STORE2(4); XR_WINO_STORE2(5);
        }
      }
      /* the tiles left over (and a last block of 8 channels): one tile at a time */
      for (int64_t tb = two ? t : 0; tb < nt; ++tb) {
        const float *vt = vk + tb * c;
        for (int64_t half = 0; half < (two ? 2 : 1); ++half) {
          const float *uh = half ? u1 : u0;
          float *mt = mk + tb * o + ob + half * 8;
          XR_F8_ZERO(acc);
          for (int64_t ci = 0; ci < c; ++ci) {
            XR_F8_LOAD(wv, uh + ci * 8);
            XR_F8_MAC(acc, vt[ci], wv);
          }
          XR_F8_STORE(mt, acc);
        }
      }
    }
  }
}

/* The output transform of tiles t0 .. t0 + nt - 1 (products m[k][t][o]) into one image y
   ([o / ob][oh][ow][ob], ob a multiple of 8); blocks cut by the image's right edge go
   through `blk` (4 x 4 x 8 floats), those cut by its bottom edge lose their last rows. */
static inline void xr_wino4_output_nchwc(const float *m, int64_t o, int64_t t0, int64_t nt, int64_t tw,
                                         float *y, int64_t oh, int64_t ow, int64_t ob,
                                         float *restrict s, float *restrict blk) {
  for (int64_t t = 0; t < nt; ++t) {
    const int64_t ty = (t0 + t) / tw, tx = (t0 + t) % tw;
    const int64_t oy0 = ty * 4, ox0 = tx * 4;
    const int rows = oh - oy0 < 4 ? (int)(oh - oy0) : 4;
    const int64_t cols = ow - ox0 < 4 ? ow - ox0 : 4;
    for (int64_t oc = 0; oc < o; oc += 8) {
      float *yb = y + ((oc / ob) * oh + oy0) * ow * ob + ox0 * ob + oc % ob;
      if (cols == 4) {
        xr_f32_wino4_out_lanes(m + t * o + oc, nt * o, 8, s, 8, yb, ow * ob, ob, rows);
        continue;
      }
      xr_f32_wino4_out_lanes(m + t * o + oc, nt * o, 8, s, 8, blk, 32, 8, rows);
      for (int i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) memcpy(yb + i * ow * ob + j * ob, blk + i * 32 + j * 8, 8 * sizeof(float));
    }
  }
}

/* A 3x3 stride-1 convolution of x ([batch][c / ib][h][w][ib]) into y ([batch][o / ob][oh][ow][ob])
   with top and left padding pt, pl (the bottom and right follow from oh, ow: zeros), weights
   u transformed and packed at build time (36 x (o / 8) x c x 8), in bands of `band` tiles. */
static inline void xr_conv2d_winograd4_nchwc(const float *x, const float *u, float *y, int64_t batch,
                                             int64_t c, int64_t h, int64_t w, int64_t ib, int64_t o,
                                             int64_t oh, int64_t ow, int64_t ob, int64_t pt, int64_t pl,
                                             int64_t band, float *restrict v, float *restrict m,
                                             float *restrict work) {
  const int64_t tw = (ow + 3) / 4, tiles = (oh + 3) / 4 * tw;
  float *e = work, *zero = work + 36 * ib, *s = zero + ib, *blk = s + 24 * 8;
  memset(zero, 0, (size_t)ib * sizeof(float));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t t0 = 0; t0 < tiles; t0 += band) {
      const int64_t nt = tiles - t0 < band ? tiles - t0 : band;
      xr_wino4_input_nchwc(x + n * c * h * w, c, h, w, ib, pt, pl, tw, t0, nt, v, e, zero);
      xr_wino4_products(v, u, m, nt, c, o);
      xr_wino4_output_nchwc(m, o, t0, nt, tw, y + n * o * oh * ow, oh, ow, ob, s, blk);
    }
  }
}

#endif
