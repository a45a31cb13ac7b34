/*
 * A float32 dense step on AVX2 + FMA3 (included by dnnl_shim.c): C[m, n] = A[m, k] W + bias,
 * the constant weight W packed once at bind time (oneDNN reorders) into panels of 16 output
 * columns, [n / 16][k][16], and a last panel of the n % 16 columns left, if any, its own
 * [k][16] with the missing columns zero.
 *
 * Why: oneDNN 3.2 has no brgemm matmul without AVX-512 and its jit GEMM repacks the weight at
 * every call (about 60 % of an AMD EPYC Zen 3 core's FMA peak on BERT's shapes). Here the
 * weight is packed already and a 6 x 16 tile of C stays in twelve registers over a block of
 * KC rows of the panel (16 KB, in L1) while A's block of MC rows (in L2) streams by: the
 * classic Haswell register tile.
 *
 * Every element's sum has the same order whatever the thread count and whichever thread
 * takes its chunk: over each block of its kernel's products (KC, or all k) in k order, then
 * bias + block 0 + block 1 + ...; so a run's bits do not depend on the threads.
 *
 * A step of one tile of rows (m <= 6: a classifier's last layer, one token of a decoder)
 * reads each weight once and does little with it: its kernel takes all k products as one
 * block, so each panel is one sequential stream from memory (KC blocks interleaved the
 * CHUNK panels' streams; whole, the next panel is not prefetched into L2, which it would
 * not fit): AlexNet's 9216 -> 4096 in 0.84-0.88x the time of blocks of 256 on two Zen 3
 * cores, ResNet-50's 2048 -> 1000 0.85-0.88x, six rows by 4096 -> 4096 0.81-0.83x
 * (benchmarks/dnnl_gemm.py: packed against packed_kc256).
 */
#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define GEMM_BUILT 1
#else
#define GEMM_BUILT 0
#endif

#define GEMM_MR 6
#define GEMM_NR 16
#define GEMM_KC 256 /* a panel's block: KC x 16 floats, 16 KB, stays in L1 */
#define GEMM_MC 240 /* A's block: at most MC x KC floats, 240 KB, stays in L2 */
#define GEMM_CHUNK 4 /* panels a thread takes at once (64 columns) */
#define GEMM_OPS 4   /* the most epilogue ops */
#define GEMM_HOMES 64 /* the largest team that takes home shares (a larger one: one counter) */

enum { GEMM_ADD = 1, GEMM_CLIP = 2 }; /* the epilogue ops: + a residual, clip (ReLU: 0, inf) */

typedef struct {
    int kind; /* 8 */
    i64 m, n, k, panels, chunks, per_chunk, threads;
    i64 mc, blocks; /* row blocks: mc rows (whole tiles) each */
    i64 kb;         /* products a block: KC, or all k for one tile of rows */
    int nops, ops[GEMM_OPS];
    float lo[GEMM_OPS], hi[GEMM_OPS];
} xr_gemm_t;

int xr_dnnl_gemm_built(void) { return GEMM_BUILT; }

/* The kernel of a dense step of m rows, n output columns and k inputs; threads: 1 for a
   step too small to share (a parallel region costs more), 0 for the team's; kb: products a
   block (0: the kernel's choice for m rows; a part of a step's rows takes the whole step's,
   xr_dnnl_gemm_block, to sum in its order); nops epilogue ops (ops: GEMM_ADD, GEMM_CLIP
   with lo, hi) applied in order to each output after its last product. */
void *xr_dnnl_gemm(int64_t m, int64_t n, int64_t k, int64_t threads, int64_t kb, int nops, const int32_t *ops,
                   const float *lo, const float *hi) {
    if (!GEMM_BUILT || m < 1 || n < 1 || k < 1 || kb < 0 || nops < 0 || nops > GEMM_OPS) return NULL;
    xr_gemm_t *g = calloc(1, sizeof *g);
    if (g == NULL) return NULL;
    g->kind = 8, g->m = m, g->n = n, g->k = k, g->threads = threads;
    g->kb = kb > 0 ? kb : (m <= GEMM_MR ? k : GEMM_KC);
    g->panels = (n + GEMM_NR - 1) / GEMM_NR;
    g->per_chunk = GEMM_CHUNK;
    g->chunks = (g->panels + g->per_chunk - 1) / g->per_chunk;
    /* blocks of whole tiles, as even as can be: each block streams every panel once more */
    const i64 tiles = (m + GEMM_MR - 1) / GEMM_MR, per = GEMM_MC / GEMM_MR;
    g->blocks = (tiles + per - 1) / per;
    g->mc = (tiles + g->blocks - 1) / g->blocks * GEMM_MR;
    g->nops = nops;
    for (int i = 0; i < nops; i++) {
        if (ops[i] != GEMM_ADD && ops[i] != GEMM_CLIP) {
            free(g);
            return NULL;
        }
        g->ops[i] = ops[i], g->lo[i] = lo[i], g->hi[i] = hi[i];
    }
    return g;
}

