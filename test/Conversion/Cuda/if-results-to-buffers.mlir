// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(disc-if-results-to-buffers))' | FileCheck %s

// A scatter of one update whose loop folded away: the then branch's
// allocation becomes the buffer made before the if; the else branch
// copies the operand into it. The if yields nothing.
// CHECK-LABEL: func.func @if_yielding_buffers
// CHECK-SAME:    (%[[X:.*]]: memref<?xf32>, %[[I:.*]]: memref<index>, %[[U:.*]]: memref<f32>)
// CHECK:         %[[N:.*]] = memref.dim %[[X]], %c0
// CHECK:         %[[R:.*]] = memref.alloc(%[[N]]) {alignment = 64 : i64} : memref<?xf32>
// CHECK-NOT:     memref.alloc
// CHECK:         scf.if %{{.*}} {
// CHECK-NEXT:      memref.copy %[[X]], %[[R]]
// CHECK:           memref.store %{{.*}}, %[[R]][
// CHECK-NEXT:    } else {
// CHECK-NEXT:      memref.copy %[[X]], %[[R]]
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]] : memref<?xf32>
func.func @if_yielding_buffers(%x: memref<?xf32>, %i: memref<index>, %u: memref<f32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %k = memref.load %i[] : memref<index>
  %in = arith.cmpi ult, %k, %n : index
  %r = scf.if %in -> (memref<?xf32>) {
    %copy = memref.alloc(%n) : memref<?xf32>
    memref.copy %x, %copy : memref<?xf32> to memref<?xf32>
    %v = memref.load %u[] : memref<f32>
    memref.store %v, %copy[%k] : memref<?xf32>
    scf.yield %copy : memref<?xf32>
  } else {
    scf.yield %x : memref<?xf32>
  }
  return %r : memref<?xf32>
}

// -----

// The size comes from the buffer the else branch yields when the then
// branch's allocation is sized by that buffer's dim; a scalar result stays
// a result of the if.
// CHECK-LABEL: func.func @size_from_the_operand
// CHECK-SAME:    (%[[X:.*]]: memref<4x?xf32>, %{{.*}}: i1)
// CHECK:         %[[D:.*]] = memref.dim %[[X]], %c1
// CHECK:         %[[R:.*]] = memref.alloc(%[[D]]) {alignment = 64 : i64} : memref<4x?xf32>
// CHECK:         %[[S:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK:           scf.yield %{{.*}} : f32
// CHECK:         } else {
// CHECK-NEXT:      memref.copy %[[X]], %[[R]]
// CHECK-NEXT:      scf.yield %{{.*}} : f32
// CHECK:         return %[[R]], %[[S]]
func.func @size_from_the_operand(%x: memref<4x?xf32>, %c: i1) -> (memref<4x?xf32>, f32) {
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %d = memref.dim %x, %c1 : memref<4x?xf32>
  %r:2 = scf.if %c -> (memref<4x?xf32>, f32) {
    %fresh = memref.alloc(%d) : memref<4x?xf32>
    scf.yield %fresh, %one : memref<4x?xf32>, f32
  } else {
    scf.yield %x, %two : memref<4x?xf32>, f32
  }
  return %r#0, %r#1 : memref<4x?xf32>, f32
}

// -----

// Static shapes need no sizes; both branches yield buffers from before the
// if, each copied in.
// CHECK-LABEL: func.func @static_buffers_from_before
// CHECK:         %[[R:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8xi32>
// CHECK:         scf.if
// CHECK-NEXT:      memref.copy %arg0, %[[R]]
// CHECK:         } else {
// CHECK-NEXT:      memref.copy %arg1, %[[R]]
// CHECK:         return %[[R]]
func.func @static_buffers_from_before(%a: memref<8xi32>, %b: memref<8xi32>, %c: i1) -> memref<8xi32> {
  %r = scf.if %c -> (memref<8xi32>) {
    scf.yield %a : memref<8xi32>
  } else {
    scf.yield %b : memref<8xi32>
  }
  return %r : memref<8xi32>
}

// -----

