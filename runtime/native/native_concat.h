/*
 * The elementwise runs of the loop kernels and the concatenation with its epilogue, written
 * once for a floating type (REAL, SFX(name)): native_template.h includes this file for the
 * native kernels, and the oneDNN shim (runtime/dnnl/dnnl_shim.c) for float, to run
 * concat_epi on oneDNN's OpenMP threads.
 */

#include <stdint.h>

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

/* concatenate and its elementwise epilogue in one pass (runtime.native.fast_concat): the
   result viewed as (outer, l, inner), input k as (outer, lens[k], inner) at address
   ins[k]. For every outer index in [u0, u1) each input's run of lens[k] * inner elements is
   copied into place, then the up to four epilogue ops (code -1: none) run on the joined run
   of l * inner elements while it is in cache; op k's operand is ops[k] advanced by
   st[k] elements per step of the joined axis (0: one value for all). The ops in program
   order, as the numpy reference's ufuncs: the same bits in any blocking. */
void SFX(concat_epi)(REAL *restrict o, i64 l, i64 inner, i64 u0, i64 u1, i64 nin,
                     const i64 *ins, const i64 *lens, const REAL *p0, const REAL *p1,
                     const REAL *p2, const REAL *p3, const i64 *st, const i64 *codes,
                     const i64 *swapped) {
    const REAL *ops[4] = {p0, p1, p2, p3};
    i64 run = l * inner;
    for (i64 u = u0; u < u1; u++) {
        REAL *dst = o + u * run;
        for (i64 k = 0, off = 0; k < nin; off += lens[k] * inner, k++) {
            const REAL *src = (const REAL *)(intptr_t)ins[k] + u * lens[k] * inner;
            for (i64 i = 0; i < lens[k] * inner; i++) dst[off + i] = src[i];
        }
        for (int k = 0; k < 4; k++) {
            if (codes[k] < 0) continue;
            if (st[k] == 0)
                SFX(apply_run)(dst, run, ops[k], 0, codes[k], swapped[k]);
            else if (inner == 1)
                SFX(apply_run)(dst, l, ops[k], st[k], codes[k], swapped[k]);
            else
                for (i64 j = 0; j < l; j++)
                    SFX(apply_run)(dst + j * inner, inner, ops[k] + j * st[k], 0, codes[k],
                                   swapped[k]);
        }
    }
}
