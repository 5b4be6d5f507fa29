// RUN: disc-opt %s -disc-ral-lower-parallel-for | FileCheck %s

// The call of a parallel body becomes disc_ral_parallel_for with a packed
// entry and an array of pointers to the spilled arguments; units and work
// are the body's arguments 1 and 2.
// CHECK: llvm.func @disc_ral_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64, i64)
// CHECK-LABEL: llvm.func @kernel(
// CHECK-SAME: %[[UNITS:.*]]: i64, %[[WORK:.*]]: i64, %[[P:.*]]: !llvm.ptr)
// CHECK: %[[ARRAY:.*]] = llvm.alloca %{{.*}} x !llvm.array<4 x ptr>
// CHECK-COUNT-4: llvm.alloca
// CHECK-NOT: llvm.call @body(
// CHECK: %[[FN:.*]] = llvm.mlir.addressof @body_packed
// CHECK: %[[COUNT:.*]] = llvm.mlir.constant(4 : i64)
// CHECK: llvm.call @disc_ral_parallel_for(%[[FN]], %[[ARRAY]], %[[COUNT]], %[[UNITS]], %[[WORK]])
// CHECK: llvm.func @body(
// CHECK-SAME: disc.parallel_body
// The packed entry loads each argument through args[i] and calls the body.
// CHECK: llvm.func internal @body_packed(%[[ARGS:.*]]: !llvm.ptr)
// CHECK-COUNT-4: llvm.getelementptr %[[ARGS]]
// CHECK: llvm.call @body(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, i64, i64, !llvm.ptr) -> ()
llvm.func @kernel(%units: i64, %work: i64, %p: !llvm.ptr) {
  %zero = llvm.mlir.constant(0 : i64) : i64
  llvm.call @body(%zero, %units, %work, %p) : (i64, i64, i64, !llvm.ptr) -> ()
  llvm.return
}
llvm.func @body(%lo: i64, %hi: i64, %w: i64, %p: !llvm.ptr) attributes {disc.parallel_body} {
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
