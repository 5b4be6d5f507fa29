// RUN: disc-opt %s -disc-ral-lower-parallel-for | FileCheck %s

// The call of a parallel body becomes disc_ral_parallel_for with a packed
// entry and one stack struct holding the captures (the body's arguments
// after lo, hi, work); units and work are the body's arguments 1 and 2.
// CHECK: llvm.func @disc_ral_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64)
// CHECK-LABEL: llvm.func @kernel(
// CHECK-SAME: %[[UNITS:.*]]: i64, %[[WORK:.*]]: i64, %[[P:.*]]: !llvm.ptr, %[[F:.*]]: f32)
// CHECK: %[[ARGS:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, f32)>
// CHECK-NOT: llvm.call @body(
// CHECK: %[[F0:.*]] = llvm.getelementptr %[[ARGS]][0, 0]
// CHECK: llvm.store %[[P]], %[[F0]]
// CHECK: %[[F1:.*]] = llvm.getelementptr %[[ARGS]][0, 1]
// CHECK: llvm.store %[[F]], %[[F1]]
// CHECK: %[[FN:.*]] = llvm.mlir.addressof @body_packed
// CHECK: llvm.call @disc_ral_parallel_for(%[[FN]], %[[ARGS]], %[[UNITS]], %[[WORK]])
// CHECK: llvm.func @body(
// CHECK-SAME: disc.parallel_body
// The packed entry loads the captures and calls the body on [lo, hi).
// CHECK: llvm.func internal @body_packed(%[[S:.*]]: !llvm.ptr, %[[LO:.*]]: i64, %[[HI:.*]]: i64)
// CHECK: llvm.getelementptr %[[S]][0, 0]
// CHECK: %[[C0:.*]] = llvm.load {{.*}} -> !llvm.ptr
// CHECK: llvm.getelementptr %[[S]][0, 1]
// CHECK: %[[C1:.*]] = llvm.load {{.*}} -> f32
// CHECK: llvm.call @body(%[[LO]], %[[HI]], %{{.*}}, %[[C0]], %[[C1]]) : (i64, i64, i64, !llvm.ptr, f32) -> ()
llvm.func @kernel(%units: i64, %work: i64, %p: !llvm.ptr, %f: f32) {
  %zero = llvm.mlir.constant(0 : i64) : i64
  llvm.call @body(%zero, %units, %work, %p, %f) : (i64, i64, i64, !llvm.ptr, f32) -> ()
  llvm.return
}
llvm.func @body(%lo: i64, %hi: i64, %w: i64, %p: !llvm.ptr, %f: f32) attributes {disc.parallel_body} {
  llvm.return
}

// Must NOT touch calls of functions that are not parallel bodies.
// CHECK-LABEL: llvm.func @other_caller
// CHECK: llvm.call @other(
// CHECK-NOT: disc_ral_parallel_for
llvm.func @other_caller(%x: i64) {
  llvm.call @other(%x) : (i64) -> ()
  llvm.return
}
llvm.func @other(%x: i64) {
  llvm.return
}