void xr_dnnl_gemm_free(void *g) { free(g); }

/* Products a block of a kernel (xr_dnnl_gemm's kb). */
int64_t xr_dnnl_gemm_block(const void *p) { return ((const xr_gemm_t *)p)->kb; }

#if GEMM_BUILT
/* The epilogue of a tile's last block: the ops and the tile's rows of the residual. */
typedef struct {
    const xr_gemm_t *g;
    const float *res;
    i64 ldr; /* the residual's row stride */
} gemm_epi_t;

/* The epilogue ops (nops of ops with lo, hi: xr_dnnl_gemm's) on 8 outputs v; res: the
   residual's 8 values at the same place (read by GEMM_ADD). Shared by the kernels that take
   these ops (grouped_conv.h). */
static inline __m256 gemm_ops8(int nops, const int *ops, const float *lo, const float *hi, __m256 v,
                               const float *res) {
    for (int o = 0; o < nops; o++)
        if (ops[o] == GEMM_ADD)
            v = _mm256_add_ps(v, _mm256_loadu_ps(res));
        else
            v = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(lo[o])), _mm256_set1_ps(hi[o]));
    return v;
}

/* The epilogue over a finished tile (rows [0, mr) x columns [0, nc) of C, still in L1): a
   pass of its own, so that the tile's twelve accumulators stay in registers (with the ops
   inside the tile GCC spilled them: 72 -> 44 GF). */
static void gemm_epilogue(float *c, i64 ldc, int mr, int nc, const gemm_epi_t *e) {
    const xr_gemm_t *g = e->g;
    for (int r = 0; r < mr; r++) {
        float *row = c + r * ldc;
        const float *res = e->res ? e->res + r * e->ldr : NULL;
        int j = 0;
        for (; j + 8 <= nc; j += 8)
            _mm256_storeu_ps(row + j, gemm_ops8(g->nops, g->ops, g->lo, g->hi, _mm256_loadu_ps(row + j), res ? res + j : NULL));
        for (; j < nc; j++) {
            float v = row[j];
            for (int o = 0; o < g->nops; o++)
                v = g->ops[o] == GEMM_ADD ? v + res[j] : fminf(fmaxf(v, g->lo[o]), g->hi[o]);
            row[j] = v;
        }
    }
}

/* One tile: rows [0, mr) of C (row stride ldc) += A's mr rows (packed: a[6 p + r]) over kc
   products with the panel's block b (kc x 16). first: the tile's first block, which starts
   from the bias (or 0) instead of C. nc < 16: the last panel's columns, through a local
   tile. */
static inline __attribute__((always_inline)) void gemm_tile(const int mr, i64 kc, const float *a,
                                                            const float *b, float *c, i64 ldc, int first,
                                                            const float *bias, int nc) {
    __m256 acc[GEMM_MR][2];
#pragma GCC unroll 6
    for (int r = 0; r < mr; r++) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
#pragma GCC unroll 2 /* (two products a turn: 73 against 66 GF on BERT's shapes, one Zen 3 core) */
    for (i64 p = 0; p < kc; p++) {
        const __m256 b0 = _mm256_loadu_ps(b + GEMM_NR * p), b1 = _mm256_loadu_ps(b + GEMM_NR * p + 8);
#pragma GCC unroll 6
        for (int r = 0; r < mr; r++) {
            const __m256 x = _mm256_broadcast_ss(a + GEMM_MR * p + r);
            acc[r][0] = _mm256_fmadd_ps(x, b0, acc[r][0]);
            acc[r][1] = _mm256_fmadd_ps(x, b1, acc[r][1]);
        }
    }
    if (nc == GEMM_NR) {
#pragma GCC unroll 6
        for (int r = 0; r < mr; r++) {
            float *row = c + r * ldc;
            __m256 lo = first ? (bias ? _mm256_loadu_ps(bias) : _mm256_setzero_ps()) : _mm256_loadu_ps(row);
            __m256 hi = first ? (bias ? _mm256_loadu_ps(bias + 8) : _mm256_setzero_ps()) : _mm256_loadu_ps(row + 8);
            _mm256_storeu_ps(row, _mm256_add_ps(lo, acc[r][0]));
            _mm256_storeu_ps(row + 8, _mm256_add_ps(hi, acc[r][1]));
        }
        return;
    }
    float t[GEMM_NR];
#pragma GCC unroll 6 /* (acc indexed by constants only: it stays in registers) */
    for (int r = 0; r < mr; r++) {
        float *row = c + r * ldc;
        _mm256_storeu_ps(t, acc[r][0]);
        _mm256_storeu_ps(t + 8, acc[r][1]);
        for (int j = 0; j < nc; j++) row[j] = (first ? (bias ? bias[j] : 0.0f) : row[j]) + t[j];
    }
}

