// RUN: disc-opt %s -split-input-file -disc-ral-lower-gpu-launch -verify-diagnostics | FileCheck %s

// The binary becomes one image global ("DISCGPU1", 2 objects: sm 80 with
// 4 bytes, sm 90 with 5 bytes); the launch becomes a runtime call with the
// context, the image, the kernel name, grid, block, shared bytes and an
// array of pointers to the argument slots.
// CHECK-NOT:   gpu.binary
// CHECK-DAG:   llvm.mlir.global internal constant @__disc_gpu_image_kernels("DISCGPU1\02\00\00\00\00\00\00\00P\00\00\00\00\00\00\00\04\00\00\00\00\00\00\00ABCDZ\00\00\00\00\00\00\00\05\00\00\00\00\00\00\00EFGHI")
// CHECK-DAG:   llvm.mlir.global internal constant @__disc_gpu_kernel_name_1("add\00")
// CHECK-DAG:   llvm.func @disc_ral_cuda_launch(!llvm.ptr, !llvm.ptr, i64, !llvm.ptr, i64, i64, i64, i64, i64, i64, i32, !llvm.ptr, i64)
// CHECK-LABEL: llvm.func @main
// CHECK-SAME:    (%[[CTX:.*]]: !llvm.ptr {disc.ral_context}, %[[P:.*]]: !llvm.ptr, %[[N:.*]]: i64)
// The argument area at the entry: an 8-byte slot per argument and the
// array of their addresses, filled once.
// CHECK:         %[[SLOTS:.*]] = llvm.alloca %{{.*}} x !llvm.array<2 x i64> {alignment = 8 : i64}
// CHECK:         %[[ARGS:.*]] = llvm.alloca %{{.*}} x !llvm.array<2 x ptr>
// CHECK:         %[[S0:.*]] = llvm.getelementptr %[[SLOTS]][0, 0]
// CHECK:         %[[A0:.*]] = llvm.getelementptr %[[ARGS]][0, 0]
// CHECK:         llvm.store %[[S0]], %[[A0]]
// CHECK:         %[[S1:.*]] = llvm.getelementptr %[[SLOTS]][0, 1]
// CHECK:         %[[A1:.*]] = llvm.getelementptr %[[ARGS]][0, 1]
// CHECK:         llvm.store %[[S1]], %[[A1]]
// The launch stores its operands into the slots, nothing else.
// CHECK:         %[[L0:.*]] = llvm.getelementptr %[[SLOTS]][0, 0]
// CHECK:         llvm.store %[[P]], %[[L0]]
// CHECK:         %[[L1:.*]] = llvm.getelementptr %[[SLOTS]][0, 1]
// CHECK:         llvm.store %[[N]], %[[L1]]
// CHECK-NOT:     llvm.alloca
// CHECK:         %[[IMAGE:.*]] = llvm.mlir.addressof @__disc_gpu_image_kernels
// CHECK:         %[[BYTES:.*]] = llvm.mlir.constant(57 : i64)
// CHECK:         %[[NAME:.*]] = llvm.mlir.addressof @__disc_gpu_kernel_name_1
// CHECK:         %[[NARGS:.*]] = llvm.mlir.constant(2 : i64)
// CHECK:         llvm.call @disc_ral_cuda_launch(%[[CTX]], %[[IMAGE]], %[[BYTES]], %[[NAME]], %[[N]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ARGS]], %[[NARGS]])
// CHECK-NOT:     gpu.launch_func
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_80">, "ABCD">,
                       #gpu.object<#nvvm.target<chip = "sm_90">, "EFGHI">]
  llvm.func @main(%ctx: !llvm.ptr {disc.ral_context}, %p: !llvm.ptr, %n: i64) {
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c256 = llvm.mlir.constant(256 : i64) : i64
    gpu.launch_func @kernels::@add blocks in (%n, %c1, %c1) threads in (%c256, %c1, %c1) : i64 args(%p : !llvm.ptr, %n : i64)
    llvm.return
  }
}

