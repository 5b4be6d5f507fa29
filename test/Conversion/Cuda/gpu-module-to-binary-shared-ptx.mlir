// REQUIRES: ptxas
// RUN: disc-opt %s -split-input-file -verify-diagnostics -disc-gpu-module-to-binary="format=bin toolkit=%cuda_toolkit" | FileCheck %s
// RUN: disc-opt %s -split-input-file -verify-diagnostics -disc-gpu-module-to-binary="format=fatbin toolkit=%cuda_toolkit" | FileCheck %s --check-prefix=FATBIN
// RUN: disc-opt %s -split-input-file -verify-diagnostics -disc-gpu-module-to-binary="format=bin share-ptx=0 toolkit=%cuda_toolkit" | FileCheck %s --check-prefix=APART

// Targets that differ in their chip only: LLVM compiles the module to PTX
// once (for sm_80, the oldest) and ptxas compiles that PTX for each chip.
// The objects of that path carry no ISAToBinaryTimeInMs (upstream's
// serialiser's record of its own ptxas run); with share-ptx=0 each target
// went through upstream's serialiser, LLVM and ptxas, on its own.
// CHECK-LABEL: gpu.binary @kernels
// CHECK-SAME:    #gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">
// CHECK-NOT:     ISAToBinaryTimeInMs
// CHECK-SAME:    bin = "
// CHECK-SAME:    #gpu.object<#nvvm.target<chip = "sm_80", features = "+ptx80">
// CHECK-NOT:     ISAToBinaryTimeInMs
// CHECK-SAME:    bin = "
// FATBIN-LABEL: gpu.binary @kernels
// FATBIN-SAME:    #gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">
// FATBIN-NOT:     bin =
// FATBIN-SAME:    #gpu.object<#nvvm.target<chip = "sm_80", features = "+ptx80">
// APART-LABEL: gpu.binary @kernels
// APART-SAME:    #gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">, properties = {ISAToBinaryTimeInMs
// APART-SAME:    #gpu.object<#nvvm.target<chip = "sm_80", features = "+ptx80">, properties = {ISAToBinaryTimeInMs
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90", features = "+ptx80">, #nvvm.target<chip = "sm_80", features = "+ptx80">] {
    llvm.func @add_one(%p: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %v = llvm.load %p : !llvm.ptr -> f32
      %one = llvm.mlir.constant(1.0 : f32) : f32
      %s = llvm.fadd %v, %one : f32
      llvm.store %s, %p : f32, !llvm.ptr
      llvm.return
    }
  }
}

// -----

// What it must not do: share PTX between targets that differ in more than
// the chip (here the PTX version): each goes through upstream's serialiser.
// CHECK-LABEL: gpu.binary @apart
// CHECK-SAME:    #gpu.object<#nvvm.target<chip = "sm_80", features = "+ptx80">, properties = {ISAToBinaryTimeInMs
// CHECK-SAME:    #gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx81">, properties = {ISAToBinaryTimeInMs
module attributes {gpu.container_module} {
  gpu.module @apart [#nvvm.target<chip = "sm_80", features = "+ptx80">, #nvvm.target<chip = "sm_90", features = "+ptx81">] {
    llvm.func @nothing() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
}


// -----

// One NVVM target (a compile for the GPU it runs on, cuda_chips=["sm_90"]):
// the same path, LLVM once and DISC's ptxas step, no upstream serialiser.
// CHECK-LABEL: gpu.binary @one_chip
// CHECK-SAME:    [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">
// CHECK-NOT:     ISAToBinaryTimeInMs
// CHECK-SAME:    bin = "
// CHECK-SAME:    ">]
// APART-LABEL: gpu.binary @one_chip
// APART-SAME:    [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">, properties = {ISAToBinaryTimeInMs
module attributes {gpu.container_module} {
  gpu.module @one_chip [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
    llvm.func @nothing() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
}
