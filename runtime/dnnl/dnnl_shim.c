/*
 * xrelay's oneDNN backend in C (xrelay.runtime.dnnl.primitives builds this file once per machine with the
 * system compiler, linked against the onednn-cpu-gomp wheel's libdnnl.so.3, and calls it
 * through ctypes). Thin wrappers over the C API declared in dnnl_api.h: one engine and one
 * stream per process, memory descriptors from dims and strides (or "any"), primitive
 * descriptors with post-ops and a user scratchpad, primitives, memory objects over the
 * caller's pointers (the planned arena), and execution of one primitive or of a run of them.
 *
 * Every function that can fail returns NULL or a nonzero status and leaves the library's
 * status in xr_dnnl_last_status().
 */
#define _GNU_SOURCE /* sched_getcpu, CPU sets: the part workers keep off the caller's CPU */
#include "dnnl_api.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The channels-last Winograd F(4x4, 3x3) transforms of the native kernels (one definition,
   shared with native_kernels.c), for the Winograd convolutions run around a oneDNN matmul. */
typedef int64_t i64;
#define REAL float
#define SFX(name) name##_xr
#include "winograd_core.h"
#include "native_nhwc.h"
#include "native_concat.h"
#undef SFX
#undef REAL

static dnnl_engine_t engine;
static dnnl_stream_t stream;
static int n_threads = 1;
static dnnl_status_t last_status;

#define CHECK(call)                                                                            \
    do {                                                                                       \
        last_status = (call);                                                                  \
        if (last_status != dnnl_success) goto fail;                                            \
    } while (0)

int xr_dnnl_last_status(void) { return last_status; }

/* The engine and stream; threads is how many OpenMP threads oneDNN may use (set again by
   every execution, because OpenMP's thread count is per calling thread). */
int xr_dnnl_open(int threads) {
    n_threads = threads > 0 ? threads : 1;
    if (engine == NULL) {
        CHECK(dnnl_engine_create(&engine, dnnl_cpu, 0));
        CHECK(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags));
    }
    return 0;
fail:
    return last_status;
}

/* How many threads the next primitive descriptors are made for and the next runs use: a
   primitive keeps the thread count it was created with (its work split and its scratchpad
   size), so this is set before creating descriptors, not only before running them. */
void xr_dnnl_set_threads(int threads) {
    n_threads = threads > 0 ? threads : 1;
    if (omp_get_max_threads() != n_threads) omp_set_num_threads(n_threads);
}

int xr_dnnl_threads(void) { return omp_get_max_threads(); }

static void copy_dims(dnnl_dims_t out, int n, const int64_t *in) {
    for (int i = 0; i < DNNL_MAX_NDIMS; i++) out[i] = i < n && in ? in[i] : 0;
}

/* A memory descriptor: plain with the given element strides, or format "any" when strides
   is NULL (the primitive chooses). */
dnnl_memory_desc_t xr_dnnl_md(int ndims, const int64_t *dims, int data_type,
                              const int64_t *strides) {
    dnnl_memory_desc_t md = NULL;
    dnnl_dims_t d, s;
    copy_dims(d, ndims, dims);
    if (strides == NULL) {
        CHECK(dnnl_memory_desc_create_with_tag(&md, ndims, d, data_type, dnnl_format_tag_any));
    } else {
        copy_dims(s, ndims, strides);
        CHECK(dnnl_memory_desc_create_with_strides(&md, ndims, d, data_type, s));
    }
    return md;
fail:
    return NULL;
}

/* A copy the caller owns of a descriptor the primitive descriptor owns. */
dnnl_memory_desc_t xr_dnnl_pd_md(const_dnnl_primitive_desc_t pd, int what, int index) {
    dnnl_memory_desc_t md = NULL;
    const_dnnl_memory_desc_t q = dnnl_primitive_desc_query_md(pd, what, index);
    if (q == NULL) return NULL;
    CHECK(dnnl_memory_desc_clone(&md, q));
    return md;
fail:
    return NULL;
}

/* The part of md of extent dims at offsets (a view into the same memory), or NULL where
   oneDNN has none (an offset inside a block of a blocked dimension). */
dnnl_memory_desc_t xr_dnnl_submemory(const_dnnl_memory_desc_t md, int ndims, const int64_t *dims,
                                     const int64_t *offsets) {
    dnnl_memory_desc_t sub = NULL;
    dnnl_dims_t d, o;
    copy_dims(d, ndims, dims);
    copy_dims(o, ndims, offsets);
    CHECK(dnnl_memory_desc_create_submemory(&sub, md, d, o));
    return sub;
fail:
    return NULL;
}

void xr_dnnl_md_free(dnnl_memory_desc_t md) {
    if (md) dnnl_memory_desc_destroy(md);
}
size_t xr_dnnl_md_size(const_dnnl_memory_desc_t md) { return md ? dnnl_memory_desc_get_size(md) : 0; }
int xr_dnnl_md_equal(const_dnnl_memory_desc_t a, const_dnnl_memory_desc_t b) {
    return dnnl_memory_desc_equal(a, b);
}

/* Attributes: a user scratchpad, optional bf16 math, and n post-ops, each
   kinds[i] = 0 eltwise (algs[i], alpha[i], beta[i]), 1 sum (scale alpha[i]),
   2 binary (algs[i] with a second operand described by mds[i]). */
dnnl_primitive_attr_t xr_dnnl_attr(int n, const int32_t *kinds, const int32_t *algs,
                                   const float *alpha, const float *beta,
                                   const_dnnl_memory_desc_t *mds, int bf16) {
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t ops = NULL;
    CHECK(dnnl_primitive_attr_create(&attr));
    CHECK(dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user));
    if (bf16) CHECK(dnnl_primitive_attr_set_fpmath_mode(attr, dnnl_fpmath_mode_bf16));
    if (n > 0) {
        CHECK(dnnl_post_ops_create(&ops));
        for (int i = 0; i < n; i++) {
            if (kinds[i] == 0)
                CHECK(dnnl_post_ops_append_eltwise(ops, algs[i], alpha[i], beta[i]));
            else if (kinds[i] == 1)
                CHECK(dnnl_post_ops_append_sum(ops, alpha[i], 0, 0));
            else
                CHECK(dnnl_post_ops_append_binary(ops, algs[i], mds[i]));
        }
        CHECK(dnnl_primitive_attr_set_post_ops(attr, ops));
        dnnl_post_ops_destroy(ops);
    }
    return attr;
fail:
    if (ops) dnnl_post_ops_destroy(ops);
    if (attr) dnnl_primitive_attr_destroy(attr);
    return NULL;
}

void xr_dnnl_attr_free(dnnl_primitive_attr_t attr) {
    if (attr) dnnl_primitive_attr_destroy(attr);
}

/* Convolution or deconvolution (the transposed convolution: its weights are dst channels x src
   channels, like the convolution whose data gradient it is); groups are in the weights' dims;
   dilates count the gaps (Relay's minus 1). */
dnnl_primitive_desc_t xr_dnnl_conv(int transposed, const_dnnl_primitive_attr_t attr,
                                   const_dnnl_memory_desc_t src, const_dnnl_memory_desc_t weights,
                                   const_dnnl_memory_desc_t bias, const_dnnl_memory_desc_t dst,
                                   int nsp, const int64_t *strides, const int64_t *dilates,
                                   const int64_t *pad_l, const int64_t *pad_r) {
    dnnl_primitive_desc_t pd = NULL;
    dnnl_dims_t s, d, l, r;
    copy_dims(s, nsp, strides);
    copy_dims(d, nsp, dilates);
    copy_dims(l, nsp, pad_l);
    copy_dims(r, nsp, pad_r);
    if (transposed)
        CHECK(dnnl_deconvolution_forward_primitive_desc_create(
            &pd, engine, dnnl_forward_inference, dnnl_deconvolution_direct, src, weights, bias, dst,
            s, d, l, r, attr));
    else
        CHECK(dnnl_convolution_forward_primitive_desc_create(
            &pd, engine, dnnl_forward_inference, dnnl_convolution_direct, src, weights, bias, dst,
            s, d, l, r, attr));
    return pd;
fail:
    return NULL;
}