// -----

// Two launches of one function share its area, sized for the larger (3
// slots); an operand wider than a slot (an i128) gets a slot of its type
// and an address array of its own, at the entry too.
// CHECK-LABEL: llvm.func @shared
// CHECK-SAME:    (%[[CTX:.*]]: !llvm.ptr {disc.ral_context}, %[[P:.*]]: !llvm.ptr, %[[N:.*]]: i64, %[[W:.*]]: i128)
// CHECK:         %[[WIDE:.*]] = llvm.alloca %{{.*}} x i128
// CHECK:         %[[WIDEARGS:.*]] = llvm.alloca %{{.*}} x !llvm.array<1 x ptr>
// CHECK:         %[[SLOTS:.*]] = llvm.alloca %{{.*}} x !llvm.array<3 x i64> {alignment = 8 : i64}
// CHECK:         %[[ARGS:.*]] = llvm.alloca %{{.*}} x !llvm.array<3 x ptr>
// CHECK-COUNT-3: llvm.store
// CHECK-NOT:     llvm.alloca
// CHECK:         llvm.store %[[P]], %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK:         llvm.store %[[N]], %{{.*}} : i64, !llvm.ptr
// CHECK:         llvm.call @disc_ral_cuda_launch({{.*}}, %[[ARGS]], %{{.*}})
// CHECK:         llvm.store %[[N]], %{{.*}} : i64, !llvm.ptr
// CHECK:         llvm.store %[[P]], %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK:         llvm.store %[[N]], %{{.*}} : i64, !llvm.ptr
// CHECK:         llvm.call @disc_ral_cuda_launch({{.*}}, %[[ARGS]], %{{.*}})
// CHECK:         llvm.store %[[W]], %[[WIDE]]
// CHECK:         llvm.call @disc_ral_cuda_launch({{.*}}, %[[WIDEARGS]], %{{.*}})
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_80">, "ABCD">]
  llvm.func @shared(%ctx: !llvm.ptr {disc.ral_context}, %p: !llvm.ptr, %n: i64, %w: i128) {
    %c1 = llvm.mlir.constant(1 : i64) : i64
    gpu.launch_func @kernels::@add blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) : i64 args(%p : !llvm.ptr, %n : i64)
    gpu.launch_func @kernels::@mul blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) : i64 args(%n : i64, %p : !llvm.ptr, %n : i64)
    gpu.launch_func @kernels::@wide blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) : i64 args(%w : i128)
    llvm.return
  }
}

// -----

// Must not: a launch from a function without the RAL context.
module attributes {gpu.container_module} {
  gpu.binary @kernels [#gpu.object<#nvvm.target<chip = "sm_80">, "ABCD">]
  llvm.func @no_context(%n: i64) {
    %c1 = llvm.mlir.constant(1 : i64) : i64
    // expected-error @+1 {{is not in a function with a RAL context argument}}
    gpu.launch_func @kernels::@add blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) : i64
    llvm.return
  }
}

// -----

// Must not: a launch of a module that is not a binary yet.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @add() attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
  llvm.func @not_serialized(%ctx: !llvm.ptr {disc.ral_context}, %n: i64) {
    %c1 = llvm.mlir.constant(1 : i64) : i64
    // expected-error @+1 {{launches a kernel of @kernels, which is not a gpu.binary}}
    gpu.launch_func @kernels::@add blocks in (%n, %c1, %c1) threads in (%c1, %c1, %c1) : i64
    llvm.return
  }
}

// -----

// Must not: an object for a target that is not NVVM.
module attributes {gpu.container_module} {
  // expected-error @+1 {{the RAL loads NVVM (sm_XX) objects only}}
  gpu.binary @kernels [#gpu.object<#rocdl.target<chip = "gfx90a">, "ABCD">]
}
