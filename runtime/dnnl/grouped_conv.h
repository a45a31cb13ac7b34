/*
 * A 2-D convolution of narrow groups on AVX2 + FMA3 (included by dnnl_shim.c, after
 * packed_gemm.h, whose epilogue ops it shares): channels-last float32 data, groups of at most
 * GCONV_MAX_IN input channels and a multiple of 8 output channels, three taps a row (any
 * number of rows), a column stride of 1 or 2: RegNet's 3x3 groups of 8, ResNeXt's of 8.
 *
 * Why: oneDNN 3.2 without AVX-512 runs such a convolution on its jit:avx2 direct kernel, at
 * 16-33 GMAC/s on two Zen 3 cores against 50-60 for its 1x1 convolutions (RegNetY-400MF).
 * Here 8 output channels of a group are one register, a tile of up to GCONV_TILE pixels of
 * an output row keeps its sums in registers, and each input pixel of the row is broadcast
 * once per input channel for the three taps that read it (gconv_tile): the loads a product
 * takes, the kernel's limit, fall from one broadcast to about a third (stride 1) or two
 * thirds (stride 2). Measured in one process against oneDNN's step on RegNetY-400MF's 16
 * grouped convolutions: 0.61-0.76x its time at stride 1, 0.85-0.97x at stride 2.
 *
 * The weight is reordered once at bind time (oneDNN reorders) to [group][kh][3][in][out of
 * the group]. A tap outside the image reads a row of zeros, so every pixel of a tile runs
 * the same loop. Work items are (image, output row, block of GCONV_GROUPS groups), taken from
 * one counter by the team's threads: a thread another process (or a slower core) holds back
 * takes fewer. Every output sums its products in the same order whichever thread computes
 * it: the bits do not depend on the threads.
 */

#define GCONV_TILE 8    /* output pixels a tile (their sums: 8 registers; 12 spilled at stride 2) */
#define GCONV_GROUPS 4  /* groups a work item */
#define GCONV_MAX_IN 64 /* the most input channels a group (a tap's zero row) */

typedef struct {
    int kind; /* 9 */
    i64 n, h, w, c;       /* the NHWC source */
    i64 groups, ci, co;   /* co: output channels a group, a multiple of 8 */
    i64 kh, kw, sh, sw;   /* kernel and strides */
    i64 pt, pl;           /* top and left padding */
    i64 oh, ow;           /* the NHWC destination's rows and columns (groups x co channels) */
    i64 threads;          /* 1: on the calling thread; 0: the team's */
    int nops, ops[GEMM_OPS];
    float lo[GEMM_OPS], hi[GEMM_OPS];
} xr_gconv_t;

/* The kernel of a convolution of shape (n, h, w, c, groups, ci, co, kh, kw, sh, sw, pt, pl,
   oh, ow) with the epilogue ops (packed_gemm.h's GEMM_ADD, GEMM_CLIP with lo, hi) after the
   bias; NULL where it does not run such a one (no AVX2 build, a wide group, kw other than 3,
   a column stride other than 1 or 2). */