dnnl_primitive_desc_t xr_dnnl_matmul(const_dnnl_primitive_attr_t attr,
                                     const_dnnl_memory_desc_t src,
                                     const_dnnl_memory_desc_t weights,
                                     const_dnnl_memory_desc_t bias,
                                     const_dnnl_memory_desc_t dst) {
    dnnl_primitive_desc_t pd = NULL;
    CHECK(dnnl_matmul_primitive_desc_create(&pd, engine, src, weights, bias, dst, attr));
    return pd;
fail:
    return NULL;
}

dnnl_primitive_desc_t xr_dnnl_pool(const_dnnl_primitive_attr_t attr, int alg,
                                   const_dnnl_memory_desc_t src, const_dnnl_memory_desc_t dst,
                                   int nsp, const int64_t *strides, const int64_t *kernel,
                                   const int64_t *dilation, const int64_t *pad_l,
                                   const int64_t *pad_r) {
    dnnl_primitive_desc_t pd = NULL;
    dnnl_dims_t s, k, d, l, r;
    copy_dims(s, nsp, strides);
    copy_dims(k, nsp, kernel);
    copy_dims(d, nsp, dilation);
    copy_dims(l, nsp, pad_l);
    copy_dims(r, nsp, pad_r);
    CHECK(dnnl_pooling_forward_primitive_desc_create(&pd, engine, dnnl_forward_inference, alg,
                                                     src, dst, s, k, d, l, r, attr));
    return pd;
fail:
    return NULL;
}

dnnl_primitive_desc_t xr_dnnl_softmax(const_dnnl_primitive_attr_t attr,
                                      const_dnnl_memory_desc_t src, const_dnnl_memory_desc_t dst,
                                      int axis) {
    dnnl_primitive_desc_t pd = NULL;
    CHECK(dnnl_softmax_forward_primitive_desc_create(&pd, engine, dnnl_forward_inference,
                                                     dnnl_softmax_accurate, src, dst, axis, attr));
    return pd;
fail:
    return NULL;
}

dnnl_primitive_desc_t xr_dnnl_layer_norm(const_dnnl_primitive_attr_t attr,
                                         const_dnnl_memory_desc_t src,
                                         const_dnnl_memory_desc_t dst, float epsilon,
                                         unsigned flags) {
    dnnl_primitive_desc_t pd = NULL;
    CHECK(dnnl_layer_normalization_forward_primitive_desc_create(
        &pd, engine, dnnl_forward_inference, src, dst, NULL, epsilon, flags, attr));
    return pd;
fail:
    return NULL;
}

dnnl_primitive_desc_t xr_dnnl_eltwise(const_dnnl_primitive_attr_t attr, int alg,
                                      const_dnnl_memory_desc_t src, const_dnnl_memory_desc_t dst,
                                      float alpha, float beta) {
    dnnl_primitive_desc_t pd = NULL;
    CHECK(dnnl_eltwise_forward_primitive_desc_create(&pd, engine, dnnl_forward_inference, alg, src,
                                                     dst, alpha, beta, attr));
    return pd;
fail:
    return NULL;
}

dnnl_primitive_desc_t xr_dnnl_binary(const_dnnl_primitive_attr_t attr, int alg,
                                     const_dnnl_memory_desc_t src0,
                                     const_dnnl_memory_desc_t src1,
                                     const_dnnl_memory_desc_t dst) {
    dnnl_primitive_desc_t pd = NULL;
    CHECK(dnnl_binary_primitive_desc_create(&pd, engine, alg, src0, src1, dst, attr));
    return pd;
fail:
    return NULL;
}

dnnl_primitive_desc_t xr_dnnl_reorder(const_dnnl_memory_desc_t src,
                                      const_dnnl_memory_desc_t dst) {
    dnnl_primitive_desc_t pd = NULL;
    CHECK(dnnl_reorder_primitive_desc_create(&pd, src, engine, dst, engine, NULL));
    return pd;
fail:
    return NULL;
}

/* The implementation oneDNN chose ("brg:avx512_core", "jit:avx512_core", "gemm:jit", ...). */
const char *xr_dnnl_impl(const_dnnl_primitive_desc_t pd) {
    const char *info = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &info) != dnnl_success)
        return "";
    return info;
}

void xr_dnnl_pd_free(dnnl_primitive_desc_t pd) {
    if (pd) dnnl_primitive_desc_destroy(pd);
}

dnnl_primitive_t xr_dnnl_primitive(const_dnnl_primitive_desc_t pd) {
    dnnl_primitive_t p = NULL;
    CHECK(dnnl_primitive_create(&p, pd));
    return p;
fail:
    return NULL;
}

void xr_dnnl_primitive_free(dnnl_primitive_t p) {
    if (p) dnnl_primitive_destroy(p);
}

/* A memory object over the caller's bytes (never owned, never freed here). */
dnnl_memory_t xr_dnnl_memory(const_dnnl_memory_desc_t md, void *handle) {
    dnnl_memory_t m = NULL;
    CHECK(dnnl_memory_create(&m, md, engine, handle));
    return m;
fail:
    return NULL;
}

void xr_dnnl_memory_free(dnnl_memory_t m) {
    if (m) dnnl_memory_destroy(m);
}

#define MAX_ARGS 16

static int execute(const_dnnl_primitive_t p, int nargs, const int32_t *keys,
                   dnnl_memory_t const *mems) {
    dnnl_exec_arg_t args[MAX_ARGS];
    if (nargs > MAX_ARGS) return -1;
    for (int i = 0; i < nargs; i++) {
        args[i].arg = keys[i];
        args[i].memory = mems[i];
    }
    CHECK(dnnl_primitive_execute(p, stream, nargs, args));
    return 0;
fail:
    return last_status;
}

/* A Winograd F(4x4, 3x3) convolution runs as three steps of a run: the input transform of
   the NHWC source into 36 matrices v[k][tile][channel] (a workspace temporary), oneDNN's
   batched matmul of those by the transformed weights into m[k][tile][out channel], and the
   output transform of m into the NHWC destination with the bias, a residual (the sum
   post-op: a second NHWC tensor of the destination's shape) and a ReLU. The transforms
   are kernels of this file, not primitives: xr_dnnl_run tells them apart by a negative
   argument count, and they run on the same OpenMP threads as the primitives.
   A convolution run in bands (its workspace bounded: dnnl.partition.state_scratch's
   choice) repeats the three steps per band of tile rows [r0, r1) of image b, v and m then
   holding that band's tiles only. */
typedef struct {
    int kind; /* 1: input transform (src -> dst = v); 2: output transform (src = m -> dst) */
    int relu;
    i64 n, h, w, c; /* the convolution's NHWC source */
    i64 oh, ow, o;  /* its NHWC destination */
    i64 pt, pl;     /* top and left padding */
    i64 b, r0, r1;  /* a band: tile rows [r0, r1) of image b; r1 = 0: every tile of every image */
} xr_wino_t;

enum { ARG_SRC = 1, ARG_SRC_1 = 2, ARG_DST = 17, ARG_BIAS = 41 };

void *xr_dnnl_wino(int kind, int relu, const int64_t *shape) {
    xr_wino_t *k = calloc(1, sizeof *k);
    if (k == NULL) return NULL;
    k->kind = kind;
    k->relu = relu;
    k->n = shape[0], k->h = shape[1], k->w = shape[2], k->c = shape[3];
    k->oh = shape[4], k->ow = shape[5], k->o = shape[6], k->pt = shape[7], k->pl = shape[8];
    k->b = shape[9], k->r0 = shape[10], k->r1 = shape[11];
    const i64 th = (k->oh + 3) / 4;
    if (k->r1 != 0 && !(0 <= k->b && k->b < k->n && 0 <= k->r0 && k->r0 < k->r1 && k->r1 <= th)) {
        free(k); /* a band outside the image */
        return NULL;
    }
    return k;
}

void xr_dnnl_wino_free(void *k) { free(k); }

static void *handle_of(int nargs, const int32_t *keys, dnnl_memory_t const *mems, int key) {
    void *h = NULL;
    for (int i = 0; i < nargs; i++)
        if (keys[i] == key && dnnl_memory_get_data_handle(mems[i], &h) == dnnl_success) return h;
    return NULL;
}

/* The float32 dense kernel of AVX2 CPUs (xr_dnnl_gemm), on the same threads. */
#include "packed_gemm.h"

/* Convolutions of narrow groups on AVX2 CPUs (xr_dnnl_gconv), on the same threads. */
#include "grouped_conv.h"

