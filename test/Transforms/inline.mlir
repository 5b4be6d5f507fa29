// RUN: disc-opt %s -disc-select-entry -inline -symbol-dce | FileCheck %s

// disc ops inline: helpers called by the entry disappear.
// CHECK-NOT: func.func private @helper
// CHECK-LABEL: func.func @main
// CHECK-NOT: call
// CHECK: disc.negate
// CHECK: disc.exponential
func.func @helper(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = disc.negate %x : tensor<?xf32>
  return %0 : tensor<?xf32>
}
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = func.call @helper(%x) : (tensor<?xf32>) -> tensor<?xf32>
  %1 = disc.exponential %0 : tensor<?xf32>
  return %1 : tensor<?xf32>
}
