// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(disc-thread-scratch-temporaries))' | FileCheck %s

// A row temporary of a dynamic size inside a parallel loop comes from the
// thread's scratch buffer: bytes = 4 * n, viewed as the original type.
// CHECK-LABEL: func.func @row_temporary
// CHECK-SAME: (%[[X:.*]]: memref<?x?xf32>, %[[ROWS:.*]]: index, %[[N:.*]]: index)
// CHECK: scf.parallel
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[BYTES:.*]] = arith.muli %[[C4]], %[[N]] : index
// CHECK: %[[SCRATCH:.*]] = disc.thread_scratch %[[BYTES]] slot = 0 : memref<?xi8>
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[ROW:.*]] = memref.view %[[SCRATCH]][%[[C0]]][%[[N]]] : memref<?xi8> to memref<?xf32>
// CHECK: memref.store %{{.*}}, %[[ROW]]
// CHECK-NOT: memref.alloc
func.func @row_temporary(%x: memref<?x?xf32>, %rows: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%rows) step (%c1) {
    %row = memref.alloc(%n) {alignment = 64 : i64} : memref<?xf32>
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      memref.store %v, %row[%j] : memref<?xf32>
    }
    %w = memref.load %row[%c0] : memref<?xf32>
    memref.store %w, %x[%i, %c0] : memref<?x?xf32>
    scf.reduce
  }
  return
}

// -----

// Two temporaries alive at once get two slots; static dims count in the
// size (3 x 2 bytes per dynamic element for 3x?xf16; 8 x 4 for 8xi32).
// CHECK-LABEL: func.func @two_temporaries
// CHECK-SAME: (%[[N:.*]]: index)
// CHECK: %[[C6:.*]] = arith.constant 6 : index
// CHECK: %[[B0:.*]] = arith.muli %[[C6]], %[[N]] : index
// CHECK: disc.thread_scratch %[[B0]] slot = 0
// CHECK: memref.view %{{.*}}[%{{.*}}][%[[N]]] : memref<?xi8> to memref<3x?xf16>
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: disc.thread_scratch %[[C32]] slot = 1
// CHECK: memref.view %{{.*}}[%{{.*}}][] : memref<?xi8> to memref<8xi32>
// CHECK-NOT: memref.alloc
func.func @two_temporaries(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %h = arith.constant 1.0 : f16
  %k = arith.constant 7 : i32
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.alloc(%n) : memref<3x?xf16>
    %b = memref.alloc() : memref<8xi32>
    memref.store %h, %a[%c0, %i] : memref<3x?xf16>
    memref.store %k, %b[%c0] : memref<8xi32>
  }
  return
}

// -----

// A temporary read through a view (subview) still qualifies.
// CHECK-LABEL: func.func @through_subview
// CHECK: disc.thread_scratch
// CHECK: memref.subview
// CHECK-NOT: memref.alloc
func.func @through_subview(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.alloc(%n) : memref<?xf32>
    %s = memref.subview %a[1] [2] [1] : memref<?xf32> to memref<2xf32, strided<[1], offset: 1>>
    memref.store %z, %s[%c0] : memref<2xf32, strided<[1], offset: 1>>
  }
  return
}

// -----

// Must NOT come from scratch: outside a loop, freed by the code, handed to
// a call, carried out of its iteration (yielded), viewed and used outside
// the body, non-identity layout, non-numeric element type.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: disc.thread_scratch
// CHECK-COUNT-6: memref.alloc
// CHECK-NOT: disc.thread_scratch
func.func private @use(memref<?xf32>)
func.func @kept(%n: index, %init: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %top = memref.alloc(%n) : memref<?xf32>
  %carried = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (memref<?xf32>) {
    %freed = memref.alloc(%n) : memref<?xf32>
    memref.dealloc %freed : memref<?xf32>
    %called = memref.alloc(%n) : memref<?xf32>
    func.call @use(%called) : (memref<?xf32>) -> ()
    %yielded = memref.alloc(%n) : memref<?xf32>
    %strided = memref.alloc(%n) : memref<?xf32, strided<[1], offset: 4>>
    %idx = memref.alloc(%n) : memref<?xindex>
    scf.yield %yielded : memref<?xf32>
  }
  return %carried : memref<?xf32>
}