typedef struct {
    const xr_wino_t *k;
    const float *src, *bias, *res;
    float *dst;
} wino_job_t;

/* One thread's share of the work items (image, tile row, block of NHWC_CB channels) of the
   whole convolution or of its band: an even contiguous cut, as a static OpenMP schedule. */
static void wino_part(void *arg) {
    const wino_job_t *job = arg;
    const xr_wino_t *k = job->k;
    const float *src = job->src, *bias = job->bias, *res = job->res;
    float *dst = job->dst;
    const int band = k->r1 != 0;
    const i64 th = (k->oh + 3) / 4, tw = (k->ow + 3) / 4;
    const i64 rows = band ? k->r1 - k->r0 : th, images = band ? 1 : k->n, first = band ? k->b : 0;
    const i64 rb = band ? k->r0 : 0, tiles = images * rows * tw;
    const i64 ch = k->kind == 1 ? k->c : k->o, blocks = (ch + NHWC_CB - 1) / NHWC_CB;
    const i64 items = images * rows * blocks, ks = tiles * ch;
    const i64 nt = omp_get_num_threads(), me = omp_get_thread_num();
    const i64 lo = items * me / nt, hi = items * (me + 1) / nt;
    for (i64 it = lo; it < hi; it++) {
        i64 i = it / (rows * blocks), r = rb + it / blocks % rows, c0 = it % blocks * NHWC_CB;
        i64 b = first + i, c1 = c0 + NHWC_CB < ch ? c0 + NHWC_CB : ch;
        if (k->kind == 1) {
            wino_input_hwc_xr(4, src + b * k->h * k->w * k->c, k->h, k->w, k->c,
                              dst + i * rows * tw * ch, ks, ch, tw, c0, c1, r, r + 1, rb, k->pt, k->pl);
            continue;
        }
        float *out = dst + b * k->oh * k->ow * k->o;
        wino_output_hwc_xr(4, src + i * rows * tw * ch, ks, ch, tw, out, k->oh, k->ow, k->o, c0, c1,
                           r, r + 1, rb);
        if (bias == NULL && res == NULL && !k->relu) continue;
        i64 y1 = 4 * r + 4 < k->oh ? 4 * r + 4 : k->oh;
        for (i64 y = 4 * r; y < y1; y++)
            for (i64 x = 0; x < k->ow; x++) {
                i64 at = ((b * k->oh + y) * k->ow + x) * k->o;
                float *row = dst + at;
                if (bias != NULL)
#pragma GCC ivdep
                    for (i64 q = c0; q < c1; q++) row[q] += bias[q];
                if (res != NULL)
#pragma GCC ivdep
                    for (i64 q = c0; q < c1; q++) row[q] += res[at + q];
                if (k->relu)
#pragma GCC ivdep
                    for (i64 q = c0; q < c1; q++) row[q] = row[q] > 0.0f ? row[q] : 0.0f;
            }
    }
}

/* The transform as one parallel region of libgomp, the OpenMP runtime libdnnl.so.3 runs on
   (called through its ABI, so the shim needs no OpenMP flag of its own compiler, which
   could bring a second runtime), with the thread count oneDNN's primitives use. */
static int wino_run(const xr_wino_t *k, int nargs, const int32_t *keys, dnnl_memory_t const *mems) {
    wino_job_t job = {k, handle_of(nargs, keys, mems, ARG_SRC), handle_of(nargs, keys, mems, ARG_BIAS),
                      handle_of(nargs, keys, mems, ARG_SRC_1), handle_of(nargs, keys, mems, ARG_DST)};
    if (job.src == NULL || job.dst == NULL) return -1;
    if (job.res == job.dst) return -2; /* the residual is read after the transform writes dst */
    GOMP_parallel(wino_part, &job, (unsigned)omp_get_max_threads(), 0);
    return 0;
}

/* A concatenation with its elementwise epilogue (xrelay.runtime.dnnl.primitives, for the
   functions backend/dnnl/partition.py's offload_concatenations outlines): the native
   kernels' concat_epi (native_concat.h) on the same OpenMP threads as the primitives, so a
   run of oneDNN steps is not cut by a native step between them. The result is viewed as
   (outer, l, inner), input k as (outer, lens[k], inner); the epilogue's operands are
   copies owned here. Arguments: the inputs as DNNL_ARG_MULTIPLE_SRC + k, the result as
   ARG_DST. */
typedef struct {
    int kind; /* 3 (a Winograd transform's kind is 1 or 2) */
    i64 outer, l, inner, nin;
    i64 *lens;
    float *ops[4];
    i64 steps[4], codes[4], swapped[4];
} xr_concat_t;

enum { ARG_MULTIPLE_SRC = 1024 };

void xr_dnnl_concat_free(void *p) {
    xr_concat_t *k = p;
    if (k == NULL) return;
    free(k->lens);
    for (int i = 0; i < 4; i++) free(k->ops[i]);
    free(k);
}

/* shape: outer, l, inner, nin; lens[nin]; for each of the four ops: code (-1: none),
   swapped, step (0 or 1) and the operand's length (l, or 1 for a scalar) in values. */
void *xr_dnnl_concat(const int64_t *shape, const int64_t *lens, const int64_t *ops,
                     const float *const *values) {
    xr_concat_t *k = calloc(1, sizeof *k);
    if (k == NULL) return NULL;
    k->kind = 3;
    k->outer = shape[0], k->l = shape[1], k->inner = shape[2], k->nin = shape[3];
    k->lens = malloc(sizeof(i64) * (size_t)(k->nin > 0 ? k->nin : 1));
    if (k->lens == NULL) goto fail;
    for (i64 i = 0; i < k->nin; i++) k->lens[i] = lens[i];
    for (int i = 0; i < 4; i++) {
        k->codes[i] = ops[4 * i], k->swapped[i] = ops[4 * i + 1], k->steps[i] = ops[4 * i + 2];
        i64 n = ops[4 * i + 3] > 0 ? ops[4 * i + 3] : 1;
        k->ops[i] = malloc(sizeof(float) * (size_t)n);
        if (k->ops[i] == NULL) goto fail;
        for (i64 j = 0; j < n; j++) k->ops[i][j] = k->codes[i] >= 0 ? values[i][j] : 0.0f;
    }
    return k;
fail:
    xr_dnnl_concat_free(k);
    return NULL;
}

typedef struct {
    const xr_concat_t *k;
    int64_t ins[64];
    float *dst;
} concat_job_t;

static void concat_part(void *arg) {
    const concat_job_t *job = arg;
    const xr_concat_t *k = job->k;
    const i64 nt = omp_get_num_threads(), me = omp_get_thread_num();
    const i64 lo = k->outer * me / nt, hi = k->outer * (me + 1) / nt;
    if (lo < hi)
        concat_epi_xr(job->dst, k->l, k->inner, lo, hi, k->nin, job->ins, k->lens, k->ops[0],
                      k->ops[1], k->ops[2], k->ops[3], k->steps, k->codes, k->swapped);
}

static int concat_run(const xr_concat_t *k, int nargs, const int32_t *keys, dnnl_memory_t const *mems) {
    concat_job_t job = {k, {0}, handle_of(nargs, keys, mems, ARG_DST)};
    if (k->nin > 64 || job.dst == NULL) return -1;
    for (i64 i = 0; i < k->nin; i++) {
        void *h = handle_of(nargs, keys, mems, ARG_MULTIPLE_SRC + (int)i);
        if (h == NULL) return -1;
        job.ins[i] = (int64_t)(intptr_t)h;
    }
    /* small results on the calling thread: a parallel region costs more than the copy */
    GOMP_parallel(concat_part, &job, k->outer * k->l * k->inner < 4096 ? 1u : (unsigned)omp_get_max_threads(), 0);
    return 0;
}

/* Native jobs inside a run (xrelay.runtime.executor joins a native step whose thunks are
   all jobs of C parts or single C calls into the oneDNN run around it): each job is a quad
   (fn, job, parts, slots), fn(job, part, slot) the part function of the native engine's pool
   (xrelay_native_run's protocol); here the parts run on the same OpenMP team as the
   primitives, each thread taking the next part from one counter with its thread number as
   the slot, so the run is not cut by a hand-over to the native pool and back. */
typedef void (*xr_part_fn)(const void *job, int64_t part, int64_t slot);
typedef struct {
    int kind; /* 4 */
    i64 n;
    int64_t *quads; /* n x (fn, job, parts, slots) */
} xr_native_t;

