/*
 * The subset of oneDNN's v3.2 C API that dnnl_shim.c uses, declared here because the
 * onednn-cpu-gomp wheel ships libdnnl.so.3 without headers. Names, argument orders and enum
 * values follow oneDNN's public documentation of the v3.2 C API (dnnl.h, dnnl_types.h,
 * dnnl_common_types.h); only what xrelay calls is declared, and enums list only the values
 * used (their numbers are the library's ABI, so they must not change).
 */
#ifndef XRELAY_DNNL_API_H
#define XRELAY_DNNL_API_H

#include <stddef.h>
#include <stdint.h>

#define DNNL_MAX_NDIMS 12
typedef int64_t dnnl_dim_t;
typedef dnnl_dim_t dnnl_dims_t[DNNL_MAX_NDIMS];

typedef int dnnl_status_t; /* dnnl_success = 0 */
typedef int dnnl_data_type_t;
typedef int dnnl_format_tag_t;
typedef int dnnl_engine_kind_t;
typedef int dnnl_prop_kind_t;
typedef int dnnl_alg_kind_t;
typedef int dnnl_query_t;
typedef int dnnl_scratchpad_mode_t;
typedef int dnnl_fpmath_mode_t;

enum { dnnl_success = 0 };
enum { dnnl_bf16 = 2, dnnl_f32 = 3 };
enum { dnnl_format_tag_any = 1 };
enum { dnnl_cpu = 1 };
enum { dnnl_forward_inference = 96 };
enum { dnnl_stream_default_flags = 1 };
enum { dnnl_scratchpad_mode_user = 1 };
enum { dnnl_fpmath_mode_strict = 0, dnnl_fpmath_mode_bf16 = 1 };
enum { dnnl_convolution_direct = 1, dnnl_deconvolution_direct = 0xa };
/* eltwise, pooling, binary and softmax algorithms */
enum {
    dnnl_eltwise_relu = 32,
    dnnl_eltwise_tanh = 33,
    dnnl_eltwise_abs = 36,
    dnnl_eltwise_sqrt = 37,
    dnnl_eltwise_linear = 38,
    dnnl_eltwise_logistic = 41,
    dnnl_eltwise_exp = 42,
    dnnl_eltwise_gelu_tanh = 43,
    dnnl_eltwise_swish = 44,
    dnnl_eltwise_log = 45,
    dnnl_eltwise_clip = 46,
    dnnl_eltwise_gelu_erf = 49,
    dnnl_eltwise_mish = 51,
    dnnl_pooling_max = 511,
    dnnl_pooling_avg_include_padding = 767,
    dnnl_pooling_avg_exclude_padding = 1023,
    dnnl_binary_add = 131056,
    dnnl_binary_mul = 131057,
    dnnl_binary_max = 131058,
    dnnl_binary_min = 131059,
    dnnl_binary_div = 131060,
    dnnl_binary_sub = 131061,
    dnnl_softmax_accurate = 196608,
};
enum {
    dnnl_query_impl_info_str = 8,
    dnnl_query_src_md = 129,
    dnnl_query_weights_md = 131,
    dnnl_query_dst_md = 133,
    dnnl_query_scratchpad_md = 136,
};
enum { dnnl_use_scale = 2, dnnl_use_shift = 4 }; /* normalization flags */

/* execution argument kinds */
#define DNNL_ARG_SRC 1
#define DNNL_ARG_SRC_1 2
#define DNNL_ARG_DST 17
#define DNNL_ARG_WEIGHTS 33
#define DNNL_ARG_BIAS 41
#define DNNL_ARG_SCALE 51
#define DNNL_ARG_SHIFT 52
#define DNNL_ARG_SCRATCHPAD 80
#define DNNL_ARG_ATTR_MULTIPLE_POST_OP(idx) (32768 * ((idx) + 1))

typedef struct dnnl_engine *dnnl_engine_t;
typedef struct dnnl_stream *dnnl_stream_t;
typedef struct dnnl_memory_desc *dnnl_memory_desc_t;
typedef const struct dnnl_memory_desc *const_dnnl_memory_desc_t;
typedef struct dnnl_memory *dnnl_memory_t;
typedef struct dnnl_primitive_desc *dnnl_primitive_desc_t;
typedef const struct dnnl_primitive_desc *const_dnnl_primitive_desc_t;
typedef struct dnnl_primitive_attr *dnnl_primitive_attr_t;
typedef const struct dnnl_primitive_attr *const_dnnl_primitive_attr_t;
typedef struct dnnl_post_ops *dnnl_post_ops_t;
typedef const struct dnnl_post_ops *const_dnnl_post_ops_t;
typedef struct dnnl_primitive *dnnl_primitive_t;
typedef const struct dnnl_primitive *const_dnnl_primitive_t;

