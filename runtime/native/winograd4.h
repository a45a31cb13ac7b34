/* Winograd F(4x4, 3x3)'s one-dimensional transforms, shared by the NCHW (native_template.h)
   and channels-last (native_nhwc.h) kernels and the oneDNN shim. Points 0, 1, -1, 2, -1/2
   and infinity (Barabasz et al., "Error analysis and improving the accuracy of Winograd
   convolution for deep neural networks", 2020): mixing a point with its reciprocal keeps
   the output transform's and the transformed weights' magnitudes apart less than +-2 does,
   so the rounding of the 36 products' sums is amplified less (about 2.5x smaller largest
   error than points 0, +-1, +-2 on 3x3 layers of 64 channels; docs/guide/runtime.md).

   B^T (rows scaled by 2 where that makes them integral, G's rows by 1/2; exact):
     [2  3 -4 -3  2  0]   [0 -2 -5 -1  2  0]   [0  2  1 -5  2  0]
     [0 -1 -2  1  2  0]   [0  2 -1 -2  1  0]   [0  2  3 -4 -3  2]
   A^T:
     [1  1  1  1    1    0]
     [0  1 -1  2 -1/2    0]
     [0  1  1  4  1/4    0]
     [0  1 -1  8 -1/8    1]
   The matching G is fast_kernels._WINO_G[4]. Arguments are expressions of type REAL
   (evaluated once each) and lvalues. */
#ifndef XR_WINOGRAD4_H
#define XR_WINOGRAD4_H

#define WINO4_IN(o0, o1, o2, o3, o4, o5, x0, x1, x2, x3, x4, x5)                                  \
    do {                                                                                       \
        REAL d0_ = (x0), d1_ = (x1), d2_ = (x2), d3_ = (x3), d4_ = (x4), d5_ = (x5);             \
        REAL e4_ = (REAL)2 * d4_;                                                              \
        (o0) = (REAL)2 * d0_ + (REAL)3 * (d1_ - d3_) - (REAL)4 * d2_ + e4_;                     \
        (o1) = e4_ - (REAL)2 * d1_ - (REAL)5 * d2_ - d3_;                                      \
        (o2) = e4_ + (REAL)2 * d1_ + d2_ - (REAL)5 * d3_;                                      \
        (o3) = e4_ - d1_ - (REAL)2 * d2_ + d3_;                                                \
        (o4) = d4_ + (REAL)2 * (d1_ - d3_) - d2_;                                              \
        (o5) = (REAL)2 * (d1_ + d5_) + (REAL)3 * (d2_ - d4_) - (REAL)4 * d3_;                   \
    } while (0)

#define WINO4_OUT(y0, y1, y2, y3, m0, m1, m2, m3, m4, m5)                                      \
    do {                                                                                       \
        REAL m1_ = (m1), m2_ = (m2), m3_ = (m3), m4_ = (m4);                                   \
        REAL p_ = m1_ + m2_, q_ = m1_ - m2_;                                                   \
        (y0) = (m0) + p_ + m3_ + m4_;                                                          \
        (y1) = q_ + (REAL)2 * m3_ - (REAL)0.5 * m4_;                                           \
        (y2) = p_ + (REAL)4 * m3_ + (REAL)0.25 * m4_;                                          \
        (y3) = q_ + (REAL)8 * m3_ - (REAL)0.125 * m4_ + (m5);                                  \
    } while (0)

#endif