void *xr_dnnl_native(int64_t n, const int64_t *quads) {
    xr_native_t *k = calloc(1, sizeof *k);
    if (k == NULL) return NULL;
    k->kind = 4;
    k->n = n;
    k->quads = malloc(sizeof(int64_t) * 4 * (size_t)(n > 0 ? n : 1));
    if (k->quads == NULL) {
        free(k);
        return NULL;
    }
    for (i64 i = 0; i < 4 * n; i++) k->quads[i] = quads[i];
    return k;
}

void xr_dnnl_native_free(void *p) {
    xr_native_t *k = p;
    if (k == NULL) return;
    free(k->quads);
    free(k);
}

typedef struct {
    xr_part_fn fn;
    const void *job;
    i64 parts;
    i64 next; /* the next part to take (atomic) */
} native_team_t;

static void native_team_part(void *arg) {
    native_team_t *t = arg;
    const i64 slot = omp_get_thread_num();
    for (;;) {
        const i64 p = __atomic_fetch_add(&t->next, 1, __ATOMIC_RELAXED);
        if (p >= t->parts) return;
        t->fn(t->job, p, slot);
    }
}

static void native_run(const xr_native_t *k, int threads) {
    for (i64 i = 0; i < k->n; i++) {
        const int64_t *q = k->quads + 4 * i;
        native_team_t t = {(xr_part_fn)(intptr_t)q[0], (const void *)(intptr_t)q[1], q[2], 0};
        const i64 team = threads < q[3] ? threads : q[3];
        if (t.parts > 1 && team > 1)
            GOMP_parallel(native_team_part, &t, (unsigned)team, 0);
        else
            for (i64 p = 0; p < t.parts; p++) t.fn(t.job, p, 0);
    }
}

/* SiLU (swish, x * sigmoid(alpha x)) in place over a convolution's or matmul's destination,
   the step after the primitive that wrote it (xrelay.runtime.dnnl.primitives: a swish that
   ends a composite's epilogue): oneDNN 3.2's eltwise_swish post-op costs about five times
   its ReLU on this AVX-512 CPU, this pass about a third of that (see docs/guide/runtime.md).
   y = x / (1 + exp(-alpha x)), exp as 2^n * p(r) with r = t - n ln2 in [-ln2/2, ln2/2], p
   of degree 6 (relative error ~1e-7), 2^n by scalef (overflow to inf, underflow to 0, so y
   goes to -0 and x at the ends), 1/d by rcp14 and one Newton step. The destination is
   contiguous (bind refuses other arena tensors); each thread takes a contiguous cut of whole vectors.
   The pass reads ARG_SRC where the step has one (a GELU by itself, dnnl.gelu), else the
   destination (in place, after the primitive that wrote it).
   The same pass computes GELU's tanh form, 0.5 x (1 + tanh(c (x + 0.044715 x^3))) = x / (1 +
   exp(-2c (x + 0.044715 x^3))): y = x / (1 + exp(-(alpha x + cubic x^3))), cubic = 0 for a SiLU
   (oneDNN 3.2's gelu_tanh ran 1.3 ms over GPT-2's 128 x 3072 on a Zen 3, its gelu_erf 0.25). */
typedef struct {
    int kind; /* 5 */
    float alpha, cubic;
    i64 n;
} xr_silu_t;

void *xr_dnnl_silu(int64_t n, float alpha, float cubic) {
    xr_silu_t *k = calloc(1, sizeof *k);
    if (k == NULL) return NULL;
    k->kind = 5, k->alpha = alpha, k->cubic = cubic, k->n = n;
    return k;
}

void xr_dnnl_silu_free(void *k) { free(k); }

static float silu1(float x, float alpha, float cubic) {
    return x / (1.0f + expf(cubic != 0.0f ? -(alpha * x + cubic * x * x * x) : -alpha * x));
}

#if defined(__AVX512F__)
#include <immintrin.h>
static void silu_span(const float *x0, float *y, i64 lo, i64 hi, float alpha, float cubic) {
    const __m512 na = _mm512_set1_ps(-alpha), nc = _mm512_set1_ps(-cubic), log2e = _mm512_set1_ps(1.44269504088896341f);
    const __m512 ln2hi = _mm512_set1_ps(0.693145751953125f), ln2lo = _mm512_set1_ps(1.42860682030941723e-6f);
    const __m512 lim = _mm512_set1_ps(100.0f), one = _mm512_set1_ps(1.0f);
    const __m512 c2 = _mm512_set1_ps(1.0f / 2), c3 = _mm512_set1_ps(1.0f / 6), c4 = _mm512_set1_ps(1.0f / 24);
    const __m512 c5 = _mm512_set1_ps(1.0f / 120), c6 = _mm512_set1_ps(1.0f / 720);
    i64 i = lo;
    for (; i + 16 <= hi; i += 16) {
        __m512 x = _mm512_loadu_ps(x0 + i);
        /* exp(t), t = -alpha x (- cubic x^3), clamped to +-100 (NaN: x's) */
        __m512 t = cubic != 0.0f ? _mm512_mul_ps(x, _mm512_fmadd_ps(nc, _mm512_mul_ps(x, x), na)) : _mm512_mul_ps(x, na);
        t = _mm512_max_ps(_mm512_min_ps(t, lim), _mm512_sub_ps(_mm512_setzero_ps(), lim));
        __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(t, log2e), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        __m512 r = _mm512_fnmadd_ps(n, ln2hi, t);
        r = _mm512_fnmadd_ps(n, ln2lo, r);
        __m512 p = _mm512_fmadd_ps(c6, r, c5);
        p = _mm512_fmadd_ps(p, r, c4);
        p = _mm512_fmadd_ps(p, r, c3);
        p = _mm512_fmadd_ps(p, r, c2);
        p = _mm512_fmadd_ps(p, r, one);
        p = _mm512_fmadd_ps(p, r, one);
        __m512 d = _mm512_add_ps(_mm512_scalef_ps(p, n), one);
        __m512 q = _mm512_rcp14_ps(d); /* 1/d: 14 bits, then one Newton step */
        q = _mm512_fmadd_ps(q, _mm512_fnmadd_ps(d, q, one), q);
        /* d = inf (x << 0): rcp14 gives 0 and the Newton step NaN; 1/inf is 0 */
        q = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(d, _mm512_set1_ps(3.0e38f), _CMP_GT_OQ), q, _mm512_setzero_ps());
        _mm512_storeu_ps(y + i, _mm512_mul_ps(x, q));
    }
    for (; i < hi; i++) y[i] = silu1(x0[i], alpha, cubic);
}
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
/* The same exp(t) with AVX2 (8 lanes; scalar expf took EfficientNet-B0's SiLUs to twice
 * onnxruntime's time on an AVX2 CPU): 2^n, |n| <= 145 after the clamp, as two factors
 * 2^(n/2) 2^(n - n/2), each built in the exponent field of a normal float (AVX2 has no
 * scalef), then x / (1 + exp(t)) by a division (no rcp14) */
