// RUN: disc-opt %s -split-input-file -disc-outline-loop-kernels | FileCheck %s

// A self-contained loop nest becomes a private noinline kernel; memrefs and
// dynamic sizes are passed, constants are cloned in.
// CHECK-LABEL: func.func private @main_kernel_0(
// CHECK-SAME: %[[KN:.*]]: index, %[[KA:.*]]: memref<?xf32>, %[[KB:.*]]: memref<?xf32>)
// CHECK-SAME: attributes {disc.kernel, llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK-DAG: arith.constant 0 : index
// CHECK-DAG: arith.constant 1 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[KN]]
// CHECK: memref.load %[[KA]]
// CHECK: memref.store %{{.*}}, %[[KB]]
// CHECK: return

// A loop carrying a value returns it from its kernel.
// CHECK-LABEL: func.func private @main_kernel_1(
// CHECK: %[[R:.*]] = scf.for
// CHECK: return %[[R]] : f32

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[A:.*]]: memref<?xf32>, %[[B:.*]]: memref<?xf32>, %[[N:.*]]: index
// CHECK: call @main_kernel_0(%[[N]], %[[A]], %[[B]]) : (index, memref<?xf32>, memref<?xf32>) -> ()
// A nest that allocates needs the runtime context: it stays.
// CHECK-NEXT: scf.for
// CHECK-NEXT: memref.alloc
// A nest with an assert stays too.
// CHECK: scf.for
// CHECK: cf.assert
// CHECK: %[[SUM:.*]] = call @main_kernel_1(%[[N]], %[[A]]) : (index, memref<?xf32>) -> f32
// CHECK-NEXT: return %[[SUM]]

// Functions other than the entry are not touched.
// CHECK-LABEL: func.func @helper
// CHECK-NOT: call
// CHECK: scf.for
func.func @main(%a: memref<?xf32>, %b: memref<?xf32>, %n: index) -> f32 attributes {disc.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %a[%i] : memref<?xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %b[%i] : memref<?xf32>
  }
  scf.for %i = %c0 to %n step %c1 {
    %t = memref.alloc() : memref<4xf32>
    %v = memref.load %a[%i] : memref<?xf32>
    memref.store %v, %t[%c0] : memref<4xf32>
  }
  scf.for %i = %c0 to %n step %c1 {
    %ok = arith.cmpi slt, %i, %n : index
    cf.assert %ok, "in bounds"
  }
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %v = memref.load %a[%i] : memref<?xf32>
    %s = arith.addf %acc, %v : f32
    scf.yield %s : f32
  }
  return %sum : f32
}

func.func @helper(%a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %a[%i] : memref<?xf32>
    memref.store %v, %a[%i] : memref<?xf32>
  }
  return
}

// -----

// Adjacent nests with only allocations or memory-free ops between them
// share one kernel (called where the last one was); an op that touches
// memory in between splits them.
// CHECK-LABEL: func.func private @grouped_kernel_0(
// CHECK-COUNT-2: scf.for
// CHECK: return
// CHECK-LABEL: func.func private @grouped_kernel_1(
// CHECK-COUNT-1: scf.for
// CHECK-NOT: scf.for
// CHECK: return
// CHECK-LABEL: func.func @grouped(
// CHECK: %[[T:.*]] = memref.alloc
// CHECK-NEXT: call @grouped_kernel_0(
// CHECK-NEXT: memref.load %[[T]]
// CHECK-NEXT: call @grouped_kernel_1(
func.func @grouped(%a: memref<?xf32>, %n: index) -> f32 attributes {disc.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %a[%i] : memref<?xf32>
    memref.store %v, %a[%i] : memref<?xf32>
  }
  %t = memref.alloc(%n) : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %a[%i] : memref<?xf32>
    memref.store %v, %t[%i] : memref<?xf32>
  }
  %x = memref.load %t[%c0] : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    memref.store %x, %a[%i] : memref<?xf32>
  }
  return %x : f32
}

// -----

// A shape check between two nests (as dynamic shapes put there) does not
// split them: they share one kernel, called after the check. A check
// whose condition is loaded from memory still splits (the load touches
// memory).
// CHECK-LABEL: func.func private @checked_kernel_0(
// CHECK-COUNT-2: scf.for
// CHECK: return
// CHECK-LABEL: func.func private @checked_kernel_1(
// CHECK-COUNT-1: scf.for
// CHECK-NOT: scf.for
// CHECK: return
// CHECK-LABEL: func.func @checked(
// CHECK: %[[OK:.*]] = arith.cmpi eq
// CHECK-NEXT: cf.assert %[[OK]], "shapes differ"
// CHECK-NEXT: call @checked_kernel_0(
// CHECK-NEXT: memref.load
// CHECK-NEXT: cf.assert
// CHECK-NEXT: call @checked_kernel_1(
func.func @checked(%a: memref<?xf32>, %b: memref<?xi1>, %n: index, %m: index) attributes {disc.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %a[%i] : memref<?xf32>
    memref.store %v, %a[%i] : memref<?xf32>
  }
  %ok = arith.cmpi eq, %n, %m : index
  cf.assert %ok, "shapes differ"
  scf.for %i = %c0 to %m step %c1 {
    %v = memref.load %a[%i] : memref<?xf32>
    memref.store %v, %a[%i] : memref<?xf32>
  }
  %flag = memref.load %b[%c0] : memref<?xi1>
  cf.assert %flag, "flag unset"
  scf.for %i = %c0 to %m step %c1 {
    %v = memref.load %a[%i] : memref<?xf32>
    memref.store %v, %a[%i] : memref<?xf32>
  }
  return
}
