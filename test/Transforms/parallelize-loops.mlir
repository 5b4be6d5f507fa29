// RUN: disc-opt %s -split-input-file -disc-parallelize-loops | FileCheck %s

// A 2-d elementwise loop: units = rows x 1024-element blocks of the inner
// dim; each unit is a sequential (vectorisable) loop over one block in the
// outlined body. The call passes lo = 0, hi = the unit count, work = the
// block length (min(inner extent, 1024)).
// CHECK-LABEL: func.func private @k(
// CHECK-SAME: %[[N:.*]]: index, %[[M:.*]]: index, %[[A:.*]]: memref<?x?xf32>, %[[B:.*]]: memref<?x?xf32>)
// CHECK: %[[BLOCK:.*]] = arith.constant 1024 : index
// CHECK: %[[NB:.*]] = arith.ceildivui %[[M]], %[[BLOCK]] : index
// CHECK: %[[UNITS:.*]] = arith.muli %[[N]], %[[NB]] : index
// CHECK: %[[WORK:.*]] = arith.minui %[[M]], %[[BLOCK]] : index
// CHECK: call @k_par0(%{{.*}}, %[[UNITS]], %[[WORK]], %[[N]], %[[M]], %[[A]], %[[B]])
// CHECK-NOT: scf.parallel
// CHECK: func.func private @k_par0(%[[LO:.*]]: index, %[[HI:.*]]: index, %{{.*}}: index, %{{.*}}: index, %[[PM:.*]]: index, %[[PA:.*]]: memref<?x?xf32>, %[[PB:.*]]: memref<?x?xf32>)
// CHECK-SAME: attributes {disc.parallel_body, llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK: scf.for %[[U:.*]] = %[[LO]] to %[[HI]]
// CHECK: %[[PNB:.*]] = arith.ceildivui %[[PM]], %{{.*}} : index
// CHECK: %[[BI:.*]] = arith.remui %[[U]], %[[PNB]] : index
// CHECK: %[[I:.*]] = arith.divui %[[U]], %[[PNB]] : index
// CHECK: %[[BEGIN:.*]] = arith.muli %[[BI]], %{{.*}} : index
// CHECK: %[[NEXT:.*]] = arith.addi %[[BEGIN]], %{{.*}} : index
// CHECK: %[[END:.*]] = arith.minui %[[PM]], %[[NEXT]] : index
// CHECK: scf.for %[[J:.*]] = %[[BEGIN]] to %[[END]]
// CHECK: memref.load %[[PA]][%[[I]], %[[J]]]
// CHECK: memref.store %{{.*}}, %[[PB]][%[[I]], %[[J]]]
func.func private @k(%n: index, %m: index, %a: memref<?x?xf32>, %b: memref<?x?xf32>) attributes {disc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %m) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<?x?xf32>
    %w = arith.negf %v : f32
    memref.store %w, %b[%i, %j] : memref<?x?xf32>
  }
  return
}

// -----