static void silu_span(const float *x0, float *y, i64 lo, i64 hi, float alpha, float cubic) {
    const __m256 na = _mm256_set1_ps(-alpha), nc = _mm256_set1_ps(-cubic), log2e = _mm256_set1_ps(1.44269504088896341f);
    const __m256 ln2hi = _mm256_set1_ps(0.693145751953125f), ln2lo = _mm256_set1_ps(1.42860682030941723e-6f);
    const __m256 lim = _mm256_set1_ps(100.0f), one = _mm256_set1_ps(1.0f);
    const __m256 c2 = _mm256_set1_ps(1.0f / 2), c3 = _mm256_set1_ps(1.0f / 6), c4 = _mm256_set1_ps(1.0f / 24);
    const __m256 c5 = _mm256_set1_ps(1.0f / 120), c6 = _mm256_set1_ps(1.0f / 720);
    const __m256i bias = _mm256_set1_epi32(127);
    i64 i = lo;
    for (; i + 8 <= hi; i += 8) {
        __m256 x = _mm256_loadu_ps(x0 + i);
        /* exp(t), t = -alpha x (- cubic x^3), clamped to +-100 (NaN: x's) */
        __m256 t = cubic != 0.0f ? _mm256_mul_ps(x, _mm256_fmadd_ps(nc, _mm256_mul_ps(x, x), na)) : _mm256_mul_ps(x, na);
        t = _mm256_max_ps(_mm256_min_ps(t, lim), _mm256_sub_ps(_mm256_setzero_ps(), lim));
        __m256 n = _mm256_round_ps(_mm256_mul_ps(t, log2e), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        __m256 r = _mm256_fnmadd_ps(n, ln2hi, t);
        r = _mm256_fnmadd_ps(n, ln2lo, r);
        __m256 p = _mm256_fmadd_ps(c6, r, c5);
        p = _mm256_fmadd_ps(p, r, c4);
        p = _mm256_fmadd_ps(p, r, c3);
        p = _mm256_fmadd_ps(p, r, c2);
        p = _mm256_fmadd_ps(p, r, one);
        p = _mm256_fmadd_ps(p, r, one);
        const __m256i ni = _mm256_cvtps_epi32(n), half = _mm256_srai_epi32(ni, 1);
        const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(half, bias), 23));
        const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(ni, half), bias), 23));
        const __m256 d = _mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(p, s1), s2), one); /* inf for x << 0: x / d is 0 */
        _mm256_storeu_ps(y + i, _mm256_div_ps(x, d));
    }
    for (; i < hi; i++) y[i] = silu1(x0[i], alpha, cubic);
}
#else
static void silu_span(const float *x0, float *y, i64 lo, i64 hi, float alpha, float cubic) {
    for (i64 i = lo; i < hi; i++) y[i] = silu1(x0[i], alpha, cubic);
}
#endif

typedef struct {
    const xr_silu_t *k;
    const float *src; /* the destination itself for the pass after a primitive */
    float *dst;
} silu_job_t;

static void silu_part(void *arg) {
    const silu_job_t *job = arg;
    const i64 nt = omp_get_num_threads(), me = omp_get_thread_num(), vecs = (job->k->n + 15) / 16;
    i64 lo = vecs * me / nt * 16, hi = vecs * (me + 1) / nt * 16;
    if (hi > job->k->n) hi = job->k->n;
    if (lo < hi) silu_span(job->src, job->dst, lo, hi, job->k->alpha, job->k->cubic);
}

static int silu_run(const xr_silu_t *k, int nargs, const int32_t *keys, dnnl_memory_t const *mems) {
    silu_job_t job = {k, handle_of(nargs, keys, mems, ARG_SRC), handle_of(nargs, keys, mems, ARG_DST)};
    if (job.dst == NULL) return -1;
    if (job.src == NULL) job.src = job.dst; /* in place, after the primitive that wrote it */
    /* small tensors on the calling thread: a parallel region costs more than the pass */
    GOMP_parallel(silu_part, &job, k->n < 16384 ? 1u : (unsigned)omp_get_max_threads(), 0);
    return 0;
}

/* A step cut in parts (xrelay.runtime.dnnl.primitives: a convolution's output rows), each
   part a primitive made for one thread, run by the caller and the part workers below, each
   taking the next part from one counter. Part p runs primitive prims[p] with nargs[p]
   arguments from keys[first[p]...]; the memories of slot s (its own scratchpad) are
   mems[s * total + first[p] ...]. */
typedef struct {
    int kind; /* 6 */
    int parts, slots, total;
    dnnl_primitive_t *prims; /* or, where custom[p], the packed dense kernel of part p */
    int32_t *nargs, *first, *keys, *custom;
    dnnl_memory_t *mems;
    /* the uncut step (xr_dnnl_parts_whole): run instead while xr_dnnl_parts_mode is 0 */
    dnnl_primitive_t whole;
    int whole_n, whole_custom;
    int32_t whole_keys[MAX_ARGS];
    dnnl_memory_t whole_mems[MAX_ARGS];
} xr_parts_t;

/* nargs < 0: the whole step is a packed dense kernel (xr_dnnl_gemm) of -nargs arguments. */
int xr_dnnl_parts_whole(void *p, void *prim, int nargs, const int32_t *keys, void *const *mems) {
    xr_parts_t *k = p;
    const int custom = nargs < 0;
    nargs = custom ? -nargs : nargs;
    if (k == NULL || nargs > MAX_ARGS) return -1;
    k->whole = prim, k->whole_n = nargs, k->whole_custom = custom;
    for (int i = 0; i < nargs; i++) k->whole_keys[i] = keys[i], k->whole_mems[i] = mems[i];
    return 0;
}

void xr_dnnl_parts_free(void *p) {
    xr_parts_t *k = p;
    if (k == NULL) return;
    free(k->prims), free(k->nargs), free(k->first), free(k->keys), free(k->mems), free(k->custom);
    free(k);
}

/* nargs[p] < 0: part p is a packed dense kernel (xr_dnnl_gemm) of -nargs[p] arguments. */
void *xr_dnnl_parts(int parts, int slots, void *const *prims, const int32_t *nargs,
                    const int32_t *keys, void *const *mems) {
    xr_parts_t *k = calloc(1, sizeof *k);
    if (k == NULL || parts < 1 || slots < 1) goto fail;
    k->kind = 6, k->parts = parts, k->slots = slots;
    for (int p = 0; p < parts; p++) {
        const int n = nargs[p] < 0 ? -nargs[p] : nargs[p];
        if (n > MAX_ARGS) goto fail;
        k->total += n;
    }
    k->prims = malloc(sizeof(void *) * (size_t)parts);
    k->nargs = malloc(sizeof(int32_t) * (size_t)parts);
    k->first = malloc(sizeof(int32_t) * (size_t)parts);
    k->custom = malloc(sizeof(int32_t) * (size_t)parts);
    k->keys = malloc(sizeof(int32_t) * (size_t)(k->total + 1));
    k->mems = malloc(sizeof(void *) * (size_t)(k->total * slots + 1));
    if (!k->prims || !k->nargs || !k->first || !k->custom || !k->keys || !k->mems) goto fail;
    for (int p = 0, f = 0; p < parts; f += k->nargs[p], p++) {
        k->custom[p] = nargs[p] < 0;
        k->prims[p] = prims[p], k->nargs[p] = nargs[p] < 0 ? -nargs[p] : nargs[p], k->first[p] = f;
    }
    for (int i = 0; i < k->total; i++) k->keys[i] = keys[i];
    for (int i = 0; i < k->total * slots; i++) k->mems[i] = mems[i];
    return k;
fail:
    xr_dnnl_parts_free(k);
    return NULL;
}

/* The part workers: threads of this library (not OpenMP's), each with its own stream and
   one OpenMP thread, that SLEEP on a condition variable between steps. When another process
   holds a core, a worker woken for a step gets that core's share at once (the scheduler
   favours a thread that slept) and takes parts while it has it; one that wakes late finds
   the parts taken and sleeps again, and the caller, which took the parts it did not,
   waits only for parts a worker has started. A spinning team (OpenMP's, or workers that
   spin) instead spends its share of the busy core waiting and is preempted inside its
   static part. A worker keeps off the CPU the caller posted the step from (avoid_cpu),
   and the caller claims the first part (the larger of a long step's) before it posts; a
   caller kept waiting for a worker's part moves that worker to its own CPU and sleeps
   (wait_parts).
   next holds (generation << 32 | next part): a worker claims a part only by
   a compare-and-swap on the generation it read, and the caller closes a step's counter
   (CLOSED) before it publishes the next step, so a late worker never takes a part of a
   step with another step's counter. */
#define MAX_WORKERS 15
#define CLOSED 0x7fffffffLL
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int64_t posted; /* bumped per step, under mu */
    const xr_parts_t *job;
    int64_t next, done, gen;
    int workers, busy, error;
    int64_t taken; /* parts the workers ran, ever */
    pthread_cond_t done_cv; /* a worker finished a part while the caller sleeps (waiting) */
    int waiting;
    int holding[MAX_WORKERS + 1]; /* slot s runs a part */
    int moved[MAX_WORKERS + 1];   /* slot s was moved to the caller's CPU */
    int64_t rescued;              /* steps whose waiting caller moved a worker, ever */
} team = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, NULL, CLOSED, 0, 0, 0, 0, 0, 0,
          PTHREAD_COND_INITIALIZER, 0, {0}, {0}, 0};

