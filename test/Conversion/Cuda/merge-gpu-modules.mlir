// The printer is told to elide constants of more than 2 elements: the pass
// must still compare every element (the last case).
// RUN: disc-opt %s -split-input-file -disc-merge-gpu-modules -verify-diagnostics -mlir-elide-elementsattrs-if-larger=2 | FileCheck %s

// Outlining's shape: one module per kernel, every kernel named alike, a
// helper function and a constant cloned into each module. One module
// remains; each kernel takes its module's name, the clones are kept once
// and the launches name the merged module.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK:         gpu.launch_func @main_kernel::@main_kernel blocks
// CHECK:         gpu.launch_func @main_kernel::@main_kernel_0 blocks
// CHECK:       gpu.module @main_kernel {
// CHECK-DAG:     memref.global "private" constant @table
// CHECK-DAG:     func.func private @helper
// CHECK-DAG:     gpu.func @main_kernel(
// CHECK-DAG:     gpu.func @main_kernel_0(
// CHECK:       }
// CHECK-NOT:   gpu.module
// CHECK-NOT:   @helper
// CHECK-NOT:   @table
module attributes {gpu.container_module} {
  func.func @main(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @main_kernel::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @main_kernel_0::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  gpu.module @main_kernel {
    memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
    func.func private @helper(%x: f32) -> f32 {
      %y = arith.mulf %x, %x : f32
      return %y : f32
    }
    gpu.func @main_kernel(%a: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %t = memref.get_global @table : memref<4xf32>
      %v = memref.load %t[%c0] : memref<4xf32>
      %w = func.call @helper(%v) : (f32) -> f32
      memref.store %w, %a[%c0] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @main_kernel_0 {
    memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
    func.func private @helper(%x: f32) -> f32 {
      %y = arith.mulf %x, %x : f32
      return %y : f32
    }
    gpu.func @main_kernel(%a: memref<4xf32>) kernel {
      %c1 = arith.constant 1 : index
      %t = memref.get_global @table : memref<4xf32>
      %v = memref.load %t[%c1] : memref<4xf32>
      %w = func.call @helper(%v) : (f32) -> f32
      memref.store %w, %a[%c1] : memref<4xf32>
      gpu.return
    }
  }
}

// -----

// Modules with different attributes (a target attached to one) are not
// merged: each keeps its kernel and its launch.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK:         gpu.launch_func @k::@k blocks
// CHECK:         gpu.launch_func @k_0::@k blocks
// CHECK:       gpu.module @k {
// CHECK:       gpu.module @k_0 [#nvvm.target
module attributes {gpu.container_module} {
  func.func @main(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @k_0::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  gpu.module @k {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @k_0 [#nvvm.target<chip = "sm_90">] {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// Two different symbols of one name cannot be merged.
module attributes {gpu.container_module} {
  gpu.module @a {
    func.func private @helper(%x: f32) -> f32 {
      return %x : f32
    }
    gpu.func @a(%p: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @b {
    // expected-error @+1 {{disc-merge-gpu-modules: @helper differs from the symbol of that name in @a}}
    func.func private @helper(%x: f32) -> f32 {
      %y = arith.addf %x, %x : f32
      return %y : f32
    }
    gpu.func @b(%p: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// Two helpers of one name whose constants differ in one element (alike
// when the printer elides them) are two symbols, not clones.
module attributes {gpu.container_module} {
  gpu.module @a {
    func.func private @table() -> vector<4xf32> {
      %t = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : vector<4xf32>
      return %t : vector<4xf32>
    }
    gpu.func @a(%p: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @b {
    // expected-error @+1 {{disc-merge-gpu-modules: @table differs from the symbol of that name in @a}}
    func.func private @table() -> vector<4xf32> {
      %t = arith.constant dense<[1.0, 2.0, 3.0, 5.0]> : vector<4xf32>
      return %t : vector<4xf32>
    }
    gpu.func @b(%p: memref<4xf32>) kernel {
      gpu.return
    }
  }
}
