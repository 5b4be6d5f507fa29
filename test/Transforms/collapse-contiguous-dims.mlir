// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(disc-collapse-contiguous-dims))' | FileCheck %s

// A batch norm + activation over [1, 16, H, W] with per-channel operands:
// H and W merge (the [C] operand does not index them); N does not merge
// with C (the [C] operand indexes C without N).
#nchw = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @per_channel
// CHECK-DAG: %[[X:.*]] = memref.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : memref<1x16x?x?xf32> into memref<1x16x?xf32>
// CHECK-DAG: %[[Y:.*]] = memref.collapse_shape %arg2 {{\[}}[0], [1], [2, 3]] : memref<1x16x?x?xf32> into memref<1x16x?xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$ID:.*]], #[[$C:.*]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]], %arg1 : memref<1x16x?xf32>, memref<16xf32>) outs(%[[Y]] : memref<1x16x?xf32>)
func.func @per_channel(%x: memref<1x16x?x?xf32>, %scale: memref<16xf32>, %y: memref<1x16x?x?xf32>) {
  linalg.generic {indexing_maps = [#nchw, #chan, #nchw],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %scale : memref<1x16x?x?xf32>, memref<16xf32>) outs(%y : memref<1x16x?x?xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Same-shape operands: every dim merges into one.
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @elementwise
// CHECK: memref.collapse_shape %arg0 {{\[}}[0, 1, 2]] : memref<2x?x8xf32> into memref<?xf32>
// CHECK: iterator_types = ["parallel"]
func.func @elementwise(%a: memref<2x?x8xf32>, %b: memref<2x?x8xf32>, %c: memref<2x?x8xf32>) {
  linalg.generic {indexing_maps = [#id3, #id3, #id3],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a, %b : memref<2x?x8xf32>, memref<2x?x8xf32>) outs(%c : memref<2x?x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A row reduction: the two parallel dims merge, the reduction dim stays
// apart (only dims of one iterator type merge).
#in = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @row_reduction
// CHECK: memref.collapse_shape %arg0 {{\[}}[0, 1], [2]] : memref<4x?x32xf32> into memref<?x32xf32>
// CHECK: iterator_types = ["parallel", "reduction"]
func.func @row_reduction(%a: memref<4x?x32xf32>, %r: memref<4x?xf32>) {
  linalg.generic {indexing_maps = [#in, #out],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a : memref<4x?x32xf32>) outs(%r : memref<4x?xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Must NOT merge: a transposed operand holds the dims in the other order.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#tr2 = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @transposed
// CHECK-NOT: memref.collapse_shape
// CHECK: iterator_types = ["parallel", "parallel"]
func.func @transposed(%a: memref<8x8xf32>, %b: memref<8x8xf32>) {
  linalg.generic {indexing_maps = [#tr2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<8x8xf32>) outs(%b : memref<8x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

// Must NOT merge: a subview's rows are not next to each other in memory,
// so its two dims stay apart (and with them the op's).
#id2 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @strided_operand
// CHECK-NOT: memref.collapse_shape
// CHECK: iterator_types = ["parallel", "parallel"]
func.func @strided_operand(%a: memref<8x16xf32>, %b: memref<8x4xf32>) {
  %s = memref.subview %a[0, 2] [8, 4] [1, 1] : memref<8x16xf32> to memref<8x4xf32, strided<[16, 1], offset: 2>>
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : memref<8x4xf32, strided<[16, 1], offset: 2>>) outs(%b : memref<8x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

// Must NOT merge: the body reads its indices (merged, they would need a
// division per element), and ops on tensors are left to bufferization.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @index_and_tensor
// CHECK-NOT: collapse_shape
// CHECK: linalg.index 1
// CHECK: iterator_types = ["parallel", "parallel"]
// CHECK-SAME: ins(%arg1 : tensor<8x8xf32>)
func.func @index_and_tensor(%a: memref<8x8xf32>, %t: tensor<8x8xf32>) -> tensor<8x8xf32> {
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]}
      outs(%a : memref<8x8xf32>) {
  ^bb0(%o: f32):
    %j = linalg.index 1 : index
    %i = arith.index_cast %j : index to i32
    %f = arith.sitofp %i : i32 to f32
    linalg.yield %f : f32
  }
  %e = tensor.empty() : tensor<8x8xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// An update computed in place (the op reads and writes %p): one view of %p
// serves both operands, so the kernel outlined from the loop gets one
// argument for it, not two that alias.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @in_place_update
// CHECK-COUNT-1: memref.collapse_shape %arg0
// CHECK-NOT: memref.collapse_shape %arg0
// CHECK: %[[G:.*]] = memref.collapse_shape %arg1
// CHECK: linalg.generic {{.*}} ins(%[[P:.*]], %[[G]] : memref<?xf32>, memref<?xf32>) outs(%[[P]] : memref<?xf32>)
func.func @in_place_update(%p: memref<?x64xf32>, %g: memref<?x64xf32>) {
  linalg.generic {indexing_maps = [#id2, #id2, #id2],
                  iterator_types = ["parallel", "parallel"]}
      ins(%p, %g : memref<?x64xf32>, memref<?x64xf32>) outs(%p : memref<?x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.subf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}