/* A tile of one or two rows over np whole panels at once (ldb floats apart): a row's tile of
   one panel is two chains of products, each waiting on the last one's FMA (4 cycles on Zen 3),
   so one row ran at a quarter of the FMA rate (1 x 256 by 768: 21 us on two cores); np panels
   are 2 np chains a row. Each output's sum is gemm_tile's, in the same order (the bits are
   the same). */
static inline __attribute__((always_inline)) void gemm_wide_tile(const int mr, const int np, i64 kc,
                                                                 const float *a, const float *b, i64 ldb,
                                                                 float *c, i64 ldc, int first, const float *bias) {
    __m256 acc[2][8];
#pragma GCC unroll 2
    for (int r = 0; r < mr; r++)
#pragma GCC unroll 8
        for (int q = 0; q < 2 * np; q++) acc[r][q] = _mm256_setzero_ps();
    for (i64 p = 0; p < kc; p++) {
#pragma GCC unroll 4
        for (int q = 0; q < np; q++) {
            const float *bq = b + q * ldb + GEMM_NR * p;
            const __m256 b0 = _mm256_loadu_ps(bq), b1 = _mm256_loadu_ps(bq + 8);
#pragma GCC unroll 2
            for (int r = 0; r < mr; r++) {
                const __m256 x = _mm256_broadcast_ss(a + GEMM_MR * p + r);
                acc[r][2 * q] = _mm256_fmadd_ps(x, b0, acc[r][2 * q]);
                acc[r][2 * q + 1] = _mm256_fmadd_ps(x, b1, acc[r][2 * q + 1]);
            }
        }
    }
#pragma GCC unroll 2
    for (int r = 0; r < mr; r++)
#pragma GCC unroll 4
        for (int q = 0; q < np; q++) {
            float *row = c + r * ldc + q * GEMM_NR;
            const float *bq = bias ? bias + q * GEMM_NR : NULL;
            __m256 lo = first ? (bq ? _mm256_loadu_ps(bq) : _mm256_setzero_ps()) : _mm256_loadu_ps(row);
            __m256 hi = first ? (bq ? _mm256_loadu_ps(bq + 8) : _mm256_setzero_ps()) : _mm256_loadu_ps(row + 8);
            _mm256_storeu_ps(row, _mm256_add_ps(lo, acc[r][2 * q]));
            _mm256_storeu_ps(row + 8, _mm256_add_ps(hi, acc[r][2 * q + 1]));
        }
}

/* The panels a wide tile of mr rows takes at once: eight chains of products (two FMAs a
   cycle in flight at a latency of 4); 1 for taller tiles, which have them already. */
static inline int gemm_wide_panels(int mr) { return mr == 1 ? 4 : mr == 2 ? 2 : 1; }

static void gemm_wide(int mr, int np, i64 kc, const float *a, const float *b, i64 ldb, float *c, i64 ldc,
                      int first, const float *bias) {
    switch (mr * 8 + np) { /* each shape its own fully unrolled tile */
    case 8 + 4: gemm_wide_tile(1, 4, kc, a, b, ldb, c, ldc, first, bias); break;
    case 8 + 3: gemm_wide_tile(1, 3, kc, a, b, ldb, c, ldc, first, bias); break;
    case 8 + 2: gemm_wide_tile(1, 2, kc, a, b, ldb, c, ldc, first, bias); break;
    default: gemm_wide_tile(2, 2, kc, a, b, ldb, c, ldc, first, bias); break;
    }
}

