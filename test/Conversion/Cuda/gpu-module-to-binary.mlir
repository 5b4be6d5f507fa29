// RUN: disc-opt %s -split-input-file -disc-gpu-module-to-binary=format=isa -verify-diagnostics | FileCheck %s
// RUN: not disc-opt %s -split-input-file -disc-gpu-module-to-binary=format=bogus 2>&1 | FileCheck %s --check-prefix=FORMAT

// One object per target, in the targets' order (each module and target
// serialised on a thread of its own); each module is replaced by its
// binary, the launch untouched.
// CHECK-LABEL: module
// CHECK-NOT:     gpu.module
// CHECK:         gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_80">, {{.*}}assembly = "{{.*}}.target sm_80{{.*}}.entry add_one{{.*}}">, #gpu.object<#nvvm.target<chip = "sm_90">, {{.*}}assembly = "{{.*}}.target sm_90{{.*}}.entry add_one{{.*}}">]
// CHECK:         gpu.binary @more [#gpu.object<#nvvm.target<chip = "sm_80">, {{.*}}.entry nothing{{.*}}">, #gpu.object<#nvvm.target<chip = "sm_90">, {{.*}}.entry nothing{{.*}}">]
// CHECK:         gpu.launch_func @kernels::@add_one
// FORMAT: format must be isa, bin or fatbin, got 'bogus'
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_80">, #nvvm.target<chip = "sm_90">] {
    llvm.func @add_one(%p: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %v = llvm.load %p : !llvm.ptr -> f32
      %one = llvm.mlir.constant(1.0 : f32) : f32
      %s = llvm.fadd %v, %one : f32
      llvm.store %s, %p : f32, !llvm.ptr
      llvm.return
    }
  }
  gpu.module @more [#nvvm.target<chip = "sm_80">, #nvvm.target<chip = "sm_90">] {
    llvm.func @nothing() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
  func.func @host(%p: !llvm.ptr) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@add_one blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%p : !llvm.ptr)
    return
  }
}

// -----

// What it must not do: serialise a module without targets (an error).
module attributes {gpu.container_module} {
  // expected-error @below {{the module has no target attributes}}
  gpu.module @untargeted {
  }
}
