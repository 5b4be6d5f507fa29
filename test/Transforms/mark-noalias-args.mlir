// RUN: disc-opt %s -split-input-file -allow-unregistered-dialect -disc-mark-noalias-args | FileCheck %s

// Two fresh allocations and an entry argument: no two overlap, so every
// buffer argument of the kernel and of its parallel body is marked, and
// the aligned pointers' positions in the expanded LLVM signature are
// recorded (a rank-r memref takes 3 + 2r arguments, the aligned pointer
// second).
// CHECK-LABEL: func.func private @k(
// CHECK-SAME: %{{.*}}: index, %{{.*}}: memref<?xf32> {disc.noalias}, %{{.*}}: memref<?xi64> {disc.noalias}, %{{.*}}: memref<?xf32> {disc.noalias})
// CHECK-SAME: disc.llvm_arg_count = 16 : i64, disc.noalias_llvm_args = array<i64: 2, 7, 12>
// CHECK-LABEL: func.func private @k_par0(
// CHECK-SAME: %{{.*}}: memref<?xf32> {disc.noalias}, %{{.*}}: memref<?xi64> {disc.noalias}, %{{.*}}: memref<?xf32> {disc.noalias})
// CHECK-SAME: disc.llvm_arg_count = 18 : i64, disc.noalias_llvm_args = array<i64: 4, 9, 14>
func.func private @k(%n: index, %x: memref<?xf32>, %idx: memref<?xi64>, %out: memref<?xf32>) attributes {disc.kernel} {
  %c0 = arith.constant 0 : index
  call @k_par0(%c0, %n, %n, %x, %idx, %out) : (index, index, index, memref<?xf32>, memref<?xi64>, memref<?xf32>) -> ()
  return
}
func.func private @k_par0(%lo: index, %hi: index, %work: index, %x: memref<?xf32>, %idx: memref<?xi64>, %out: memref<?xf32>) attributes {disc.parallel_body} {
  %c1 = arith.constant 1 : index
  scf.for %i = %lo to %hi step %c1 {
    %j = memref.load %idx[%i] : memref<?xi64>
    %jj = arith.index_cast %j : i64 to index
    %v = memref.load %x[%jj] : memref<?xf32>
    memref.store %v, %out[%i] : memref<?xf32>
  }
  return
}
func.func @main(%x: memref<?xf32>, %n: index) -> memref<?xf32> attributes {disc.entry} {
  %idx = memref.alloc(%n) : memref<?xi64>
  %out = memref.alloc(%n) : memref<?xf32>
  call @k(%n, %x, %idx, %out) : (index, memref<?xf32>, memref<?xi64>, memref<?xf32>) -> ()
  return %out : memref<?xf32>
}

// -----