static void gemm_rows(int mr, i64 kc, const float *a, const float *b, float *c, i64 ldc, int first,
                      const float *bias, int nc) {
    switch (mr) { /* each height its own fully unrolled tile */
    case 6: gemm_tile(6, kc, a, b, c, ldc, first, bias, nc); break;
    case 5: gemm_tile(5, kc, a, b, c, ldc, first, bias, nc); break;
    case 4: gemm_tile(4, kc, a, b, c, ldc, first, bias, nc); break;
    case 3: gemm_tile(3, kc, a, b, c, ldc, first, bias, nc); break;
    case 2: gemm_tile(2, kc, a, b, c, ldc, first, bias, nc); break;
    default: gemm_tile(1, kc, a, b, c, ldc, first, bias, nc); break;
    }
}

typedef struct {
    const xr_gemm_t *g;
    const float *a, *w, *tail, *bias, *res;
    float *c, *ap; /* ap: A packed by tiles of 6 rows, [tiles][k][6] */
    i64 next, packed; /* the next chunk and tile to take (atomic) */
    i64 home[GEMM_HOMES]; /* one row block: each thread's next chunk of its own share (atomic) */
} gemm_job_t;

/* Eight products of a tile's rows (x[r]: row r's 8 values, zero for a row past the last)
   as 8 groups of 6, d[6 j + r] = x[r][j]: an 8 x 8 transposition whose columns are stored
   6 floats apart, each store's last two lanes overwritten by the next one's (the last
   group's stored as 4 + 2: they would land in the next tile). */
static inline void gemm_pack8(const __m256 x[GEMM_MR], float *d) {
    const __m256 z = _mm256_setzero_ps();
    const __m256 t0 = _mm256_unpacklo_ps(x[0], x[1]), t1 = _mm256_unpackhi_ps(x[0], x[1]);
    const __m256 t2 = _mm256_unpacklo_ps(x[2], x[3]), t3 = _mm256_unpackhi_ps(x[2], x[3]);
    const __m256 t4 = _mm256_unpacklo_ps(x[4], x[5]), t5 = _mm256_unpackhi_ps(x[4], x[5]);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 u4 = _mm256_shuffle_ps(t4, z, 0x44), u5 = _mm256_shuffle_ps(t4, z, 0xEE);
    const __m256 u6 = _mm256_shuffle_ps(t5, z, 0x44), u7 = _mm256_shuffle_ps(t5, z, 0xEE);
    /* column j: rows 0-3 in the low half of u[j % 4] (j < 4) or its high half, rows 4-5 beside */
    _mm256_storeu_ps(d + 0, _mm256_permute2f128_ps(u0, u4, 0x20));
    _mm256_storeu_ps(d + 6, _mm256_permute2f128_ps(u1, u5, 0x20));
    _mm256_storeu_ps(d + 12, _mm256_permute2f128_ps(u2, u6, 0x20));
    _mm256_storeu_ps(d + 18, _mm256_permute2f128_ps(u3, u7, 0x20));
    _mm256_storeu_ps(d + 24, _mm256_permute2f128_ps(u0, u4, 0x31));
    _mm256_storeu_ps(d + 30, _mm256_permute2f128_ps(u1, u5, 0x31));
    _mm256_storeu_ps(d + 36, _mm256_permute2f128_ps(u2, u6, 0x31));
    _mm_storeu_ps(d + 42, _mm256_extractf128_ps(u3, 1));
    _mm_storel_pi((__m64 *)(d + 46), _mm256_extractf128_ps(u7, 1));
}

/* A's rows as tiles of 6 rows, each [k][6]: the tile's 6 broadcasts of one product read
   one line of cache (A's own rows k floats apart ran at 75 % of the FMA peak against 95 %
   packed, on a Zen 3 core). A last tile of fewer rows keeps the stride 6 (its missing rows
   zero). Eight products at a time through registers: one float at a time, the packing was
   a quarter of a 3136 x 384 by 96 step (ConvNeXt's second dense) on two Zen 3 cores. */
static void gemm_pack(void *arg) {
    gemm_job_t *job = arg;
    const i64 m = job->g->m, k = job->g->k, tiles = (m + GEMM_MR - 1) / GEMM_MR;
    for (;;) {
        const i64 t = __atomic_fetch_add(&job->packed, 1, __ATOMIC_RELAXED);
        if (t >= tiles) return;
        const i64 r0 = GEMM_MR * t, mr = m - r0 < GEMM_MR ? m - r0 : GEMM_MR;
        float *d = job->ap + t * k * GEMM_MR;
        const float *row[GEMM_MR];
        for (i64 r = 0; r < GEMM_MR; r++) row[r] = job->a + (r0 + (r < mr ? r : 0)) * k;
        i64 q = 0;
        for (; q + 8 <= k; q += 8) {
            __m256 x[GEMM_MR];
#pragma GCC unroll 6
            for (int r = 0; r < GEMM_MR; r++) x[r] = r < mr ? _mm256_loadu_ps(row[r] + q) : _mm256_setzero_ps();
            gemm_pack8(x, d + GEMM_MR * q);
        }
        for (; q < k; q++)
            for (i64 r = 0; r < GEMM_MR; r++) d[GEMM_MR * q + r] = r < mr ? row[r][q] : 0.0f;
    }
}