void *xr_dnnl_gconv(const int64_t *shape, int64_t threads, int nops, const int32_t *ops, const float *lo,
                    const float *hi) {
    if (!GEMM_BUILT || nops < 0 || nops > GEMM_OPS) return NULL;
    xr_gconv_t *k = calloc(1, sizeof *k);
    if (k == NULL) return NULL;
    k->kind = 9;
    k->n = shape[0], k->h = shape[1], k->w = shape[2], k->c = shape[3];
    k->groups = shape[4], k->ci = shape[5], k->co = shape[6];
    k->kh = shape[7], k->kw = shape[8], k->sh = shape[9], k->sw = shape[10];
    k->pt = shape[11], k->pl = shape[12], k->oh = shape[13], k->ow = shape[14];
    k->threads = threads;
    int ok = k->n > 0 && k->h > 0 && k->w > 0 && k->groups > 0 && k->ci > 0 && k->ci <= GCONV_MAX_IN;
    ok = ok && k->co > 0 && k->co % 8 == 0 && k->c == k->groups * k->ci && k->kh > 0 && k->kw == 3;
    ok = ok && k->sh > 0 && (k->sw == 1 || k->sw == 2) && k->pt >= 0 && k->pl >= 0 && k->oh > 0 && k->ow > 0;
    /* every output row and column reads at least one input row and column */
    ok = ok && (k->oh - 1) * k->sh - k->pt < k->h && (k->ow - 1) * k->sw - k->pl < k->w;
    ok = ok && k->pt < k->kh && k->pl < k->kw;
    for (int i = 0; ok && i < nops; i++) {
        ok = ops[i] == GEMM_ADD || ops[i] == GEMM_CLIP;
        k->ops[i] = ops[i], k->lo[i] = lo[i], k->hi[i] = hi[i];
    }
    k->nops = nops;
    if (!ok) {
        free(k);
        return NULL;
    }
    return k;
}

void xr_dnnl_gconv_free(void *k) { free(k); }

#if GEMM_BUILT
typedef struct {
    const xr_gconv_t *k;
    const float *x, *w, *bias, *res;
    float *y;
    i64 next; /* the next work item (atomic) */
} gconv_job_t;

static const float gconv_zeros[GCONV_MAX_IN];

/* T pixels of output row oy from column ox, output channels [o, o + 8) of group g, for a
   stride S (1 or 2) and three taps a row: each input pixel of the row is broadcast once per
   input channel and multiplied by the weights of the taps that read it, into those
   outputs' sums (stride 1: T + 2 broadcasts for 3 T products, stride 2: 2 T + 1; a tap
   of its own per product would take 3 T). Each output sums, for each input row and each
   input channel in turn, its taps 0, 1, 2 in that order, whatever thread computes it. */
static inline __attribute__((always_inline)) void gconv_tile(const gconv_job_t *job, i64 b, i64 oy, i64 ox,
                                                             i64 g, i64 o, const int T, const int S) {
    const xr_gconv_t *k = job->k;
    const i64 ci = k->ci, co = k->co, oc = k->groups * co;
    const i64 iy0 = oy * k->sh - k->pt;
    const i64 ky0 = iy0 < 0 ? -iy0 : 0, ky1 = iy0 + k->kh > k->h ? k->h - iy0 : k->kh;
    const float *wg = job->w + g * k->kh * 3 * ci * co + o;
    const __m256 b0 = job->bias ? _mm256_loadu_ps(job->bias + g * co + o) : _mm256_setzero_ps();
    __m256 acc[GCONV_TILE];
    for (int t = 0; t < T; t++) acc[t] = b0;
    for (i64 ky = ky0; ky < ky1; ky++) {
        const float *xr = job->x + ((b * k->h + iy0 + ky) * k->w) * k->c + g * ci;
        const float *src[2 * GCONV_TILE + 1];
        for (int j = 0; j < S * (T - 1) + 3; j++) { /* a pixel in the padding reads zeros */
            const i64 ix = ox * S - k->pl + j;
            src[j] = ix >= 0 && ix < k->w ? xr + ix * k->c : gconv_zeros;
        }
        const float *wk = wg + ky * 3 * ci * co;
        for (i64 c = 0; c < ci; c++) {
            const __m256 w0 = _mm256_loadu_ps(wk + c * co), w1 = _mm256_loadu_ps(wk + (ci + c) * co);
            const __m256 w2 = _mm256_loadu_ps(wk + (2 * ci + c) * co);
            /* input j is tap kx of output t where j = S t + kx */
            for (int j = 0; j < S * (T - 1) + 3; j++) {
                const __m256 v = _mm256_broadcast_ss(src[j] + c);
                if (j % S == 0 && j / S < T) acc[j / S] = _mm256_fmadd_ps(v, w0, acc[j / S]);
                if (j >= 1 && (j - 1) % S == 0 && (j - 1) / S < T) acc[(j - 1) / S] = _mm256_fmadd_ps(v, w1, acc[(j - 1) / S]);
                if (j >= 2 && (j - 2) % S == 0) acc[(j - 2) / S] = _mm256_fmadd_ps(v, w2, acc[(j - 2) / S]);
            }
        }
    }
    const i64 at = ((b * k->oh + oy) * k->ow + ox) * oc + g * co + o;
    for (int t = 0; t < T; t++) /* (a residual read in place: each value before its store) */
        _mm256_storeu_ps(job->y + at + t * oc,
                         gemm_ops8(k->nops, k->ops, k->lo, k->hi, acc[t], job->res ? job->res + at + t * oc : NULL));
}