static int part_exec(const xr_parts_t *k, int p, int slot, dnnl_stream_t s) {
    dnnl_exec_arg_t args[MAX_ARGS];
    const int n = k->nargs[p], f = k->first[p];
    if (k->custom[p]) /* (on this thread alone: part workers and the one-thread program run one OpenMP thread) */
        return gemm_run((const xr_gemm_t *)k->prims[p], n, k->keys + f, k->mems + (size_t)slot * k->total + f);
    for (int i = 0; i < n; i++) {
        args[i].arg = k->keys[f + i];
        args[i].memory = k->mems[(size_t)slot * k->total + f + i];
    }
    return dnnl_primitive_execute(k->prims[p], s, n, args);
}

static int64_t hold_ns; /* xr_dnnl_parts_hold: how long a worker waits in each part it takes */

/* Tests: each worker part waits ns before it runs, as a worker preempted while it holds a
   part would (0: none, the default). */
void xr_dnnl_parts_hold(int64_t ns) { __atomic_store_n(&hold_ns, ns, __ATOMIC_RELAXED); }

static void take_parts(int slot, dnnl_stream_t s) {
    for (;;) {
        int64_t v = __atomic_load_n(&team.next, __ATOMIC_ACQUIRE);
        const xr_parts_t *k = __atomic_load_n(&team.job, __ATOMIC_ACQUIRE);
        if (k == NULL || (v & 0xffffffffLL) >= k->parts || slot >= k->slots) return;
        if (!__atomic_compare_exchange_n(&team.next, &v, v + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            continue;
        if (slot > 0) {
            __atomic_store_n(&team.holding[slot], 1, __ATOMIC_SEQ_CST);
            const int64_t hold = __atomic_load_n(&hold_ns, __ATOMIC_RELAXED);
            if (hold > 0) { /* (tests: a worker descheduled while it holds a part) */
                struct timespec t = {hold / 1000000000, hold % 1000000000};
                nanosleep(&t, NULL);
            }
        }
        if (part_exec(k, (int)(v & 0xffffffffLL), slot, s) != dnnl_success)
            __atomic_store_n(&team.error, 1, __ATOMIC_RELAXED);
        if (slot == 0) {
            __atomic_fetch_add(&team.done, 1, __ATOMIC_RELEASE);
            continue;
        }
        __atomic_store_n(&team.holding[slot], 0, __ATOMIC_SEQ_CST);
        __atomic_fetch_add(&team.taken, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&team.done, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&team.waiting, __ATOMIC_SEQ_CST)) {
            pthread_mutex_lock(&team.mu);
            pthread_cond_signal(&team.done_cv);
            pthread_mutex_unlock(&team.mu);
        }
    }
}

static int64_t spin_ns; /* how long a worker waits for the next step spinning before it sleeps */

void xr_dnnl_parts_spin(int64_t ns) { __atomic_store_n(&spin_ns, ns, __ATOMIC_RELAXED); }

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int caller_cpu = -1; /* the CPU the caller posted the latest step from */

/* Keep the calling worker off cpu (when it is not already): woken by the caller, the
   scheduler would often queue it on the caller's own CPU, where it preempts the caller
   and the two share one core while the other core's share goes to the other process. */
static void avoid_cpu(int cpu, int *avoided, const cpu_set_t *allowed) {
    if (cpu < 0 || cpu == *avoided || !CPU_ISSET(cpu, allowed)) return;
    cpu_set_t m = *allowed;
    CPU_CLR(cpu, &m);
    if (CPU_COUNT(&m) > 0 && sched_setaffinity(0, sizeof m, &m) == 0) *avoided = cpu;
}

static void *part_worker(void *arg) {
    const int slot = (int)(intptr_t)arg;
    dnnl_stream_t s = NULL;
    cpu_set_t allowed; /* the process's CPUs when the worker started */
    int avoided = -1;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) CPU_ZERO(&allowed);
    omp_set_num_threads(1); /* the parts' primitives are made for one thread */
    if (dnnl_stream_create(&s, engine, dnnl_stream_default_flags) != dnnl_success) return NULL;
    int64_t seen = 0;
    for (;;) {
        if (__atomic_exchange_n(&team.moved[slot], 0, __ATOMIC_ACQ_REL)) {
            avoided = -1; /* moved to the caller's CPU for the part it held: off it again */
            avoid_cpu(__atomic_load_n(&caller_cpu, __ATOMIC_RELAXED), &avoided, &allowed);
        }
        const int64_t spin = __atomic_load_n(&spin_ns, __ATOMIC_RELAXED);
        if (spin > 0 && __atomic_load_n(&team.posted, __ATOMIC_ACQUIRE) == seen) {
            const int64_t end = now_ns() + spin;
            while (__atomic_load_n(&team.posted, __ATOMIC_ACQUIRE) == seen && now_ns() < end) {
#if defined(__x86_64__) || defined(__i386__)
                __builtin_ia32_pause();
#endif
            }
        }
        if (__atomic_load_n(&team.posted, __ATOMIC_ACQUIRE) == seen) {
            pthread_mutex_lock(&team.mu);
            while (team.posted == seen) pthread_cond_wait(&team.cv, &team.mu);
            pthread_mutex_unlock(&team.mu);
        }
        seen = __atomic_load_n(&team.posted, __ATOMIC_ACQUIRE);
        if (__atomic_exchange_n(&team.moved[slot], 0, __ATOMIC_ACQ_REL)) avoided = -1;
        avoid_cpu(__atomic_load_n(&caller_cpu, __ATOMIC_RELAXED), &avoided, &allowed);
        take_parts(slot, s);
    }
    return NULL;
}

/* Workers started so far (they live as long as the process). */
int xr_dnnl_part_workers(void) { return __atomic_load_n(&team.workers, __ATOMIC_ACQUIRE); }

static pthread_t worker_ids[MAX_WORKERS];

/* The CPU seconds the part workers have used since they started (their threads' clocks):
   the executor adds those of a one-thread run to the other cores' idle time it reads, as
   time a team would have had there (runtime.executor, RunChooser's idle signal). */