/* Rows [i0, i1) and panels [p0, p1) of C: every k block in order, every panel, every tile.
   A residual that is C itself (the arena's in-place sum) must be read before C is written:
   one block of all k products then, each tile's rows of it kept aside first. */
static void gemm_chunk(const gemm_job_t *job, i64 i0, i64 i1, i64 p0, i64 p1) {
    const xr_gemm_t *g = job->g;
    const i64 n = g->n, k = g->k, kb = job->res == job->c ? k : g->kb;
    const i64 tl = (i1 - i0 + GEMM_MR - 1) / GEMM_MR;
    /* one short tile (one or two rows): several panels at once */
    const int short_mr = tl == 1 ? (int)(i1 - i0) : GEMM_MR, wide = gemm_wide_panels(short_mr);
    for (i64 k0 = 0; k0 < k; k0 += kb) {
        const i64 kc = k0 + kb < k ? kb : k - k0;
        const int last = k0 + kc >= k && g->nops > 0;
        for (i64 p = p0; p < p1; p++) {
            const float *b = (p < n / GEMM_NR ? job->w + p * k * GEMM_NR : job->tail) + k0 * GEMM_NR;
            if (wide > 1) {
                i64 np = p + wide <= p1 ? wide : p1 - p;
                np = p + np <= n / GEMM_NR ? np : n / GEMM_NR - p; /* whole panels only */
                if (np > 1) {
                    float *c = job->c + i0 * n + p * GEMM_NR, kept[4][GEMM_MR * GEMM_NR];
                    if (last && job->res == job->c)
                        for (i64 q = 0; q < np; q++)
                            for (int r = 0; r < short_mr; r++)
                                for (int j = 0; j < GEMM_NR; j++) kept[q][r * GEMM_NR + j] = c[r * n + q * GEMM_NR + j];
                    gemm_wide(short_mr, (int)np, kc, job->ap + (i0 * k + k0 * GEMM_MR), b, k * GEMM_NR, c, n, k0 == 0,
                              job->bias ? job->bias + p * GEMM_NR : NULL);
                    for (i64 q = 0; last && q < np; q++) {
                        gemm_epi_t e = {g, job->res ? job->res + i0 * n + (p + q) * GEMM_NR : NULL, n};
                        if (job->res == job->c) e.res = kept[q], e.ldr = GEMM_NR;
                        gemm_epilogue(c + q * GEMM_NR, n, short_mr, GEMM_NR, &e);
                    }
                    p += np - 1;
                    continue;
                }
            }
            const i64 j = p * GEMM_NR;
            const int nc = n - j < GEMM_NR ? (int)(n - j) : GEMM_NR;
            const float *bias = job->bias ? job->bias + j : NULL;
            /* the next panel's block (a block of KC lines, or the tiles' shares of a longer one) */
            const float *nb = p + 1 < p1 && p + 1 < n / GEMM_NR && (kc <= GEMM_KC || tl > 1) ? b + k * GEMM_NR : NULL;
            for (i64 i = i0; i < i1; i += GEMM_MR) {
                const int mr = i1 - i < GEMM_MR ? (int)(i1 - i) : GEMM_MR;
                if (nb) { /* its share of the next block's kc lines, into L2 */
                    const i64 t = (i - i0) / GEMM_MR, l0 = kc * t / tl, l1 = kc * (t + 1) / tl;
                    for (i64 l = l0; l < l1; l++) _mm_prefetch((const char *)(nb + GEMM_NR * l), _MM_HINT_T1);
                }
                float *c = job->c + i * n + j, kept[GEMM_MR * GEMM_NR];
                gemm_epi_t e = {g, job->res ? job->res + i * n + j : NULL, n};
                if (last && job->res == job->c) {
                    for (int r = 0; r < mr; r++)
                        for (int q = 0; q < nc; q++) kept[r * GEMM_NR + q] = c[r * n + q];
                    e.res = kept, e.ldr = GEMM_NR;
                }
                gemm_rows(mr, kc, job->ap + (i * k + k0 * GEMM_MR), b, c, n, k0 == 0, bias, nc);
                if (last) gemm_epilogue(c, n, mr, nc, &e);
            }
        }
    }
}