typedef struct {
    int arg;
    dnnl_memory_t memory;
} dnnl_exec_arg_t;

dnnl_status_t dnnl_engine_create(dnnl_engine_t *engine, dnnl_engine_kind_t kind, size_t index);
dnnl_status_t dnnl_stream_create(dnnl_stream_t *stream, dnnl_engine_t engine, unsigned flags);
dnnl_status_t dnnl_stream_wait(dnnl_stream_t stream);

dnnl_status_t dnnl_memory_desc_create_with_strides(dnnl_memory_desc_t *memory_desc, int ndims,
                                                   const dnnl_dims_t dims,
                                                   dnnl_data_type_t data_type,
                                                   const dnnl_dims_t strides);
dnnl_status_t dnnl_memory_desc_create_submemory(dnnl_memory_desc_t *memory_desc,
                                                const_dnnl_memory_desc_t parent_memory_desc,
                                                const dnnl_dims_t dims, const dnnl_dims_t offsets);
dnnl_status_t dnnl_memory_desc_create_with_tag(dnnl_memory_desc_t *memory_desc, int ndims,
                                               const dnnl_dims_t dims, dnnl_data_type_t data_type,
                                               dnnl_format_tag_t tag);
dnnl_status_t dnnl_memory_desc_clone(dnnl_memory_desc_t *memory_desc,
                                     const_dnnl_memory_desc_t existing_memory_desc);
dnnl_status_t dnnl_memory_desc_destroy(dnnl_memory_desc_t memory_desc);
size_t dnnl_memory_desc_get_size(const_dnnl_memory_desc_t memory_desc);
int dnnl_memory_desc_equal(const_dnnl_memory_desc_t lhs, const_dnnl_memory_desc_t rhs);

dnnl_status_t dnnl_memory_create(dnnl_memory_t *memory, const_dnnl_memory_desc_t memory_desc,
                                 dnnl_engine_t engine, void *handle);
dnnl_status_t dnnl_memory_destroy(dnnl_memory_t memory);
dnnl_status_t dnnl_memory_get_data_handle(const struct dnnl_memory *memory, void **handle);

