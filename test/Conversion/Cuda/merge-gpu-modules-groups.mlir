// RUN: disc-opt %s -disc-merge-gpu-modules=kernels-per-module=2 | FileCheck %s
// RUN: not disc-opt %s -disc-merge-gpu-modules=kernels-per-module=0 2>&1 | FileCheck %s --check-prefix=BAD

// Five one-kernel modules, at most two kernels a module: three modules
// (2 + 2 + 1), each keeping its own copy of the shared helper, every launch
// pointed at its kernel's merged module. Not one module: each module and
// chip is serialised on a thread of its own.
// CHECK-LABEL: func.func @main
// CHECK:         gpu.launch_func @k0::@k0
// CHECK:         gpu.launch_func @k0::@k1
// CHECK:         gpu.launch_func @k2::@k2
// CHECK:         gpu.launch_func @k2::@k3
// CHECK:         gpu.launch_func @k4::@k4
// CHECK:       gpu.module @k0 {
// CHECK-DAG:     func.func private @helper
// CHECK-DAG:     gpu.func @k0(
// CHECK-DAG:     gpu.func @k1(
// CHECK:       }
// CHECK:       gpu.module @k2 {
// CHECK-DAG:     func.func private @helper
// CHECK-DAG:     gpu.func @k2(
// CHECK-DAG:     gpu.func @k3(
// CHECK:       }
// CHECK:       gpu.module @k4 {
// CHECK:         gpu.func @k4(
// CHECK-NOT:   gpu.module
// BAD: kernels-per-module must be at least 1, got 0
module attributes {gpu.container_module} {
  func.func @main(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k0::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @k1::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @k2::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @k3::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @k4::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  gpu.module @k0 {
    func.func private @helper(%x: f32) -> f32 {
      %y = arith.mulf %x, %x : f32
      return %y : f32
    }
    gpu.func @main_kernel(%a: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0] : memref<4xf32>
      %w = func.call @helper(%v) : (f32) -> f32
      memref.store %w, %a[%c0] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @k1 {
    func.func private @helper(%x: f32) -> f32 {
      %y = arith.mulf %x, %x : f32
      return %y : f32
    }
    gpu.func @main_kernel(%a: memref<4xf32>) kernel {
      %c1 = arith.constant 1 : index
      %v = memref.load %a[%c1] : memref<4xf32>
      %w = func.call @helper(%v) : (f32) -> f32
      memref.store %w, %a[%c1] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @k2 {
    func.func private @helper(%x: f32) -> f32 {
      %y = arith.mulf %x, %x : f32
      return %y : f32
    }
    gpu.func @main_kernel(%a: memref<4xf32>) kernel {
      %c2 = arith.constant 2 : index
      %v = memref.load %a[%c2] : memref<4xf32>
      %w = func.call @helper(%v) : (f32) -> f32
      memref.store %w, %a[%c2] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @k3 {
    func.func private @helper(%x: f32) -> f32 {
      %y = arith.mulf %x, %x : f32
      return %y : f32
    }
    gpu.func @main_kernel(%a: memref<4xf32>) kernel {
      %c3 = arith.constant 3 : index
      %v = memref.load %a[%c3] : memref<4xf32>
      %w = func.call @helper(%v) : (f32) -> f32
      memref.store %w, %a[%c3] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @k4 {
    gpu.func @main_kernel(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
}
