/* gcomp C API (libgcomp.so): load a compiled plan, or compile a model in process, and run it.
 *
 *   gcomp_plan* plan = NULL;
 *   if (gcomp_plan_load("resnet50.gplan", &plan) != GCOMP_OK) {
 *     fprintf(stderr, "%s\n", gcomp_plan_error(plan));   // the handle carries the message
 *     gcomp_plan_free(plan);
 *     return 1;
 *   }
 *   gcomp_session_options opts = gcomp_session_options_default();
 *   opts.threads = 2;
 *   gcomp_session* session = NULL;
 *   gcomp_session_create(plan, &opts, &session);
 *   gcomp_tensor in = {"input", GCOMP_FLOAT32, 4, {1, 3, 224, 224}, pixels, sizeof pixels};
 *   gcomp_tensor* outs = NULL; size_t n = 0;
 *   gcomp_session_run_alloc(session, &in, 1, &outs, &n);   // library-allocated outputs
 *   ...
 *   gcomp_tensors_free(outs, n); gcomp_session_free(session); gcomp_plan_free(plan);
 *
 * Every call returns a gcomp_status. A call that creates a handle always sets it (also on failure,
 * to a handle holding only the error), so the message is read from the handle; a failed call on an
 * existing handle leaves its message there. gcomp_last_error() also holds the calling thread's last
 * message. No C++ exception crosses this interface. A plan is shared read-only by any number of
 * sessions and threads; a session is used by one thread at a time. */
#ifndef GCOMP_GCOMP_C_H_
#define GCOMP_GCOMP_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  GCOMP_OK = 0,
  GCOMP_INVALID_ARGUMENT = 1,
  GCOMP_NOT_FOUND = 2,
  GCOMP_RESOURCE_EXHAUSTED = 3,
  GCOMP_UNIMPLEMENTED = 4,
  GCOMP_INTERNAL = 5
} gcomp_status;

/* The element types, in the order of gcomp::DataType. */
typedef enum {
  GCOMP_FLOAT32 = 0,
  GCOMP_FLOAT16 = 1,
  GCOMP_BFLOAT16 = 2,
  GCOMP_FLOAT8E4M3 = 3,
  GCOMP_FLOAT64 = 4,
  GCOMP_INT64 = 5,
  GCOMP_INT32 = 6,
  GCOMP_INT8 = 7,
  GCOMP_UINT8 = 8,
  GCOMP_BOOL = 9
} gcomp_dtype;

#define GCOMP_MAX_RANK 8

typedef struct gcomp_plan gcomp_plan;
typedef struct gcomp_session gcomp_session;

/* A named host tensor, row-major. For inputs the caller fills every field. For caller-allocated
 * outputs the caller sets data and bytes (the capacity) and, optionally, name (NULL: the plan's
 * output of the same position); the run fills name, dtype, rank, shape and bytes (the size used). */
typedef struct {
  const char* name;
  gcomp_dtype dtype;
  size_t rank;
  int64_t shape[GCOMP_MAX_RANK];
  void* data;
  size_t bytes;
} gcomp_tensor;

/* A plan input or output: dims at batch 1; batch_dims[k] != 0 where dim k grows with the batch.
 * The strings and arrays belong to the plan handle. */
typedef struct {
  const char* name;
  gcomp_dtype dtype;
  size_t rank;
  int64_t shape[GCOMP_MAX_RANK];
  uint8_t batch_dims[GCOMP_MAX_RANK];
} gcomp_tensor_info;

typedef struct {
  int threads;     /* kernel threads (see the README: what threads controls) */
  int device;      /* cuda plans: the device */
  void* stream;    /* cuda plans: a cudaStream_t the caller owns, or NULL */
  int cuda_graphs; /* cuda plans: replay one CUDA graph per batch size (1) or run step by step (0) */
} gcomp_session_options;

/* "0.1.0" */
const char* gcomp_version(void);
const char* gcomp_status_name(gcomp_status status);
const char* gcomp_dtype_name(gcomp_dtype dtype);
/* The calling thread's last error message ("" after a success). */
const char* gcomp_last_error(void);

gcomp_status gcomp_plan_load(const char* path, gcomp_plan** plan);
gcomp_status gcomp_plan_load_memory(const void* data, size_t size, gcomp_plan** plan);
/* In-process compilation (gcomp compile): target "cpu", "cuda", "cuda:sm_80"; precision "fp32",
 * "tf32", "fp16", "bf16", "fp8"; level "O0".."O3"; batch 0 for the default maximum; keep_fp32 and
 * calibration may be NULL. */
typedef struct {
  const char* target;
  const char* precision;
  const char* level;
  int64_t batch;
  const char* keep_fp32;
  const char* calibration;
} gcomp_compile_options;
gcomp_compile_options gcomp_compile_options_default(void);
gcomp_status gcomp_compile(const char* model_path, const gcomp_compile_options* options, gcomp_plan** plan);
gcomp_status gcomp_plan_save(gcomp_plan* plan, const char* path);
/* The message of the last failure on this handle ("" if none); valid until the next call on it. */
const char* gcomp_plan_error(const gcomp_plan* plan);
void gcomp_plan_free(gcomp_plan* plan);

gcomp_status gcomp_plan_target(gcomp_plan* plan, const char** target);
gcomp_status gcomp_plan_max_batch(gcomp_plan* plan, int64_t* max_batch);
gcomp_status gcomp_plan_num_inputs(gcomp_plan* plan, size_t* count);
gcomp_status gcomp_plan_num_outputs(gcomp_plan* plan, size_t* count);
gcomp_status gcomp_plan_input(gcomp_plan* plan, size_t index, gcomp_tensor_info* info);
gcomp_status gcomp_plan_output(gcomp_plan* plan, size_t index, gcomp_tensor_info* info);

gcomp_session_options gcomp_session_options_default(void);
gcomp_status gcomp_session_create(gcomp_plan* plan, const gcomp_session_options* options, gcomp_session** session);
const char* gcomp_session_error(const gcomp_session* session);
void gcomp_session_free(gcomp_session* session);

/* Inputs by name (every plan input); outputs in the plan's order into caller memory. A capacity
 * too small for an output is GCOMP_RESOURCE_EXHAUSTED, and that tensor's bytes says what it needs. */
gcomp_status gcomp_session_run(gcomp_session* session, const gcomp_tensor* inputs, size_t num_inputs,
                               gcomp_tensor* outputs, size_t num_outputs);
/* The same into library-allocated outputs: *outputs is an array of *num_outputs tensors, released
 * with gcomp_tensors_free (names point into the plan). */
gcomp_status gcomp_session_run_alloc(gcomp_session* session, const gcomp_tensor* inputs, size_t num_inputs,
                                     gcomp_tensor** outputs, size_t* num_outputs);
void gcomp_tensors_free(gcomp_tensor* tensors, size_t count);

#ifdef __cplusplus
}
#endif

#endif /* GCOMP_GCOMP_C_H_ */
