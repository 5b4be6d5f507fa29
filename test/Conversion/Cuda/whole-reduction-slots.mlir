// RUN: disc-opt %s -pass-pipeline='builtin.module(disc-map-loops-to-gpu{reduction-slots=0})' | FileCheck %s --check-prefix=NONE
// RUN: disc-opt %s -pass-pipeline='builtin.module(disc-map-loops-to-gpu{reduction-slots=8})' | FileCheck %s --check-prefix=EIGHT
// RUN: not disc-opt %s -pass-pipeline='builtin.module(disc-map-loops-to-gpu{reduction-slots=70000})' 2>&1 | FileCheck %s --check-prefix=BAD

// reduction-slots bounds the slots a whole-range reduction's atomics spread
// over: 0 puts every thread's atomic on the result (no slot buffer), 8 at
// most eight slots (beyond the 4096 threads that each take a slot of their
// own); out of range is an error naming the option.
// NONE-LABEL: func.func @whole_sum
// NONE-NOT:     memref.alloc(
// NONE:         memref.atomic_rmw addf %{{.*}}, %arg1[]
// NONE-NOT:     memref.dealloc
// EIGHT-LABEL: func.func @whole_sum
// EIGHT:         %[[SHARED:.*]] = arith.minui %{{.*}}, %c8
// EIGHT:         %[[SLOTS:.*]] = arith.select %{{.*}}, %{{.*}}, %[[SHARED]]
// EIGHT:         %[[BUFFER:.*]] = memref.alloc(%[[SLOTS]]) : memref<?xf32>
// EIGHT:         memref.atomic_rmw addf %{{.*}}, %[[BUFFER]][%{{.*}}]
// EIGHT:         memref.dealloc %[[BUFFER]]
// BAD: reduction-slots must be in [0, 65536], got 70000
func.func @whole_sum(%a: memref<?xf32>, %acc: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %init = memref.load %acc[] : memref<f32>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%x = %init) -> (f32) {
    %v = memref.load %a[%i] : memref<?xf32>
    %y = arith.addf %x, %v fastmath<reassoc> : f32
    scf.yield %y : f32
  }
  memref.store %s, %acc[] : memref<f32>
  return
}