// Must NOT rewrite a branch that allocates a buffer it does not yield (it
// would allocate inside the one-thread kernel), be it a heap or a stack
// buffer.
// CHECK-LABEL: func.func @if_with_a_scratch_buffer
// CHECK:         scf.if %{{.*}} -> (memref<?xf32>)
// CHECK-LABEL: func.func @if_with_a_stack_buffer
// CHECK:         scf.if %{{.*}} -> (memref<4xf32>)
func.func @if_with_a_scratch_buffer(%x: memref<?xf32>, %c: i1) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %r = scf.if %c -> (memref<?xf32>) {
    %scratch = memref.alloc(%n) : memref<?xf32>
    memref.copy %x, %scratch : memref<?xf32> to memref<?xf32>
    scf.yield %x : memref<?xf32>
  } else {
    scf.yield %x : memref<?xf32>
  }
  return %r : memref<?xf32>
}
func.func @if_with_a_stack_buffer(%x: memref<4xf32>, %c: i1) -> memref<4xf32> {
  %r = scf.if %c -> (memref<4xf32>) {
    %scratch = memref.alloca() : memref<4xf32>
    memref.copy %x, %scratch : memref<4xf32> to memref<4xf32>
    scf.yield %x : memref<4xf32>
  } else {
    scf.yield %x : memref<4xf32>
  }
  return %r : memref<4xf32>
}

// -----

// Must NOT rewrite branches whose buffers may differ in size (one buffer
// could not hold both), nor a result with a layout; what was made while
// trying (the first result's buffer and dims) is erased.
// CHECK-LABEL: func.func @if_with_buffers_of_two_sizes
// CHECK-NOT:     memref.alloc()
// CHECK-NOT:     memref.dim
// CHECK:         scf.if %{{.*}} -> (memref<?xf32>)
// CHECK-LABEL: func.func @one_result_of_two_sizes
// CHECK-NOT:     arith.constant
// CHECK-NOT:     memref.dim
// CHECK-NOT:     memref.alloc
// CHECK:         scf.if %{{.*}} -> (memref<?xf32>, memref<?xf32>)
// CHECK-LABEL: func.func @if_with_a_strided_result
// CHECK-NOT:     memref.alloc
// CHECK:         scf.if %{{.*}} -> (memref<2xf32, strided<[2]>>)
func.func @if_with_buffers_of_two_sizes(%x: memref<?xf32>, %y: memref<?xf32>, %c: i1) -> memref<?xf32> {
  %r = scf.if %c -> (memref<?xf32>) {
    scf.yield %x : memref<?xf32>
  } else {
    scf.yield %y : memref<?xf32>
  }
  return %r : memref<?xf32>
}
func.func @one_result_of_two_sizes(%x: memref<?xf32>, %y: memref<?xf32>, %c: i1) -> (memref<?xf32>, memref<?xf32>) {
  %r:2 = scf.if %c -> (memref<?xf32>, memref<?xf32>) {
    scf.yield %x, %x : memref<?xf32>, memref<?xf32>
  } else {
    scf.yield %x, %y : memref<?xf32>, memref<?xf32>
  }
  return %r#0, %r#1 : memref<?xf32>, memref<?xf32>
}
func.func @if_with_a_strided_result(%x: memref<2xf32, strided<[2]>>, %y: memref<2xf32, strided<[2]>>, %c: i1) -> memref<2xf32, strided<[2]>> {
  %r = scf.if %c -> (memref<2xf32, strided<[2]>>) {
    scf.yield %x : memref<2xf32, strided<[2]>>
  } else {
    scf.yield %y : memref<2xf32, strided<[2]>>
  }
  return %r : memref<2xf32, strided<[2]>>
}

// -----

// Must NOT touch an if inside a loop (not host code).
// CHECK-LABEL: func.func @not_host_level
// CHECK-NOT:     memref.alloc
// CHECK:         scf.for
// CHECK:           scf.if %{{.*}} -> (memref<4xf32>)
func.func @not_host_level(%a: memref<4xf32>, %b: memref<4xf32>, %c: i1, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %r = scf.if %c -> (memref<4xf32>) {
      scf.yield %a : memref<4xf32>
    } else {
      scf.yield %b : memref<4xf32>
    }
    %v = memref.load %r[%i] : memref<4xf32>
    memref.store %v, %out[%i] : memref<4xf32>
  }
  return
}
