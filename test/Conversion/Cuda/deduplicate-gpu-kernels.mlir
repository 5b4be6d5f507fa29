// The printer is told to elide constants of more than 2 elements: the pass
// must still see every element (the second case).
// RUN: disc-opt %s -split-input-file -disc-deduplicate-gpu-kernels -mlir-elide-elementsattrs-if-larger=2 | FileCheck %s
// RUN: disc-opt %s -split-input-file -disc-deduplicate-gpu-kernels=log=1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG

// Outlining's shape: one module per launch, every kernel named alike. Two
// modules are the same code (at different locations, with a helper and a
// constant cloned into each): one is erased and both of its launches name
// the other. A module whose kernel reads another element is kept.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK:         gpu.launch_func @main_kernel::@main_kernel blocks
// CHECK:         gpu.launch_func @main_kernel_0::@main_kernel blocks
// CHECK:         gpu.launch_func @main_kernel::@main_kernel blocks
// CHECK:         gpu.launch_func @main_kernel::@main_kernel blocks
// CHECK:       gpu.module @main_kernel {
// CHECK:       gpu.module @main_kernel_0 {
// CHECK-NOT:   gpu.module @main_kernel_1
// LOG: [disc] cuda: 3 kernel modules, 1 duplicates of another; 2 compiled
module attributes {gpu.container_module} {
  func.func @main(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @main_kernel::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @main_kernel_0::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @main_kernel_1::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @main_kernel_1::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
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
      memref.store %w, %a[%c0] : memref<4xf32> loc("a.py":1:1)
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
  gpu.module @main_kernel_1 {
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
      memref.store %w, %a[%c0] : memref<4xf32> loc("b.py":7:3)
      gpu.return
    }
  }
}

// -----

// Constants that differ in one element (printed alike when elided) and
// modules with different attributes (a target attached to one) are kept
// apart.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK:         gpu.launch_func @k::@k blocks
// CHECK:         gpu.launch_func @k_0::@k blocks
// CHECK:         gpu.launch_func @k_1::@k blocks
// CHECK:       gpu.module @k {
// CHECK:       gpu.module @k_0 {
// CHECK:       gpu.module @k_1 [#nvvm.target
// LOG: [disc] cuda: 3 kernel modules, none a duplicate
module attributes {gpu.container_module} {
  func.func @main(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @k_0::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @k_1::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  gpu.module @k {
    memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
    gpu.func @k(%a: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %t = memref.get_global @table : memref<4xf32>
      %v = memref.load %t[%c0] : memref<4xf32>
      memref.store %v, %a[%c0] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @k_0 {
    memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 5.0]>
    gpu.func @k(%a: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %t = memref.get_global @table : memref<4xf32>
      %v = memref.load %t[%c0] : memref<4xf32>
      memref.store %v, %a[%c0] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @k_1 [#nvvm.target<chip = "sm_90">] {
    memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
    gpu.func @k(%a: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %t = memref.get_global @table : memref<4xf32>
      %v = memref.load %t[%c0] : memref<4xf32>
      memref.store %v, %a[%c0] : memref<4xf32>
      gpu.return
    }
  }
}

// -----

// A failing assertion reports its location: modules whose assertions are
// at different locations stay apart, at one location they are one.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK:         gpu.launch_func @c::@c blocks
// CHECK:         gpu.launch_func @c_0::@c blocks
// CHECK:         gpu.launch_func @c::@c blocks
// CHECK:       gpu.module @c {
// CHECK:       gpu.module @c_0 {
// CHECK-NOT:   gpu.module @c_1
// LOG: [disc] cuda: 3 kernel modules, 1 duplicates of another; 2 compiled
module attributes {gpu.container_module} {
  func.func @main(%a: memref<4xi1>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @c::@c blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xi1>)
    gpu.launch_func @c_0::@c blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xi1>)
    gpu.launch_func @c_1::@c blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xi1>)
    return
  }
  gpu.module @c {
    gpu.func @c(%a: memref<4xi1>) kernel {
      %c0 = arith.constant 0 : index
      %ok = memref.load %a[%c0] : memref<4xi1>
      cf.assert %ok, "index out of range" loc("m.py":3:5)
      gpu.return
    }
  }
  gpu.module @c_0 {
    gpu.func @c(%a: memref<4xi1>) kernel {
      %c0 = arith.constant 0 : index
      %ok = memref.load %a[%c0] : memref<4xi1>
      cf.assert %ok, "index out of range" loc("m.py":9:5)
      gpu.return
    }
  }
  gpu.module @c_1 {
    gpu.func @c(%a: memref<4xi1>) kernel {
      %c0 = arith.constant 0 : index
      %ok = memref.load %a[%c0] : memref<4xi1>
      cf.assert %ok, "index out of range" loc("m.py":3:5)
      gpu.return
    }
  }
}

// -----

// A duplicate that something other than a launch names is kept, and its
// launch still goes to the first module.
// CHECK-LABEL: module attributes {gpu.container_module}
// CHECK:         func.func @main
// CHECK-SAME:      disc.names = @d_0::@d
// CHECK:         gpu.launch_func @d::@d blocks
// CHECK:         gpu.launch_func @d::@d blocks
// CHECK:       gpu.module @d {
// CHECK:       gpu.module @d_0 {
// LOG: [disc] cuda: 2 kernel modules, 1 duplicates of another; 2 compiled
module attributes {gpu.container_module} {
  func.func @main(%a: memref<4xf32>) attributes {disc.names = @d_0::@d} {
    %c1 = arith.constant 1 : index
    gpu.launch_func @d::@d blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @d_0::@d blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  gpu.module @d {
    gpu.func @d(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @d_0 {
    gpu.func @d(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// Nothing to do without kernel modules.
// CHECK-LABEL: func.func @host_only
// CHECK-NOT:   gpu.module
module {
  func.func @host_only() {
    return
  }
}