double xr_dnnl_parts_cpu(void) {
    double total = 0.0;
    const int n = __atomic_load_n(&team.workers, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        clockid_t clock;
        struct timespec t;
        if (pthread_getcpuclockid(worker_ids[i], &clock) == 0 && clock_gettime(clock, &t) == 0)
            total += (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
    }
    return total;
}

/* Parts the workers have run since the process started. */
int64_t xr_dnnl_parts_taken(void) { return __atomic_load_n(&team.taken, __ATOMIC_RELAXED); }

static int in_parts = 1; /* xr_dnnl_parts_mode: 1 the steps in parts, 0 the uncut steps */

/* Whether the next steps run in parts (1) or uncut on the caller (0): the same bits either
   way (each part runs the uncut step's kernel over its rows); xrelay.runtime.dnnl.parts'
   PartsChoice picks, run by run, by the measured times. */
void xr_dnnl_parts_mode(int mode) { __atomic_store_n(&in_parts, mode, __ATOMIC_RELAXED); }

static int whole_exec(const xr_parts_t *k) {
    dnnl_exec_arg_t args[MAX_ARGS];
    if (k->whole_custom) return gemm_run((const xr_gemm_t *)k->whole, k->whole_n, k->whole_keys, k->whole_mems);
    for (int i = 0; i < k->whole_n; i++) args[i].arg = k->whole_keys[i], args[i].memory = k->whole_mems[i];
    return dnnl_primitive_execute(k->whole, stream, k->whole_n, args);
}

static void post(void) {
    pthread_mutex_lock(&team.mu);
    __atomic_store_n(&team.posted, team.posted + 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&team.cv);
    pthread_mutex_unlock(&team.mu);
}

static int64_t rescue_on; /* xr_dnnl_parts_rescue: 0 off, else the least wait (ns) before a rescue */
void xr_dnnl_parts_rescue(int64_t on) { __atomic_store_n(&rescue_on, on, __ATOMIC_RELAXED); }
int64_t xr_dnnl_parts_rescued(void) { return __atomic_load_n(&team.rescued, __ATOMIC_RELAXED); }

/* The caller, its parts done, waits for the parts workers hold: spinning while that has
   taken no longer than its own parts did (mine ns; a worker's part is no larger), then, the
   worker most likely preempted on the other process's core, it moves each worker that
   holds a part to its own CPU and sleeps until the parts are done: the worker finishes on
   the core the caller leaves free, where it would otherwise wait for the scheduler's next
   turn on a busy one (up to a slice, milliseconds). The worker keeps off the caller's CPU
   again before its next step. */
static void wait_parts(int parts, int64_t mine) {
    const int64_t least = __atomic_load_n(&rescue_on, __ATOMIC_RELAXED);
    const int64_t until = now_ns() + (mine > least ? mine : least);
    while (__atomic_load_n(&team.done, __ATOMIC_ACQUIRE) < parts) {
        if (least > 0 && now_ns() > until) break;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    if (__atomic_load_n(&team.done, __ATOMIC_ACQUIRE) >= parts) return;
    cpu_set_t here;
    const int cpu = sched_getcpu();
    CPU_ZERO(&here);
    if (cpu >= 0) CPU_SET(cpu, &here);
    const int n = __atomic_load_n(&team.workers, __ATOMIC_ACQUIRE);
    int any = 0;
    for (int w = 0; w < n && cpu >= 0; w++) {
        if (!__atomic_load_n(&team.holding[w + 1], __ATOMIC_SEQ_CST)) continue;
        if (pthread_setaffinity_np(worker_ids[w], sizeof here, &here) == 0)
            __atomic_store_n(&team.moved[w + 1], 1, __ATOMIC_RELEASE), any = 1;
    }
    if (any) __atomic_fetch_add(&team.rescued, 1, __ATOMIC_RELAXED);
    pthread_mutex_lock(&team.mu);
    __atomic_store_n(&team.waiting, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&team.done, __ATOMIC_SEQ_CST) < parts) pthread_cond_wait(&team.done_cv, &team.mu);
    __atomic_store_n(&team.waiting, 0, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&team.mu);
}

static int parts_run(const xr_parts_t *k) {
    const int want = k->slots - 1 < MAX_WORKERS ? k->slots - 1 : MAX_WORKERS;
    int status = 0;
    if (k->whole != NULL && !__atomic_load_n(&in_parts, __ATOMIC_RELAXED)) return whole_exec(k);
    if (__atomic_exchange_n(&team.busy, 1, __ATOMIC_ACQUIRE)) {
        /* another thread's run holds the workers: the step here, uncut */
        if (k->whole != NULL) return whole_exec(k);
        for (int p = 0; p < k->parts && status == 0; p++) status = part_exec(k, p, 0, stream);
        return status;
    }
    while (team.workers < want) {
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        int failed = pthread_create(&t, &a, part_worker, (void *)(intptr_t)(team.workers + 1));
        pthread_attr_destroy(&a);
        if (failed) break;
        pthread_setname_np(t, "xrelay-parts"); /* (in top, ps -L and the tests) */
        worker_ids[team.workers] = t;
        __atomic_store_n(&team.workers, team.workers + 1, __ATOMIC_RELEASE);
    }
    team.error = 0;
    __atomic_store_n(&team.done, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&team.job, k, __ATOMIC_RELEASE);
    team.gen++;
    /* the caller's part is the first (the largest: xrelay.runtime.dnnl.parts.row_cuts),
       claimed before a worker can see the step */
    const int64_t start = now_ns();
    __atomic_store_n(&team.next, (team.gen << 32) | 1, __ATOMIC_RELEASE);
    __atomic_store_n(&caller_cpu, sched_getcpu(), __ATOMIC_RELAXED);
    if (team.workers > 0) post();
    if (part_exec(k, 0, 0, stream) != dnnl_success) __atomic_store_n(&team.error, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&team.done, 1, __ATOMIC_RELEASE);
    take_parts(0, stream);
    wait_parts(k->parts, now_ns() - start);
    __atomic_store_n(&team.next, (team.gen << 32) | CLOSED, __ATOMIC_RELEASE);
    status = __atomic_load_n(&team.error, __ATOMIC_RELAXED) ? -3 : 0;
    __atomic_store_n(&team.busy, 0, __ATOMIC_RELEASE);
    return status;
}

/* Strided copies: a function that only moves data (a channel shuffle's concatenation,
   transpose and split, a window partition, a roll as slices and concatenations, layout
   transforms between them; what backend/dnnl/partition.py's offload_movement outlines) as
   the patterns runtime/native/movement.py finds, run on the same OpenMP threads as the
   primitives. Pattern p copies, for every index (k_0 .. k_{d-1}) below dims, the element
   src + s0 + sum k_j ss_j of input in to dst + o0 + sum k_j ds_j of output out (offsets in
   elements of esize bytes); a last level of unit strides is a memcpy of its row. The rows
   (every index but the last level's) of all patterns are cut evenly among the threads.
   A float32 function with one result may end in a chain of up to four elementwise ops
   (add, subtract, multiply, maximum, minimum; Swin's residual add after the window
   reverse), each with an input of the result's shape read at the destination's offset:
   each element then goes through the chain on its way, one pass over the result.
   Arguments: input k as ARG_MULTIPLE_SRC + k, output r as ARG_MULTIPLE_DST + r. */
#define COPY_LEVELS 8
typedef struct {
    i64 in, out, d, s0, o0;
    i64 dims[COPY_LEVELS], ss[COPY_LEVELS], ds[COPY_LEVELS];
    i64 rows; /* the product of dims but the last */
} copy_pattern_t;

typedef struct {
    int kind; /* 7 */
    i64 n, esize, nin, nout, rows, bytes;
    i64 ntail, tail[4][3]; /* the chain: (code, swapped, input) per op */
    copy_pattern_t *p;
} xr_copies_t;

enum { ARG_MULTIPLE_DST = 2048, COPY_WIDTH = 5 + 3 * COPY_LEVELS };

void xr_dnnl_copies_free(void *p) {
    xr_copies_t *k = p;
    if (k == NULL) return;
    free(k->p);
    free(k);
}

/* shape: n, esize, inputs, outputs, chain ops, then (code, swapped, input) per chain op;
   table: n rows of COPY_WIDTH (in, out, d, s0, o0, then dims, ss and ds, COPY_LEVELS
   each). NULL for a pattern or chain outside these limits. */
void *xr_dnnl_copies(const int64_t *shape, const int64_t *table) {
    xr_copies_t *k = calloc(1, sizeof *k);
    if (k == NULL) return NULL;
    k->kind = 7;
    k->n = shape[0], k->esize = shape[1], k->nin = shape[2], k->nout = shape[3], k->ntail = shape[4];
    k->p = calloc((size_t)(k->n > 0 ? k->n : 1), sizeof *k->p);
    if (k->p == NULL || k->nin > 64 || k->nout > 64 || k->esize < 1 || k->ntail < 0 || k->ntail > 4) goto fail;
    if (k->ntail > 0 && (k->esize != 4 || k->nout != 1)) goto fail;
    for (i64 t = 0; t < k->ntail; t++) {
        for (int j = 0; j < 3; j++) k->tail[t][j] = shape[5 + 3 * t + j];
        if (k->tail[t][0] < 0 || k->tail[t][0] > 4 || k->tail[t][2] < 0 || k->tail[t][2] >= k->nin) goto fail;
    }
    for (i64 i = 0; i < k->n; i++) {
        const int64_t *t = table + i * COPY_WIDTH;
        copy_pattern_t *p = k->p + i;
        p->in = t[0], p->out = t[1], p->d = t[2], p->s0 = t[3], p->o0 = t[4];
        if (p->d < 1 || p->d > COPY_LEVELS || p->in < 0 || p->in >= k->nin || p->out < 0 || p->out >= k->nout) goto fail;
        p->rows = 1;
        for (i64 j = 0; j < p->d; j++) {
            p->dims[j] = t[5 + j], p->ss[j] = t[5 + COPY_LEVELS + j], p->ds[j] = t[5 + 2 * COPY_LEVELS + j];
            if (p->dims[j] < 1) goto fail;
            if (j < p->d - 1) p->rows *= p->dims[j];
        }
        k->rows += p->rows;
        k->bytes += p->rows * p->dims[p->d - 1] * k->esize;
    }
    return k;
fail:
    xr_dnnl_copies_free(k);
    return NULL;
}

/* One row: n elements from s (step ss) to d (step ds). */
static void copy_row(char *d, const char *s, i64 n, i64 ds, i64 ss, i64 esize) {
    if (ds == 1 && ss == 1) {
        memcpy(d, s, (size_t)(n * esize));
        return;
    }
    switch (esize) {
    case 4:
        for (i64 e = 0; e < n; e++) ((int32_t *)d)[e * ds] = ((const int32_t *)s)[e * ss];
        break;
    case 2:
        for (i64 e = 0; e < n; e++) ((int16_t *)d)[e * ds] = ((const int16_t *)s)[e * ss];
        break;
    case 1:
        for (i64 e = 0; e < n; e++) d[e * ds] = s[e * ss];
        break;
    case 8:
        for (i64 e = 0; e < n; e++) ((int64_t *)d)[e * ds] = ((const int64_t *)s)[e * ss];
        break;
    default:
        for (i64 e = 0; e < n; e++) memcpy(d + e * ds * esize, s + e * ss * esize, (size_t)esize);
    }
}

static float tail_op(i64 code, float a, float b) {
    switch (code) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return a > b || a != a ? a : b; /* numpy's maximum and minimum: NaN wins */
    default: return a < b || a != a ? a : b;
    }
}