// 3-d with a reduction inside: dims 0 and 1 and the blocks of dim 2 are
// linearised into units (delinearised in the body with rem/div); work =
// block length x the reduction's trip count.
// CHECK-LABEL: func.func private @reduce(
// CHECK: %[[OUTER:.*]] = arith.muli %arg0, %arg1 : index
// CHECK: %[[NB:.*]] = arith.ceildivui %arg2, %{{.*}} : index
// CHECK: %[[UNITS:.*]] = arith.muli %[[OUTER]], %[[NB]] : index
// CHECK: %[[BLOCKLEN:.*]] = arith.minui %arg2, %{{.*}} : index
// CHECK: %[[TRIPS:.*]] = arith.subi %arg3, %{{.*}} : index
// CHECK: %[[WORK:.*]] = arith.muli %[[BLOCKLEN]], %[[TRIPS]] : index
// CHECK: call @reduce_par0(%{{.*}}, %[[UNITS]], %[[WORK]],
// CHECK: func.func private @reduce_par0(
// CHECK: scf.for %[[U:.*]] =
// CHECK: %[[BI:.*]] = arith.remui %[[U]], %{{.*}} : index
// CHECK: %[[R1:.*]] = arith.divui %[[U]], %{{.*}} : index
// CHECK: %[[J:.*]] = arith.remui %[[R1]], %{{.*}} : index
// CHECK: %[[I:.*]] = arith.divui %[[R1]], %{{.*}} : index
// CHECK: scf.for %[[K:.*]] =
// CHECK: scf.for {{.*}} iter_args
// CHECK: memref.load %arg{{.*}}[%[[I]], %[[J]], %[[K]], %{{.*}}]
func.func private @reduce(%n: index, %m: index, %l: index, %r: index, %x: memref<?x?x?x?xf32>, %out: memref<?x?x?xf32>) attributes {disc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%n, %m, %l) step (%c1, %c1, %c1) {
    %s = scf.for %q = %c0 to %r step %c1 iter_args(%acc = %zero) -> f32 {
      %v = memref.load %x[%i, %j, %k, %q] : memref<?x?x?x?xf32>
      %t = arith.addf %acc, %v : f32
      scf.yield %t : f32
    }
    memref.store %s, %out[%i, %j, %k] : memref<?x?x?xf32>
  }
  return
}

// -----

// A 1-d loop is the range itself; work per unit is 1.
// CHECK-LABEL: func.func private @flat(
// CHECK: arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT: call @flat_par0(%[[ZERO]], %arg0, %[[ONE]],
// CHECK: func.func private @flat_par0(
// CHECK: scf.for %[[I:.*]] = %arg0 to %arg1
// CHECK-NOT: scf.for
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[I]]]
func.func private @flat(%n: index, %a: memref<?xf32>) attributes {disc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %one, %a[%i] : memref<?xf32>
  }
  return
}

// -----

// Must NOT parallelise: loops outside kernel functions, loops nested in
// another loop, non-zero lower bounds, non-unit steps.
// CHECK-LABEL: func.func @entry(
// CHECK: scf.parallel
// CHECK-LABEL: func.func private @not_these(
// CHECK-NOT: call
// CHECK: scf.for
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK-NOT: disc.parallel_body
func.func @entry(%n: index, %a: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %one, %a[%i] : memref<?xf32>
  }
  return
}
func.func private @not_these(%n: index, %a: memref<?xf32>) attributes {disc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %one = arith.constant 1.0 : f32
  scf.for %t = %c0 to %n step %c1 {
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      memref.store %one, %a[%i] : memref<?xf32>
    }
  }
  scf.parallel (%i) = (%c1) to (%n) step (%c1) {
    memref.store %one, %a[%i] : memref<?xf32>
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c2) {
    memref.store %one, %a[%i] : memref<?xf32>
  }
  return
}

// -----

// A stitch kernel's row loop: per row, two sibling loops over the row
// (a reduction, then the elementwise stage). Work per unit (row) is their
// sum, not their product.
// CHECK-LABEL: func.func private @rows(
// CHECK: %[[T1:.*]] = arith.subi %arg1, %{{.*}} : index
// CHECK: %[[T2:.*]] = arith.subi %arg1, %{{.*}} : index
// CHECK: %[[WORK:.*]] = arith.addi %[[T1]], %[[T2]] : index
// CHECK: call @rows_par0(%{{.*}}, %arg0, %[[WORK]],
func.func private @rows(%n: index, %m: index, %x: memref<?x?xf32>, %out: memref<?x?xf32>) attributes {disc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %s = scf.for %j = %c0 to %m step %c1 iter_args(%acc = %zero) -> f32 {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      %t = arith.addf %acc, %v : f32
      scf.yield %t : f32
    }
    scf.for %j = %c0 to %m step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xf32>
      %d = arith.divf %v, %s : f32
      memref.store %d, %out[%i, %j] : memref<?x?xf32>
    }
  }
  return
}

