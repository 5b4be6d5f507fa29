// RUN: disc-opt %s -split-input-file -verify-diagnostics -disc-profile-calls | FileCheck %s

// Kernel calls, library calls and copies of the entry are bracketed by the
// profiling hooks with a constant name "<kind> <callee> at <location>";
// two calls at one location share one name. Calls of other functions, the
// hooks themselves and calls outside the entry are left alone.
// CHECK-DAG: llvm.mlir.global internal constant @disc_profile_name_0("loop main_kernel_0 at model.mlir:3:4\00")
// CHECK-DAG: llvm.mlir.global internal constant @disc_profile_name_1("library matmul_f32 at model.mlir:7:2\00")
// CHECK-DAG: llvm.mlir.global internal constant @disc_profile_name_2("copy at model.mlir:9:1\00")
// CHECK-DAG: func.func private @disc_ral_profile_begin(!llvm.ptr, !llvm.ptr)
// CHECK-DAG: func.func private @disc_ral_profile_end(!llvm.ptr, !llvm.ptr)
// CHECK-NOT: disc_profile_name_3

// CHECK-LABEL: func.func private @main_kernel_0
// CHECK-NOT: disc_ral_profile
// CHECK: return
func.func private @main_kernel_0(%a: memref<?xf32>) attributes {disc.kernel} {
  return
}

func.func private @helper(%a: memref<?xf32>)
func.func private @disc_ral_matmul_f32(!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64)

// CHECK-LABEL: func.func @main
// CHECK:      %[[N0:.*]] = llvm.mlir.addressof @disc_profile_name_0
// CHECK-NEXT: call @disc_ral_profile_begin(%arg0, %[[N0]])
// CHECK-NEXT: call @main_kernel_0(%arg1)
// CHECK-NEXT: call @disc_ral_profile_end(%arg0, %[[N0]])
// CHECK-NEXT: %[[N0B:.*]] = llvm.mlir.addressof @disc_profile_name_0
// CHECK-NEXT: call @disc_ral_profile_begin(%arg0, %[[N0B]])
// CHECK-NEXT: call @main_kernel_0(%arg1)
// CHECK-NEXT: call @disc_ral_profile_end(%arg0, %[[N0B]])
// CHECK-NEXT: call @helper(%arg1)
// CHECK-NEXT: %[[N1:.*]] = llvm.mlir.addressof @disc_profile_name_1
// CHECK-NEXT: call @disc_ral_profile_begin(%arg0, %[[N1]])
// CHECK-NEXT: call @disc_ral_matmul_f32
// CHECK-NEXT: call @disc_ral_profile_end(%arg0, %[[N1]])
// CHECK-NEXT: %[[N2:.*]] = llvm.mlir.addressof @disc_profile_name_2
// CHECK-NEXT: call @disc_ral_profile_begin(%arg0, %[[N2]])
// CHECK-NEXT: memref.copy
// CHECK-NEXT: call @disc_ral_profile_end(%arg0, %[[N2]])
// CHECK-NEXT: return
func.func @main(%ctx: !llvm.ptr {disc.ral_context}, %a: memref<?xf32>, %b: memref<?xf32>, %u: memref<*xf32>) attributes {disc.entry} {
  %c0 = arith.constant 0 : i64
  call @main_kernel_0(%a) : (memref<?xf32>) -> () loc("model.mlir":3:4)
  call @main_kernel_0(%a) : (memref<?xf32>) -> () loc("model.mlir":3:4)
  call @helper(%a) : (memref<?xf32>) -> ()
  call @disc_ral_matmul_f32(%ctx, %u, %u, %u, %c0, %c0) : (!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64) -> () loc(fused["model.mlir":7:2, "other.mlir":1:1])
  memref.copy %a, %b : memref<?xf32> to memref<?xf32> loc("model.mlir":9:1)
  return
}

// CHECK-LABEL: func.func @not_the_entry
// CHECK-NOT: disc_ral_profile
// CHECK: return
func.func @not_the_entry(%a: memref<?xf32>) {
  call @main_kernel_0(%a) : (memref<?xf32>) -> ()
  return
}

// -----

func.func private @k(%a: memref<?xf32>) attributes {disc.kernel}

// expected-error @+1 {{has no RAL context argument to profile with}}
func.func @main(%a: memref<?xf32>) attributes {disc.entry} {
  call @k(%a) : (memref<?xf32>) -> ()
  return
}

// -----

// The cuda target: a kernel launch is bracketed too, named by its kernel.
// CHECK-DAG: llvm.mlir.global internal constant @disc_profile_name_0("kernel main_kernel at model.mlir:5:6\00")
// CHECK-LABEL: func.func @main
// CHECK:      call @disc_ral_profile_begin
// CHECK-NEXT: gpu.launch_func @kernels::@main_kernel
// CHECK-NEXT: call @disc_ral_profile_end
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @main_kernel(%a: memref<?xf32>) kernel {
      gpu.return
    }
  }
  func.func @main(%ctx: !llvm.ptr {disc.ral_context}, %a: memref<?xf32>) attributes {disc.entry} {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xf32>) loc("model.mlir":5:6)
    return
  }
}
