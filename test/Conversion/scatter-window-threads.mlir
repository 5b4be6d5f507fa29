// RUN: disc-opt %s -disc-legalize-to-linalg="scatter-window-threads=1" -canonicalize -split-input-file | FileCheck %s
// RUN: disc-opt %s -disc-legalize-to-linalg -canonicalize -split-input-file | FileCheck %s --check-prefix=OFF

// A scatter into [N, C, H, W] at (h, w) positions (upsampling's backward):
// N and C come before every indexed dim and no index names them, so each
// (n, c) is one iteration of an scf.forall over a [1, 1, H, W] slice, and
// inside it the sequential scatter (the batch loops in order, the window
// check on the indexed dims only) reads the updates at (n, c, batch...).
// The threads' range is empty when a window dim is longer than its operand
// dim (every window out of bounds).
// CHECK-LABEL: func @nchw_at_hw
// CHECK-SAME: (%[[A:.*]]: tensor<?x?x?x?xf32>, %[[I:.*]]: tensor<?x?x2xi64>, %[[U:.*]]: tensor<?x?x?x?xf32>)
// CHECK-DAG: %[[UN:.*]] = tensor.dim %[[U]], %c0
// CHECK-DAG: %[[UC:.*]] = tensor.dim %[[U]], %c1
// CHECK-DAG: %[[AN:.*]] = tensor.dim %[[A]], %c0
// CHECK-DAG: %[[AC:.*]] = tensor.dim %[[A]], %c1
// CHECK: %[[NFITS:.*]] = arith.cmpi sle, %[[UN]], %[[AN]]
// CHECK: %[[CFITS:.*]] = arith.cmpi sle, %[[UC]], %[[AC]]
// CHECK: %[[FITS:.*]] = arith.andi %[[NFITS]], %[[CFITS]]
// CHECK: %[[NT:.*]] = arith.select %[[FITS]], %[[UN]], %c0
// CHECK: %[[CT:.*]] = arith.select %[[FITS]], %[[UC]], %c0
// CHECK: scf.forall (%[[N:.*]], %[[C:.*]]) in (%[[NT]], %[[CT]]) shared_outs(%[[OUT:.*]] = %[[A]])
// CHECK:   %[[SLICE:.*]] = tensor.extract_slice %[[OUT]][%[[N]], %[[C]], 0, 0] [1, 1, %{{.*}}, %{{.*}}] [1, 1, 1, 1] : tensor<?x?x?x?xf32> to tensor<1x1x?x?xf32>
// CHECK:   %[[RES:.*]] = scf.for %[[B0:[^ ]+]] = {{.*}} iter_args(%[[ACC0:.*]] = %[[SLICE]])
// CHECK:     scf.for %[[B1:[^ ]+]] = {{.*}} iter_args(%[[ACC:.*]] = %[[ACC0]])
// CHECK:       %[[Y:.*]] = arith.index_cast
// CHECK:       %[[X:.*]] = arith.index_cast
// CHECK-NOT:   tensor.dim %[[A]]
// CHECK:       scf.if
// CHECK-NOT:     scf.for
// CHECK:         tensor.extract %[[U]][%[[N]], %[[C]], %[[B0]], %[[B1]]]
// CHECK:         tensor.extract %[[ACC]][%c0, %c0, %[[Y]], %[[X]]]
// CHECK:         arith.addf
// CHECK:         tensor.insert %{{.*}} into %[[ACC]][%c0, %c0, %[[Y]], %[[X]]]
// CHECK:   scf.forall.in_parallel
// CHECK:     tensor.parallel_insert_slice %[[RES]] into %[[OUT]][%[[N]], %[[C]], 0, 0] [1, 1, %{{.*}}, %{{.*}}] [1, 1, 1, 1]
// OFF-LABEL: func @nchw_at_hw
// OFF-NOT: scf.forall
// OFF: scf.for
func.func @nchw_at_hw(%a: tensor<?x?x?x?xf32>, %i: tensor<?x?x2xi64>, %u: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %0 = disc.scatter %a[%i], %u, kind = add, update_window_dims = [0, 1], inserted_window_dims = [2, 3], scatter_dims_to_operand_dims = [2, 3], index_vector_dim = 2 : (tensor<?x?x?x?xf32>, tensor<?x?x2xi64>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}

// -----

// Only the window dims before the indexed dim are threads: in [N, H, C]
// scattered at h, N is a thread and C stays the inner window loop (checked
// per update like any window dim).
// CHECK-LABEL: func @nhc_at_h
// CHECK-SAME: (%[[A:.*]]: tensor<?x?x?xf32>, %[[I:.*]]: tensor<?x1xi64>, %[[U:.*]]: tensor<?x?x?xf32>)
// CHECK: scf.forall (%[[N:.*]]) in (%{{.*}}) shared_outs(%[[OUT:.*]] = %[[A]])
// CHECK:   tensor.extract_slice %[[OUT]][%[[N]], 0, 0] [1, %{{.*}}, %{{.*}}] [1, 1, 1] : tensor<?x?x?xf32> to tensor<1x?x?xf32>
// CHECK:   scf.for %[[B:[^ ]+]] =
// CHECK:     %[[H:.*]] = arith.index_cast
// CHECK:     scf.if
// CHECK:       scf.for %[[W:[^ ]+]] = {{.*}} iter_args(%[[ACC:.*]] =
// CHECK:         tensor.extract %[[U]][%[[N]], %[[B]], %[[W]]]
// CHECK:         tensor.insert %{{.*}} into %[[ACC]][%c0, %[[H]], %[[W]]]
func.func @nhc_at_h(%a: tensor<?x?x?xf32>, %i: tensor<?x1xi64>, %u: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %0 = disc.scatter %a[%i], %u, kind = add, update_window_dims = [0, 2], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1], index_vector_dim = 1 : (tensor<?x?x?xf32>, tensor<?x1xi64>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %0 : tensor<?x?x?xf32>
}

// -----

// Must NOT thread: a row scatter (PyTorch Geometric's aggregation, an
// embedding's gradient) has its window after the indexed dim. Threads over
// the features would walk the rows column by column; the row stays the
// contiguous inner loop of the sequential scatter.
// CHECK-LABEL: func @rows
// CHECK-NOT: scf.forall
// CHECK: scf.for
// CHECK: scf.for
func.func @rows(%a: tensor<?x?xf32>, %i: tensor<?x1xi64>, %u: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = disc.scatter %a[%i], %u, kind = add, update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1 : (tensor<?x?xf32>, tensor<?x1xi64>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// Must NOT thread: a window dim before the indexed dim that an index also
// names (its start varies per update, so two threads could meet).
// CHECK-LABEL: func @indexed_leading_window
// CHECK-NOT: scf.forall
func.func @indexed_leading_window(%a: tensor<8x8xf32>, %i: tensor<3x2xi64>, %u: tensor<3x2xf32>) -> tensor<8x8xf32> {
  %0 = disc.scatter %a[%i], %u, kind = add, update_window_dims = [1], inserted_window_dims = [1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1 : (tensor<8x8xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