/* Output row oy's channels [o, o + 8) of group g: tiles of GCONV_TILE pixels, then one of the
   pixels left (each tile size its own unrolled code). */
static inline __attribute__((always_inline)) void gconv_row(const gconv_job_t *job, i64 b, i64 oy, i64 g, i64 o,
                                                            const int S) {
    const i64 ow = job->k->ow;
    i64 ox = 0;
    for (; ox + GCONV_TILE <= ow; ox += GCONV_TILE) gconv_tile(job, b, oy, ox, g, o, GCONV_TILE, S);
    switch (ow - ox) {
    case 7: gconv_tile(job, b, oy, ox, g, o, 7, S); break;
    case 6: gconv_tile(job, b, oy, ox, g, o, 6, S); break;
    case 5: gconv_tile(job, b, oy, ox, g, o, 5, S); break;
    case 4: gconv_tile(job, b, oy, ox, g, o, 4, S); break;
    case 3: gconv_tile(job, b, oy, ox, g, o, 3, S); break;
    case 2: gconv_tile(job, b, oy, ox, g, o, 2, S); break;
    case 1: gconv_tile(job, b, oy, ox, g, o, 1, S); break;
    default: break;
    }
}

static void gconv_part(void *arg) {
    gconv_job_t *job = arg;
    const xr_gconv_t *k = job->k;
    const i64 blocks = (k->groups + GCONV_GROUPS - 1) / GCONV_GROUPS, items = k->n * k->oh * blocks;
    for (;;) {
        const i64 q = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        if (q >= items) return;
        const i64 row = q / blocks, g0 = q % blocks * GCONV_GROUPS;
        const i64 b = row / k->oh, oy = row % k->oh, g1 = g0 + GCONV_GROUPS < k->groups ? g0 + GCONV_GROUPS : k->groups;
        for (i64 g = g0; g < g1; g++)
            for (i64 o = 0; o < k->co; o += 8) {
                if (k->sw == 1)
                    gconv_row(job, b, oy, g, o, 1);
                else
                    gconv_row(job, b, oy, g, o, 2);
            }
    }
}
#endif

static int gconv_run(const xr_gconv_t *k, int nargs, const int32_t *keys, dnnl_memory_t const *mems) {
#if GEMM_BUILT
    gconv_job_t job = {k, handle_of(nargs, keys, mems, ARG_SRC), handle_of(nargs, keys, mems, ARG_WEIGHTS),
                       handle_of(nargs, keys, mems, ARG_BIAS), handle_of(nargs, keys, mems, ARG_SRC_1),
                       handle_of(nargs, keys, mems, ARG_DST), 0};
    if (job.x == NULL || job.w == NULL || job.y == NULL) return -1;
    for (int q = 0; q < k->nops; q++)
        if (k->ops[q] == GEMM_ADD && job.res == NULL) return -1;
    const int team = gemm_team(k->threads);
    if (team > 1)
        GOMP_parallel(gconv_part, &job, (unsigned)team, 0);
    else
        gconv_part(&job);
    return 0;
#else
    (void)k, (void)nargs, (void)keys, (void)mems;
    return -1;
#endif
}
