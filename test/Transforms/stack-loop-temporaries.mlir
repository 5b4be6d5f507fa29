// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(disc-stack-loop-temporaries))' | FileCheck %s

// A per-row scalar buffer inside a loop goes on the stack.
// CHECK-LABEL: func.func @row_scalar
// CHECK: scf.for
// CHECK-NEXT: %[[A:.*]] = memref.alloca() {alignment = 64 : i64} : memref<1xf32>
// CHECK-NOT: memref.alloc(
func.func @row_scalar(%x: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    %t = memref.alloc() {alignment = 64 : i64} : memref<1xf32>
    memref.store %zero, %t[%c0] : memref<1xf32>
    %v = memref.load %t[%c0] : memref<1xf32>
    memref.store %v, %x[%i] : memref<?xf32>
  }
  return
}

// -----

// Must NOT move to the stack: outside a loop, dynamic, too large (> 256
// bytes), returned, or handed to a call.
// CHECK-LABEL: func.func @kept
// CHECK: memref.alloc() : memref<4xf32>
// CHECK: memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: memref.alloc() : memref<128xf32>
// CHECK: memref.alloc() : memref<2xf32>
// CHECK-NOT: memref.alloca
func.func private @use(memref<2xf32>)
func.func @kept(%n: index) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %top = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    %dyn = memref.alloc(%n) : memref<?xf32>
    %big = memref.alloc() : memref<128xf32>
    %called = memref.alloc() : memref<2xf32>
    func.call @use(%called) : (memref<2xf32>) -> ()
  }
  return %top : memref<4xf32>
}

// -----

// Must NOT move, and must not crash: a buffer of `index` elements (a
// kernel size a library call's result allocation reads) has no bit width;
// it is not a loop temporary of numbers.
// CHECK-LABEL: func.func @index_buffer
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<2xindex>
// CHECK-NOT: memref.alloca
func.func @index_buffer(%x: memref<?xindex>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = memref.alloc() {alignment = 64 : i64} : memref<2xindex>
  memref.store %n, %t[%c0] : memref<2xindex>
  %v = memref.load %t[%c0] : memref<2xindex>
  memref.store %v, %x[%c0] : memref<?xindex>
  return
}
