/*===- disc_runtime.h - the standalone DISC runtime: C API --------*- C -*-===*
 *
 * Loads an artifact written by `disc.export(...).save(path)` and runs it with
 * DLPack tensors at any shape the artifact accepts. The library
 * (libdisc_runtime.so) links no MLIR, no LLVM and no Python; loading an
 * artifact runs no compiler. docs/deployment.md has a walk-through,
 * examples/standalone a complete program, disc_runtime.hpp a C++ wrapper.
 *
 * Every function returning int returns 0 on success and nonzero on error;
 * disc_last_error() then says what went wrong (a message naming the input,
 * the dim and the expected size, or the artifact problem). Thread-safe:
 * one artifact may run on several threads at once.
 *
 *===----------------------------------------------------------------------===*/
#ifndef DISC_RUNTIME_C_H
#define DISC_RUNTIME_C_H

#include <stdint.h>

/* DLPack (https://dmlc.github.io/dlpack): the tensor exchange structs, laid
 * out as DLPack 0.8 defines them. Include <dlpack/dlpack.h> first to use
 * that header's definitions instead. */
#ifndef DLPACK_VERSION
#define DISC_DLPACK_DEFINED 1
typedef enum { kDLCPU = 1, kDLCUDA = 2 } DLDeviceType;
typedef struct {
  int32_t device_type; /* DLDeviceType */
  int32_t device_id;
} DLDevice;
typedef enum {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLBfloat = 4,
  kDLBool = 6
} DLDataTypeCode;
typedef struct {
  uint8_t code; /* DLDataTypeCode */
  uint8_t bits;
  uint16_t lanes;
} DLDataType;
typedef struct {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape;
  int64_t *strides; /* NULL: compact row-major */
  uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct disc_artifact disc_artifact;

/* The message of the last failed call on this thread ("" if none). */
const char *disc_last_error(void);

/* Reads and loads an artifact file. A truncated, corrupted or foreign file,
 * a CPU without the features the code needs, or a cuda artifact are errors. */
int disc_artifact_load(const char *path, disc_artifact **artifact);
void disc_artifact_free(disc_artifact *artifact);

/* The inputs callers pass (stored weights excluded) and the outputs. */
int64_t disc_artifact_num_inputs(const disc_artifact *artifact);
int64_t disc_artifact_num_outputs(const disc_artifact *artifact);
/* Input i: its name, dtype, rank and dims (-1: dynamic); NULL/-1 when i is
 * out of range. `dims` must hold disc_artifact_input_rank() values. */
const char *disc_artifact_input_name(const disc_artifact *artifact, int64_t i);
int disc_artifact_input_dtype(const disc_artifact *artifact, int64_t i,
                              DLDataType *dtype);
int64_t disc_artifact_input_rank(const disc_artifact *artifact, int64_t i);
int disc_artifact_input_dims(const disc_artifact *artifact, int64_t i,
                             int64_t *dims);
/* A metadata value (docs/artifacts.md), or NULL when the key is absent. */
const char *disc_artifact_metadata(const disc_artifact *artifact,
                                   const char *key);

/* Runs the artifact. `inputs` are `num_inputs` CPU tensors, compact
 * row-major (strides NULL or row-major). On success `outputs` receives
 * `num_outputs` tensors the caller owns: release each with its deleter. */
int disc_artifact_run(disc_artifact *artifact, const DLTensor *inputs,
                      int64_t num_inputs, DLManagedTensor **outputs,
                      int64_t num_outputs);

#ifdef __cplusplus
}
#endif

#endif /* DISC_RUNTIME_C_H */