typedef struct {
    const xr_copies_t *k;
    char *ins[64], *outs[64];
} copies_job_t;

/* One row through the chain: element e of the row is src[e ss] in, dst[e ds] out, at
   the result's offset o + e ds (the chain's inputs are read there). A contiguous row
   goes through one op at a time (loops the compiler vectorizes), else element by element. */
#define CHAIN_PASS(expr)                                                                       \
    for (i64 e = 0; e < n; e++) {                                                              \
        const float a = t == 0 ? s[e] : d[e], b = w[e];                                        \
        d[e] = (expr);                                                                         \
    }
static void chain_row(const copies_job_t *job, float *d, const float *s, i64 o, i64 n, i64 ds, i64 ss) {
    const xr_copies_t *k = job->k;
    if (ds == 1 && ss == 1) {
        for (i64 t = 0; t < k->ntail; t++) {
            const float *w = (const float *)job->ins[k->tail[t][2]] + o;
            const int code = (int)k->tail[t][0] * 2 + (k->tail[t][1] ? 1 : 0);
            switch (code) {
            case 0: case 1: CHAIN_PASS(a + b) break;
            case 2: CHAIN_PASS(a - b) break;
            case 3: CHAIN_PASS(b - a) break;
            case 4: case 5: CHAIN_PASS(a * b) break;
            case 6: CHAIN_PASS(a > b || a != a ? a : b) break;
            case 7: CHAIN_PASS(b > a || b != b ? b : a) break;
            case 8: CHAIN_PASS(a < b || a != a ? a : b) break;
            default: CHAIN_PASS(b < a || b != b ? b : a) break;
            }
        }
        return;
    }
    for (i64 e = 0; e < n; e++) {
        float v = s[e * ss];
        for (i64 t = 0; t < k->ntail; t++) {
            const float w = ((const float *)job->ins[k->tail[t][2]])[o + e * ds];
            v = k->tail[t][1] ? tail_op(k->tail[t][0], w, v) : tail_op(k->tail[t][0], v, w);
        }
        d[e * ds] = v;
    }
}
#undef CHAIN_PASS

/* Rows [lo, hi) of the rows of all patterns, one after another. */
static void copies_span(const copies_job_t *job, i64 lo, i64 hi) {
    const xr_copies_t *k = job->k;
    const i64 es = k->esize;
    i64 first = 0;
    for (i64 i = 0; i < k->n && lo < hi; first += k->p[i].rows, i++) {
        const copy_pattern_t *p = k->p + i;
        if (lo >= first + p->rows) continue;
        i64 r = lo - first, end = (hi < first + p->rows ? hi : first + p->rows) - first;
        const i64 last = p->d - 1;
        i64 idx[COPY_LEVELS] = {0}, so = p->s0, oo = p->o0;
        for (i64 j = last - 1, rest = r; j >= 0; j--) { /* r as an index of the outer levels */
            idx[j] = rest % p->dims[j];
            rest /= p->dims[j];
            so += idx[j] * p->ss[j], oo += idx[j] * p->ds[j];
        }
        const char *src = job->ins[p->in];
        char *dst = job->outs[p->out];
        for (; r < end; r++) {
            if (k->ntail)
                chain_row(job, (float *)dst + oo, (const float *)src + so, oo, p->dims[last], p->ds[last], p->ss[last]);
            else
                copy_row(dst + oo * es, src + so * es, p->dims[last], p->ds[last], p->ss[last], es);
            for (i64 j = last - 1; j >= 0; j--) { /* the next row: an odometer over the outer levels */
                so += p->ss[j], oo += p->ds[j];
                if (++idx[j] < p->dims[j]) break;
                so -= p->ss[j] * p->dims[j], oo -= p->ds[j] * p->dims[j];
                idx[j] = 0;
            }
        }
        lo = first + end;
    }
}

static void copies_part(void *arg) {
    const copies_job_t *job = arg;
    const i64 nt = omp_get_num_threads(), me = omp_get_thread_num(), rows = job->k->rows;
    copies_span(job, rows * me / nt, rows * (me + 1) / nt);
}

static int copies_run(const xr_copies_t *k, int nargs, const int32_t *keys, dnnl_memory_t const *mems) {
    copies_job_t job = {k, {0}, {0}};
    for (i64 i = 0; i < k->nin; i++)
        if ((job.ins[i] = handle_of(nargs, keys, mems, ARG_MULTIPLE_SRC + (int)i)) == NULL) return -1;
    for (i64 i = 0; i < k->nout; i++)
        if ((job.outs[i] = handle_of(nargs, keys, mems, ARG_MULTIPLE_DST + (int)i)) == NULL) return -1;
    /* small copies on the calling thread: a parallel region costs more than the copy */
    GOMP_parallel(copies_part, &job, k->bytes < 32768 || k->rows < 2 ? 1u : (unsigned)omp_get_max_threads(), 0);
    return 0;
}

/* Run count primitives one after another (a run of oneDNN steps in one call, without the
   GIL); primitive i takes nargs[i] arguments from keys/mems, packed one after another, and
   runs on threads[i] OpenMP threads (NULL: all n_threads; a primitive made for one thread
   runs on one: a team of two would fork and join around a few microseconds of work); a
   negative nargs[i] marks a kernel of this file taking -nargs[i] arguments: a Winograd
   transform (xr_dnnl_wino), a concatenation (xr_dnnl_concat), native jobs (xr_dnnl_native,
   one unused argument), a SiLU (xr_dnnl_silu), a step cut in parts (xr_dnnl_parts, one
   unused argument), strided copies (xr_dnnl_copies), a dense step on packed weights (xr_dnnl_gemm) or a
   convolution of narrow groups (xr_dnnl_gconv), told apart by kind. */
int xr_dnnl_run(int count, const_dnnl_primitive_t *prims, const int32_t *nargs,
                const int32_t *keys, dnnl_memory_t const *mems, const int32_t *threads) {
    for (int i = 0; i < count; i++) {
        int n = nargs[i] < 0 ? -nargs[i] : nargs[i], status;
        int want = threads && threads[i] > 0 ? threads[i] : n_threads;
        if (omp_get_max_threads() != want) omp_set_num_threads(want);
        if (nargs[i] < 0) {
            /* the transform reads what the primitives before it wrote */
            last_status = dnnl_stream_wait(stream);
            if (last_status) return last_status;
            if (*(const int *)prims[i] == 4) {
                native_run((const xr_native_t *)prims[i], want);
                status = 0;
            } else if (*(const int *)prims[i] == 3)
                status = concat_run((const xr_concat_t *)prims[i], n, keys, mems);
            else if (*(const int *)prims[i] == 5)
                status = silu_run((const xr_silu_t *)prims[i], n, keys, mems);
            else if (*(const int *)prims[i] == 6)
                status = parts_run((const xr_parts_t *)prims[i]);
            else if (*(const int *)prims[i] == 7)
                status = copies_run((const xr_copies_t *)prims[i], n, keys, mems);
            else if (*(const int *)prims[i] == 8)
                status = gemm_run((const xr_gemm_t *)prims[i], n, keys, mems);
            else if (*(const int *)prims[i] == 9)
                status = gconv_run((const xr_gconv_t *)prims[i], n, keys, mems);
            else
                status = wino_run((const xr_wino_t *)prims[i], n, keys, mems);
        } else {
            status = execute(prims[i], n, keys, mems);
        }
        if (status) return status;
        keys += n;
        mems += n;
    }
    last_status = dnnl_stream_wait(stream);
    if (omp_get_max_threads() != n_threads) omp_set_num_threads(n_threads);
    return last_status;
}
