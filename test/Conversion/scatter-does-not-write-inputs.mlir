// RUN: disc-opt %s -disc-select-entry -disc-add-ral-context -disc-read-only-inputs -disc-legalize-to-linalg -one-shot-bufferize="bufferize-function-boundaries=1 function-boundary-type-conversion=identity-layout-map" | FileCheck %s

// A scatter into an entry argument updates a copy: the caller's buffer is
// read-only (inputs are taken zero-copy).
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x?xf32>
// CHECK: %[[COPY:.*]] = memref.alloc
// CHECK: memref.copy %[[X]], %[[COPY]]
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[COPY]])
// CHECK-NOT: memref.store %{{.*}}, %[[X]][
// CHECK: memref.store
func.func @main(%x: tensor<?x?xf32>, %idx: tensor<?x1xi64>, %u: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = disc.scatter %x[%idx], %u, kind = add, update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1 : (tensor<?x?xf32>, tensor<?x1xi64>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
