// RUN: disc-opt %s -split-input-file -disc-select-entry -disc-read-only-inputs | FileCheck %s

// Tensor arguments of the entry become read-only; other arguments and other
// functions are left alone.
// CHECK-LABEL: func.func private @helper
// CHECK-SAME: (%{{.*}}: tensor<?xf32>)
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%{{.*}}: tensor<?xf32> {bufferization.writable = false}, %{{.*}}: index, %{{.*}}: tensor<2xi64> {bufferization.writable = false})
func.func @helper(%a: tensor<?xf32>) -> tensor<?xf32> {
  return %a : tensor<?xf32>
}
func.func @main(%a: tensor<?xf32>, %n: index, %s: tensor<2xi64>) -> tensor<?xf32> {
  %0 = func.call @helper(%a) : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// An explicit attribute is kept.
// CHECK-LABEL: func.func @main
// CHECK-SAME: {bufferization.writable = true}
func.func @main(%a: tensor<?xf32> {bufferization.writable = true}) -> tensor<?xf32> {
  return %a : tensor<?xf32>
}
