// RUN: disc-opt %s -split-input-file -disc-select-entry -disc-add-ral-context -verify-diagnostics | FileCheck %s

// With several public functions, @main is the entry; the others become
// private. The entry gets the RAL context as its first argument.
// CHECK-LABEL: func.func private @helper
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%{{.*}}: !llvm.ptr {disc.ral_context}, %{{.*}}: tensor<?xf32>)
// CHECK-SAME: attributes {disc.entry}
func.func @helper(%a: tensor<?xf32>) -> tensor<?xf32> {
  return %a : tensor<?xf32>
}
func.func @main(%a: tensor<?xf32>) -> tensor<?xf32> {
  %0 = func.call @helper(%a) : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// expected-error @+1 {{several public functions and none is named 'main'}}
module {
  // expected-note @+1 {{candidate: @f}}
  func.func @f() { return }
  // expected-note @+1 {{candidate: @g}}
  func.func @g() { return }
}
