// RUN: disc-opt %s -pass-pipeline='builtin.module(disc-map-loops-to-gpu{reduction-slots=0})' | FileCheck %s --check-prefix=NONE
// RUN: disc-opt %s -pass-pipeline='builtin.module(disc-map-loops-to-gpu{reduction-slots=8})' | FileCheck %s --check-prefix=EIGHT
// RUN: not disc-opt %s -pass-pipeline='builtin.module(disc-map-loops-to-gpu{reduction-slots=70000})' 2>&1 | FileCheck %s --check-prefix=BAD

// reduction-slots bounds the parts a whole-range reduction is cut into: 0
// puts every thread's atomic on the result (no slot buffer), 8 at most
// eight parts (each at least 4096 elements: the chunk is the larger of
// ceil(n / 8) and 4096, rounded up to a multiple of 4), each reduced into a slot of its own, no atomic;
// out of range is an error naming the option.
// NONE-LABEL: func.func @whole_sum
// NONE-NOT:     memref.alloc(
// NONE:         memref.atomic_rmw addf %{{.*}}, %arg1[]
// NONE-NOT:     memref.dealloc
// EIGHT-LABEL: func.func @whole_sum
// EIGHT:         %[[SPREAD:.*]] = arith.ceildivui %{{.*}}, %c8
// EIGHT:         %[[LEAST:.*]] = arith.maxui %[[SPREAD]], %c4096
// EIGHT:         %[[QUADS:.*]] = arith.ceildivui %[[LEAST]], %c4
// EIGHT:         %[[CHUNK:.*]] = arith.muli %[[QUADS]], %c4
// EIGHT:         %[[PARTS:.*]] = arith.divui %{{.*}}, %[[CHUNK]]
// EIGHT:         %[[BUFFER:.*]] = memref.alloc(%[[PARTS]]) : memref<?xf32>
// EIGHT-NOT:     memref.atomic_rmw
// EIGHT:         memref.store %{{.*}}, %[[BUFFER]][%{{.*}}]
// EIGHT-NOT:     memref.atomic_rmw
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