// Must not: two entry arguments may be one tensor passed twice, so the one
// written overlaps the one read, and neither is marked; the output, a
// fresh allocation, overlaps neither and is.
// CHECK-LABEL: func.func private @two_inputs(
// CHECK-SAME: %[[A:[^:]*]]: memref<?xf32>, %[[B:[^:]*]]: memref<?xf32>, %{{[^:]*}}: memref<?xf32> {disc.noalias})
// CHECK-NOT: disc.noalias}, %
func.func private @two_inputs(%n: index, %a: memref<?xf32>, %b: memref<?xf32>, %out: memref<?xf32>) attributes {disc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %a[%i] : memref<?xf32>
    memref.store %v, %b[%i] : memref<?xf32>
    memref.store %v, %out[%i] : memref<?xf32>
  }
  return
}
func.func @main(%a: memref<?xf32>, %b: memref<?xf32>, %n: index) -> memref<?xf32> attributes {disc.entry} {
  %out = memref.alloc(%n) : memref<?xf32>
  call @two_inputs(%n, %a, %b, %out) : (index, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
  return %out : memref<?xf32>
}

// -----

// Must not: two slices of one buffer (a concatenate's), one written; and
// one buffer passed twice. Two entry arguments only read are marked: reads
// never conflict.
// CHECK-LABEL: func.func private @slices(
// CHECK-SAME: %{{[^:]*}}: memref<?xf32> {disc.noalias}, %{{[^:]*}}: memref<?xf32> {disc.noalias}, %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xf32>)
// CHECK-LABEL: func.func private @twice(
// CHECK-SAME: %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xf32>)
// CHECK-NOT: disc.noalias
func.func private @slices(%n: index, %a: memref<?xf32>, %b: memref<?xf32>, %lo: memref<?xf32>, %hi: memref<?xf32>) attributes {disc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %a[%i] : memref<?xf32>
    %w = memref.load %b[%i] : memref<?xf32>
    %u = memref.load %hi[%i] : memref<?xf32>
    %s = arith.addf %v, %w : f32
    %t = arith.addf %s, %u : f32
    memref.store %t, %lo[%i] : memref<?xf32>
  }
  return
}
func.func private @twice(%n: index, %a: memref<?xf32>, %b: memref<?xf32>) attributes {disc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %a[%i] : memref<?xf32>
    memref.store %v, %b[%i] : memref<?xf32>
  }
  return
}
func.func @main(%a: memref<?xf32>, %b: memref<?xf32>, %n: index) -> memref<?xf32> attributes {disc.entry} {
  %c2 = arith.constant 2 : index
  %m = arith.muli %n, %c2 : index
  %cat = memref.alloc(%m) : memref<?xf32>
  %lo = memref.subview %cat[0] [%n] [1] : memref<?xf32> to memref<?xf32, strided<[1]>>
  %lo_cast = memref.cast %lo : memref<?xf32, strided<[1]>> to memref<?xf32>
  %hi_view = memref.reinterpret_cast %cat to offset: [0], sizes: [%n], strides: [1] : memref<?xf32> to memref<?xf32>
  call @slices(%n, %a, %b, %lo_cast, %hi_view) : (index, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
  %out = memref.alloc(%n) : memref<?xf32>
  call @twice(%n, %out, %out) : (index, memref<?xf32>, memref<?xf32>) -> ()
  return %out : memref<?xf32>
}

// -----

// A parallel body builds on its kernel's marks: views of two different
// kernel arguments, one marked, do not overlap. The kernel's two entry
// arguments (one written) stay unmarked, and so do the body's views of
// them; the body's view of the marked output is marked.
// CHECK-LABEL: func.func private @kv(
// CHECK-SAME: %{{[^:]*}}: memref<?x?xf32>, %{{[^:]*}}: memref<?x?xf32>, %{{[^:]*}}: memref<?x?xf32> {disc.noalias})
// CHECK-LABEL: func.func private @kv_par0(
// CHECK-SAME: %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xf32> {disc.noalias})
func.func private @kv(%n: index, %a: memref<?x?xf32>, %b: memref<?x?xf32>, %out: memref<?x?xf32>) attributes {disc.kernel} {
  %c0 = arith.constant 0 : index
  %fa = memref.collapse_shape %a [[0, 1]] : memref<?x?xf32> into memref<?xf32>
  %fb = memref.collapse_shape %b [[0, 1]] : memref<?x?xf32> into memref<?xf32>
  %fo = memref.collapse_shape %out [[0, 1]] : memref<?x?xf32> into memref<?xf32>
  call @kv_par0(%c0, %n, %n, %fa, %fb, %fo) : (index, index, index, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
  return
}
func.func private @kv_par0(%lo: index, %hi: index, %work: index, %a: memref<?xf32>, %b: memref<?xf32>, %out: memref<?xf32>) attributes {disc.parallel_body} {
  %c1 = arith.constant 1 : index
  scf.for %i = %lo to %hi step %c1 {
    %v = memref.load %a[%i] : memref<?xf32>
    memref.store %v, %b[%i] : memref<?xf32>
    memref.store %v, %out[%i] : memref<?xf32>
  }
  return
}
func.func @main(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %n: index, %m: index) -> memref<?x?xf32> attributes {disc.entry} {
  %out = memref.alloc(%n, %m) : memref<?x?xf32>
  %nm = arith.muli %n, %m : index
  call @kv(%nm, %a, %b, %out) : (index, memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) -> ()
  return %out : memref<?x?xf32>
}

// -----

// Must not: an op of unknown memory effects counts as a write, so the
// buffer it takes overlaps the other argument it may alias; a function
// that is not a kernel or parallel body is left alone.
// CHECK-LABEL: func.func private @unknown(
// CHECK-SAME: %{{[^:]*}}: memref<?xf32>, %{{[^:]*}}: memref<?xf32>)
// CHECK-LABEL: func.func private @helper(
// CHECK-NOT: disc.noalias
func.func private @unknown(%a: memref<?xf32>, %b: memref<?xf32>) attributes {disc.kernel} {
  "test.opaque"(%a) : (memref<?xf32>) -> ()
  %c0 = arith.constant 0 : index
  %v = memref.load %b[%c0] : memref<?xf32>
  return
}
func.func private @helper(%a: memref<?xf32>, %b: memref<?xf32>) {
  return
}
func.func @main(%a: memref<?xf32>, %b: memref<?xf32>) attributes {disc.entry} {
  call @unknown(%a, %b) : (memref<?xf32>, memref<?xf32>) -> ()
  call @helper(%a, %b) : (memref<?xf32>, memref<?xf32>) -> ()
  return
}
