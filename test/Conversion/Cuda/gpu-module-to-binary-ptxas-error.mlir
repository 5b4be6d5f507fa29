// REQUIRES: ptxas
// RUN: disc-opt %s -verify-diagnostics -disc-gpu-module-to-binary="format=fatbin toolkit=%cuda_toolkit"

// ptxas failing for one chip is an error naming both chips, with ptxas's
// own message.
module attributes {gpu.container_module} {
  // expected-error @below {{ptxas failed}}
  // expected-error @below {{compiling the module's PTX (written for sm_50) for sm_50 failed}}
  gpu.module @old [#nvvm.target<chip = "sm_50">, #nvvm.target<chip = "sm_90">] {
    llvm.func @nothing() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
}
