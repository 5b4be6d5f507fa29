// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(disc-free-after-last-use))' | FileCheck %s

func.func private @kernel(memref<?xf32>, memref<?xf32>)
func.func private @library(memref<*xf32>)

// A chain: each intermediate is freed right after the call that reads it
// last, before the next allocation; the returned buffer is not freed.
// CHECK-LABEL: func.func @chain
// CHECK:      %[[A:.*]] = memref.alloc
// CHECK-NEXT: call @kernel(%arg0, %[[A]])
// CHECK-NEXT: %[[B:.*]] = memref.alloc
// CHECK-NEXT: %[[CAST:.*]] = memref.cast %[[B]]
// CHECK-NEXT: call @kernel(%[[A]], %[[B]])
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: call @library(%[[CAST]])
// CHECK-NEXT: %[[C:.*]] = memref.alloc
// CHECK-NEXT: call @kernel(%[[B]], %[[C]])
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: return %[[C]]
// CHECK-NOT: memref.dealloc
func.func @chain(%x: memref<?xf32>, %n: index) -> memref<?xf32> {
  %a = memref.alloc(%n) : memref<?xf32>
  call @kernel(%x, %a) : (memref<?xf32>, memref<?xf32>) -> ()
  %b = memref.alloc(%n) : memref<?xf32>
  %cast = memref.cast %b : memref<?xf32> to memref<*xf32>
  call @kernel(%a, %b) : (memref<?xf32>, memref<?xf32>) -> ()
  call @library(%cast) : (memref<*xf32>) -> ()
  %c = memref.alloc(%n) : memref<?xf32>
  call @kernel(%b, %c) : (memref<?xf32>, memref<?xf32>) -> ()
  return %c : memref<?xf32>
}

// -----

func.func private @kernel(memref<?xf32>, memref<?xf32>)

// A use inside a loop keeps the buffer alive for the whole loop; a buffer
// allocated in the loop body is freed in the body.
// CHECK-LABEL: func.func @loops
// CHECK:      %[[A:.*]] = memref.alloc
// CHECK:      scf.for
// CHECK:        %[[T:.*]] = memref.alloc
// CHECK-NEXT:   call @kernel(%[[A]], %[[T]])
// CHECK-NEXT:   call @kernel(%[[T]], %arg0)
// CHECK-NEXT:   memref.dealloc %[[T]]
// CHECK-NEXT: }
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: return
func.func @loops(%x: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc(%n) : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %t = memref.alloc(%n) : memref<?xf32>
    func.call @kernel(%a, %t) : (memref<?xf32>, memref<?xf32>) -> ()
    func.call @kernel(%t, %x) : (memref<?xf32>, memref<?xf32>) -> ()
  }
  return
}

// -----

func.func private @kernel2d(memref<?x4xf32>)

// The uses of a view are uses of its buffer.
// CHECK-LABEL: func.func @views
// CHECK:      %[[A:.*]] = memref.alloc
// CHECK:      memref.expand_shape %[[A]]
// CHECK-NEXT: call @kernel2d
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: return
func.func @views(%n: index) {
  %a = memref.alloc(%n) : memref<?xf32>
  %c4 = arith.constant 4 : index
  %rows = arith.divui %n, %c4 : index
  %v = memref.expand_shape %a [[0, 1]] output_shape [%rows, 4] : memref<?xf32> into memref<?x4xf32>
  call @kernel2d(%v) : (memref<?x4xf32>) -> ()
  return
}

// -----

func.func private @kernel(memref<?xf32>, memref<?xf32>)

// Must NOT free: a buffer returned through a view, one yielded out of a
// region, and one that already has a dealloc.
// CHECK-LABEL: func.func @escaping
// CHECK-COUNT-1: memref.dealloc
// CHECK-NOT: memref.dealloc
func.func @escaping(%x: memref<?xf32>, %n: index, %cond: i1) -> (memref<?x1xf32>, memref<?xf32>) {
  %a = memref.alloc(%n) : memref<?xf32>
  call @kernel(%x, %a) : (memref<?xf32>, memref<?xf32>) -> ()
  %v = memref.expand_shape %a [[0, 1]] output_shape [%n, 1] : memref<?xf32> into memref<?x1xf32>
  %r = scf.if %cond -> memref<?xf32> {
    %b = memref.alloc(%n) : memref<?xf32>
    scf.yield %b : memref<?xf32>
  } else {
    scf.yield %x : memref<?xf32>
  }
  %d = memref.alloc(%n) : memref<?xf32>
  memref.dealloc %d : memref<?xf32>
  return %v, %r : memref<?x1xf32>, memref<?xf32>
}

// -----

func.func private @kernel(memref<?xf32>, memref<?xf32>)
func.func private @vector_kernel(memref<?xf32>, memref<?xf32>)
func.func private @keep(index)

// An address only tested (the vector grids' alignment check picks a
// variant from address % 16) does not keep the buffer alive: %a is freed
// after the scf.if that reads it. An address passed on (to a call) could be
// used to read the buffer later: %b must NOT be freed.
// CHECK-LABEL: func.func @tested_address
// CHECK:       %[[A:.*]] = memref.alloc
// CHECK:       %[[B:.*]] = memref.alloc
// CHECK:       memref.extract_aligned_pointer_as_index %[[A]]
// CHECK:       scf.if
// CHECK:       } else {
// CHECK:       }
// CHECK-NEXT:  memref.dealloc %[[A]]
// CHECK-NOT:   memref.dealloc %[[B]]
// CHECK:       return
func.func @tested_address(%x: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %a = memref.alloc(%n) : memref<?xf32>
  %b = memref.alloc(%n) : memref<?xf32>
  %address = memref.extract_aligned_pointer_as_index %a : memref<?xf32> -> index
  %rem = arith.remui %address, %c16 : index
  %aligned = arith.cmpi eq, %rem, %c0 : index
  scf.if %aligned {
    func.call @vector_kernel(%x, %a) : (memref<?xf32>, memref<?xf32>) -> ()
  } else {
    func.call @kernel(%x, %a) : (memref<?xf32>, memref<?xf32>) -> ()
  }
  %leaked = memref.extract_aligned_pointer_as_index %b : memref<?xf32> -> index
  func.call @keep(%leaked) : (index) -> ()
  return
}