/* Each thread takes the next item (a row block's chunk of panels) from one counter: a
   thread another process holds back takes fewer, and the others do not wait at a static
   share. The items of one row block come one after another: the threads read its rows of A
   while they are in the shared cache. */
static void gemm_part(void *arg) {
    gemm_job_t *job = arg;
    const xr_gemm_t *g = job->g;
    const i64 team = omp_get_num_threads();
    if (g->blocks == 1 && team > 1 && team <= GEMM_HOMES) {
        /* One row block (a few rows: a recurrent step, a decoder's token, a classifier): its
           time is the weight's reading. Thread t's share is the same panels at every call,
           so a weight that fits the cores' caches together stays in them across calls (a
           recurrent layer's 768 KB, 384 KB a core's 512 KB L2); a share's chunks still come
           from a counter of its own, and a thread done with its share takes the others'
           next chunks, so a thread another process holds back takes fewer. */
        const i64 me = omp_get_thread_num();
        for (i64 u = 0; u < team; u++) {
            const i64 t = (me + u) % team, end = g->chunks * (t + 1) / team;
            for (;;) {
                const i64 q = g->chunks * t / team + __atomic_fetch_add(&job->home[t], 1, __ATOMIC_RELAXED);
                if (q >= end) break;
                const i64 p0 = q * g->per_chunk, p1 = p0 + g->per_chunk < g->panels ? p0 + g->per_chunk : g->panels;
                gemm_chunk(job, 0, g->m, p0, p1);
            }
        }
        return;
    }
    for (;;) {
        const i64 q = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        if (q >= g->chunks * g->blocks) return;
        const i64 i0 = q / g->chunks * g->mc, i1 = i0 + g->mc < g->m ? i0 + g->mc : g->m;
        const i64 p0 = q % g->chunks * g->per_chunk, p1 = p0 + g->per_chunk < g->panels ? p0 + g->per_chunk : g->panels;
        gemm_chunk(job, i0, i1, p0, p1);
    }
}
#endif

enum { ARG_WEIGHTS = 33, ARG_TAIL = 34, ARG_PACKED = 64 };

/* Bytes of the packed rows of A (the step's temporary in the planned workspace). */
int64_t xr_dnnl_gemm_packed_bytes(const void *p) {
    const xr_gemm_t *g = p;
    return (int64_t)sizeof(float) * ((g->m + GEMM_MR - 1) / GEMM_MR) * GEMM_MR * g->k;
}

/* The threads a kernel of the shim runs on: its own count (1: the calling thread alone), or
   0 for the run's whole team. */
static inline int gemm_team(i64 threads) {
    const int most = omp_get_max_threads();
    return threads > 0 && threads < most ? (int)threads : most;
}

static int gemm_run(const xr_gemm_t *g, int nargs, const int32_t *keys, dnnl_memory_t const *mems) {
#if GEMM_BUILT
    gemm_job_t job = {g, handle_of(nargs, keys, mems, ARG_SRC), handle_of(nargs, keys, mems, ARG_WEIGHTS),
                      handle_of(nargs, keys, mems, ARG_TAIL), handle_of(nargs, keys, mems, ARG_BIAS),
                      handle_of(nargs, keys, mems, ARG_SRC_1), handle_of(nargs, keys, mems, ARG_DST),
                      handle_of(nargs, keys, mems, ARG_PACKED), 0, 0, {0}};
    if (job.a == NULL || job.c == NULL || job.ap == NULL) return -1;
    if ((g->n >= GEMM_NR && job.w == NULL) || (g->n % GEMM_NR && job.tail == NULL)) return -1;
    for (int o = 0; o < g->nops; o++)
        if (g->ops[o] == GEMM_ADD && job.res == NULL) return -1;
    const int team = gemm_team(g->threads);
    if (team > 1 && g->chunks * g->blocks > 1) {
        GOMP_parallel(gemm_pack, &job, (unsigned)(g->m > 4 * GEMM_MR ? team : 1), 0);
        GOMP_parallel(gemm_part, &job, (unsigned)team, 0);
    } else {
        gemm_pack(&job);
        gemm_part(&job);
    }
    return 0;
#else
    (void)g, (void)nargs, (void)keys, (void)mems;
    return -1;
#endif
}
