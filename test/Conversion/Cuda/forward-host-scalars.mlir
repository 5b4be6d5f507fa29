// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(disc-forward-host-scalars))' | FileCheck %s

// A reduction's identity fill copied into its accumulator: the loop starts
// from the constant, the fill, the copy and the fill's buffer go (each
// would be a one-thread kernel on a GPU); the accumulator keeps the result.
// CHECK-LABEL: func.func @fill_copied_into_an_accumulator
// CHECK-SAME:    (%[[A:.*]]: memref<?xf64>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0.0
// CHECK:         %[[ACC:.*]] = memref.alloc() : memref<f64>
// CHECK-NOT:     memref.copy
// CHECK:         %[[SUM:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[ZERO]])
// CHECK:         memref.store %[[SUM]], %[[ACC]][]
// CHECK-NOT:     memref.alloc
// CHECK:         return %[[ACC]]
func.func @fill_copied_into_an_accumulator(%a: memref<?xf64>) -> memref<f64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %fill = memref.alloc() : memref<f64>
  memref.store %zero, %fill[] : memref<f64>
  %acc = memref.alloc() : memref<f64>
  memref.copy %fill, %acc : memref<f64> to memref<f64>
  %n = memref.dim %a, %c0 : memref<?xf64>
  %init = memref.load %acc[] : memref<f64>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%x = %init) -> (f64) {
    %v = memref.load %a[%i] : memref<?xf64>
    %y = arith.addf %x, %v : f64
    scf.yield %y : f64
  }
  memref.store %s, %acc[] : memref<f64>
  memref.dealloc %fill : memref<f64>
  return %acc : memref<f64>
}

// -----

// A mean's element count stored as i64, read back, converted and stored
// again: both loads take host values (the second once the first is gone),
// including the one inside the loop, which then uses the host value; both
// buffers go.
// CHECK-LABEL: func.func @element_count_through_two_buffers
// CHECK:         %[[N:.*]] = memref.dim
// CHECK:         %[[I:.*]] = arith.index_cast %[[N]] : index to i64
// CHECK:         %[[F:.*]] = arith.sitofp %[[I]] : i64 to f32
// CHECK-NOT:     memref.alloc()
// CHECK:         scf.parallel
// CHECK:           arith.divf %{{.*}}, %[[F]]
// CHECK-NOT:     memref.load %{{.*}}[] :
func.func @element_count_through_two_buffers(%a: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %count = memref.alloc() : memref<f32>
  %ni = arith.index_cast %n : index to i64
  %wide = memref.alloc() : memref<i64>
  memref.store %ni, %wide[] : memref<i64>
  %back = memref.load %wide[] : memref<i64>
  %nf = arith.sitofp %back : i64 to f32
  memref.store %nf, %count[] : memref<f32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %a[%i] : memref<?xf32>
    %d = memref.load %count[] : memref<f32>
    %q = arith.divf %v, %d : f32
    memref.store %q, %out[%i] : memref<?xf32>
    scf.reduce
  }
  memref.dealloc %wide : memref<i64>
  memref.dealloc %count : memref<f32>
  return
}

// -----

// A value read from memory is never forwarded (the host does not hold it):
// the accumulator's result, converted and stored, stays in memory, and so
// does the load in the next loop.
// CHECK-LABEL: func.func @value_read_from_memory
// CHECK:         %[[ACC:.*]] = memref.alloc() : memref<f32>
// CHECK:         %[[MEAN:.*]] = memref.alloc() : memref<f32>
// CHECK:         memref.store %{{.*}}, %[[MEAN]][]
// CHECK:         scf.parallel
// CHECK:           memref.load %[[MEAN]][]
func.func @value_read_from_memory(%a: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %a, %c0 : memref<?xf32>
  %acc = memref.alloc() : memref<f32>
  %mean = memref.alloc() : memref<f32>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%x = %zero) -> (f32) {
    %v = memref.load %a[%i] : memref<?xf32>
    %y = arith.addf %x, %v : f32
    scf.yield %y : f32
  }
  memref.store %s, %acc[] : memref<f32>
  %r = memref.load %acc[] : memref<f32>
  %h = arith.mulf %r, %r : f32
  memref.store %h, %mean[] : memref<f32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %a[%i] : memref<?xf32>
    %m = memref.load %mean[] : memref<f32>
    %q = arith.subf %v, %m : f32
    memref.store %q, %out[%i] : memref<?xf32>
    scf.reduce
  }
  memref.dealloc %acc : memref<f32>
  memref.dealloc %mean : memref<f32>
  return
}

// -----

// Loads in an op that also writes the buffer are left alone, and nothing
// after that op takes the earlier value; a buffer used otherwise (passed to
// a call) is not touched.
// CHECK-LABEL: func.func @written_in_a_loop
// CHECK:         %[[B:.*]] = memref.alloc() : memref<f32>
// CHECK:         memref.store %{{.*}}, %[[B]][]
// CHECK:         scf.for
// CHECK:           memref.load %[[B]][]
// CHECK:           memref.store %{{.*}}, %[[B]][]
// CHECK:         %[[AFTER:.*]] = memref.load %[[B]][]
// CHECK:         memref.store %[[AFTER]], %arg1[]
// CHECK:         %[[C:.*]] = memref.alloc() : memref<f32>
// CHECK:         memref.store %{{.*}}, %[[C]][]
// CHECK:         call @consume(%[[C]])
func.func private @consume(memref<f32>)
func.func @written_in_a_loop(%a: memref<?xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %n = memref.dim %a, %c0 : memref<?xf32>
  %b = memref.alloc() : memref<f32>
  memref.store %one, %b[] : memref<f32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %b[] : memref<f32>
    %v = memref.load %a[%i] : memref<?xf32>
    %y = arith.mulf %x, %v : f32
    memref.store %y, %b[] : memref<f32>
  }
  %after = memref.load %b[] : memref<f32>
  memref.store %after, %out[] : memref<f32>
  %c = memref.alloc() : memref<f32>
  memref.store %one, %c[] : memref<f32>
  func.call @consume(%c) : (memref<f32>) -> ()
  return
}

// -----

// A store nothing reads before the next store goes; the buffer, read after
// the second (a value from memory), stays.
// CHECK-LABEL: func.func @overwritten_store
// CHECK:         %[[B:.*]] = memref.alloc() : memref<f32>
// CHECK-NOT:     memref.store %cst
// CHECK:         %[[V:.*]] = memref.load %arg0[
// CHECK:         memref.store %[[V]], %[[B]][]
// CHECK:         scf.parallel
// CHECK:           memref.load %[[B]][]
func.func @overwritten_store(%a: memref<4xf32>, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %cst = arith.constant 2.0 : f32
  %b = memref.alloc() : memref<f32>
  memref.store %cst, %b[] : memref<f32>
  %v = memref.load %a[%c0] : memref<4xf32>
  memref.store %v, %b[] : memref<f32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %x = memref.load %b[] : memref<f32>
    memref.store %x, %out[%i] : memref<4xf32>
    scf.reduce
  }
  return
}