// -----

// A stitch kernel with dynamic rows reads its row length in the body, as
// memref.dim of a row subview collapsed to 1-d: the trip counts are
// reified before the call (value-bounds analysis: the subview's size and
// the source's dim), not counted as 1 (a whole softmax then looked like
// 2 elements per row and never ran in parallel).
// CHECK-LABEL: func.func private @rows_in_body(
// CHECK: %[[T1:.*]] = arith.subi %arg1, %{{.*}} : index
// CHECK: %[[LEN:.*]] = memref.dim %arg2, %{{.*}} : memref<?x?xf32>
// CHECK: %[[T2:.*]] = arith.subi %[[LEN]], %{{.*}} : index
// CHECK: %[[WORK:.*]] = arith.addi %[[T1]], %[[T2]] : index
// CHECK: call @rows_in_body_par0(%{{.*}}, %arg0, %[[WORK]],
func.func private @rows_in_body(%n: index, %m: index, %x: memref<?x?xf32>, %out: memref<?x?xf32>) attributes {disc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %row = memref.subview %x[%i, 0] [1, %m] [1, 1] : memref<?x?xf32> to memref<1x?xf32, strided<[?, 1], offset: ?>>
    %len = memref.dim %row, %c1 : memref<1x?xf32, strided<[?, 1], offset: ?>>
    %s = scf.for %j = %c0 to %len step %c1 iter_args(%acc = %zero) -> f32 {
      %v = memref.load %row[%c0, %j] : memref<1x?xf32, strided<[?, 1], offset: ?>>
      %t = arith.addf %acc, %v : f32
      scf.yield %t : f32
    }
    %dx = memref.dim %x, %c1 : memref<?x?xf32>
    %orow = memref.subview %out[%i, 0] [1, %dx] [1, 1] : memref<?x?xf32> to memref<1x?xf32, strided<[?, 1], offset: ?>>
    %flat = memref.collapse_shape %orow [[0, 1]] : memref<1x?xf32, strided<[?, 1], offset: ?>> into memref<?xf32, strided<[?], offset: ?>>
    %olen = memref.dim %flat, %c0 : memref<?xf32, strided<[?], offset: ?>>
    scf.for %j = %c0 to %olen step %c1 {
      memref.store %s, %flat[%j] : memref<?xf32, strided<[?], offset: ?>>
    }
  }
  return
}

// -----

// Must NOT hoist a trip count that depends on the parallel loop's own
// induction variable (a triangular loop): it has no value before the
// call, and counts as 1 iteration.
// CHECK-LABEL: func.func private @triangular(
// CHECK-NOT: arith.subi
// CHECK: arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT: call @triangular_par0(%[[ZERO]], %arg0, %[[ONE]],
func.func private @triangular(%n: index, %x: memref<?x?xf32>) attributes {disc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %i step %c1 {
      memref.store %zero, %x[%i, %j] : memref<?x?xf32>
    }
  }
  return
}

// -----

// Must NOT parallelize a loop whose body calls the runtime: a per-row
// buffer from the allocator, or a run-time check.
// CHECK-LABEL: func.func private @calls_runtime(
// CHECK: scf.parallel
// CHECK: memref.alloc
// CHECK: scf.parallel
// CHECK: cf.assert
// CHECK-NOT: call @calls_runtime_par
func.func private @calls_runtime(%n: index, %m: index, %a: memref<?x?xf32>, %ok: i1) attributes {disc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %t = memref.alloc(%m) : memref<?xf32>
    %v = memref.load %a[%i, %c0] : memref<?x?xf32>
    memref.store %v, %t[%c0] : memref<?xf32>
    memref.dealloc %t : memref<?xf32>
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    cf.assert %ok, "bad"
  }
  return
}