dnnl_status_t dnnl_primitive_attr_create(dnnl_primitive_attr_t *attr);
dnnl_status_t dnnl_primitive_attr_destroy(dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_primitive_attr_set_scratchpad_mode(dnnl_primitive_attr_t attr,
                                                      dnnl_scratchpad_mode_t mode);
dnnl_status_t dnnl_primitive_attr_set_fpmath_mode(dnnl_primitive_attr_t attr,
                                                  dnnl_fpmath_mode_t mode);
dnnl_status_t dnnl_primitive_attr_set_post_ops(dnnl_primitive_attr_t attr,
                                               const_dnnl_post_ops_t post_ops);
dnnl_status_t dnnl_post_ops_create(dnnl_post_ops_t *post_ops);
dnnl_status_t dnnl_post_ops_destroy(dnnl_post_ops_t post_ops);
dnnl_status_t dnnl_post_ops_append_eltwise(dnnl_post_ops_t post_ops, dnnl_alg_kind_t alg_kind,
                                           float alpha, float beta);
dnnl_status_t dnnl_post_ops_append_sum(dnnl_post_ops_t post_ops, float scale,
                                       int32_t zero_point, dnnl_data_type_t data_type);
dnnl_status_t dnnl_post_ops_append_binary(dnnl_post_ops_t post_ops, dnnl_alg_kind_t alg_kind,
                                          const_dnnl_memory_desc_t src1_desc);

dnnl_status_t dnnl_convolution_forward_primitive_desc_create(
    dnnl_primitive_desc_t *primitive_desc, dnnl_engine_t engine, dnnl_prop_kind_t prop_kind,
    dnnl_alg_kind_t alg_kind, const_dnnl_memory_desc_t src_desc,
    const_dnnl_memory_desc_t weights_desc, const_dnnl_memory_desc_t bias_desc,
    const_dnnl_memory_desc_t dst_desc, const dnnl_dims_t strides, const dnnl_dims_t dilates,
    const dnnl_dims_t padding_l, const dnnl_dims_t padding_r, const_dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_deconvolution_forward_primitive_desc_create(
    dnnl_primitive_desc_t *primitive_desc, dnnl_engine_t engine, dnnl_prop_kind_t prop_kind,
    dnnl_alg_kind_t alg_kind, const_dnnl_memory_desc_t src_desc,
    const_dnnl_memory_desc_t weights_desc, const_dnnl_memory_desc_t bias_desc,
    const_dnnl_memory_desc_t dst_desc, const dnnl_dims_t strides, const dnnl_dims_t dilates,
    const dnnl_dims_t padding_l, const dnnl_dims_t padding_r, const_dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_matmul_primitive_desc_create(dnnl_primitive_desc_t *primitive_desc,
                                                dnnl_engine_t engine,
                                                const_dnnl_memory_desc_t src_desc,
                                                const_dnnl_memory_desc_t weights_desc,
                                                const_dnnl_memory_desc_t bias_desc,
                                                const_dnnl_memory_desc_t dst_desc,
                                                const_dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_pooling_forward_primitive_desc_create(
    dnnl_primitive_desc_t *primitive_desc, dnnl_engine_t engine, dnnl_prop_kind_t prop_kind,
    dnnl_alg_kind_t alg_kind, const_dnnl_memory_desc_t src_desc,
    const_dnnl_memory_desc_t dst_desc, const dnnl_dims_t strides, const dnnl_dims_t kernel,
    const dnnl_dims_t dilation, const dnnl_dims_t padding_l, const dnnl_dims_t padding_r,
    const_dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_softmax_forward_primitive_desc_create(
    dnnl_primitive_desc_t *primitive_desc, dnnl_engine_t engine, dnnl_prop_kind_t prop_kind,
    dnnl_alg_kind_t alg_kind, const_dnnl_memory_desc_t src_desc,
    const_dnnl_memory_desc_t dst_desc, int softmax_axis, const_dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_layer_normalization_forward_primitive_desc_create(
    dnnl_primitive_desc_t *primitive_desc, dnnl_engine_t engine, dnnl_prop_kind_t prop_kind,
    const_dnnl_memory_desc_t src_desc, const_dnnl_memory_desc_t dst_desc,
    const_dnnl_memory_desc_t stat_desc, float epsilon, unsigned flags,
    const_dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_eltwise_forward_primitive_desc_create(
    dnnl_primitive_desc_t *primitive_desc, dnnl_engine_t engine, dnnl_prop_kind_t prop_kind,
    dnnl_alg_kind_t alg_kind, const_dnnl_memory_desc_t src_desc,
    const_dnnl_memory_desc_t dst_desc, float alpha, float beta, const_dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_binary_primitive_desc_create(dnnl_primitive_desc_t *primitive_desc,
                                                dnnl_engine_t engine, dnnl_alg_kind_t alg_kind,
                                                const_dnnl_memory_desc_t src0_desc,
                                                const_dnnl_memory_desc_t src1_desc,
                                                const_dnnl_memory_desc_t dst_desc,
                                                const_dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_reorder_primitive_desc_create(dnnl_primitive_desc_t *reorder_primitive_desc,
                                                 const_dnnl_memory_desc_t src_desc,
                                                 dnnl_engine_t src_engine,
                                                 const_dnnl_memory_desc_t dst_desc,
                                                 dnnl_engine_t dst_engine,
                                                 const_dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_primitive_desc_query(const_dnnl_primitive_desc_t primitive_desc,
                                        dnnl_query_t what, int index, void *result);
const_dnnl_memory_desc_t dnnl_primitive_desc_query_md(const_dnnl_primitive_desc_t primitive_desc,
                                                      dnnl_query_t what, int index);
dnnl_status_t dnnl_primitive_desc_destroy(dnnl_primitive_desc_t primitive_desc);
dnnl_status_t dnnl_primitive_create(dnnl_primitive_t *primitive,
                                    const_dnnl_primitive_desc_t primitive_desc);
dnnl_status_t dnnl_primitive_execute(const_dnnl_primitive_t primitive, dnnl_stream_t stream,
                                     int nargs, const dnnl_exec_arg_t *args);
dnnl_status_t dnnl_primitive_destroy(dnnl_primitive_t primitive);

/* OpenMP, which the gomp build of the library runs its threads on */
void omp_set_num_threads(int n);
int omp_get_max_threads(void);
int omp_get_num_threads(void);
int omp_get_thread_num(void);
/* libgomp's entry for a parallel region (GCC's ABI: fn(data) on num_threads threads,
   0 meaning the current default; flags 0) */
void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags);

#endif
