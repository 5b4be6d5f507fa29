// RUN: disc-opt %s -split-input-file -disc-cuda-library-calls -verify-diagnostics | FileCheck %s

// dot_general's call goes to the RAL's cuBLASLt implementation, operands
// unchanged; the CPU declaration goes.
// CHECK-NOT:   func.func private @disc_ral_matmul_f32
// CHECK:       func.func private @disc_ral_cuda_matmul_f32(!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @matmul
// CHECK:         call @disc_ral_cuda_matmul_f32(%arg0, %arg1, %arg2, %arg3, %c0_i64, %c1_i64)
// CHECK-NOT:     call @disc_ral_matmul_f32
func.func private @disc_ral_matmul_f32(!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64) attributes {llvm.emit_c_interface}
func.func @matmul(%ctx: !llvm.ptr, %a: memref<*xf32>, %b: memref<*xf32>, %c: memref<*xf32>) {
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  call @disc_ral_matmul_f32(%ctx, %a, %b, %c, %c0_i64, %c1_i64) : (!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64) -> ()
  return
}

// -----

// bf16 too.
// CHECK-LABEL: func.func @matmul_bf16
// CHECK:         call @disc_ral_cuda_matmul_bf16
func.func private @disc_ral_matmul_bf16(!llvm.ptr, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, i64, i64) attributes {llvm.emit_c_interface}
func.func @matmul_bf16(%ctx: !llvm.ptr, %a: memref<*xbf16>, %b: memref<*xbf16>, %c: memref<*xbf16>) {
  %c0_i64 = arith.constant 0 : i64
  call @disc_ral_matmul_bf16(%ctx, %a, %b, %c, %c0_i64, %c0_i64) : (!llvm.ptr, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, i64, i64) -> ()
  return
}

// -----

// A convolution goes to cuDNN when its padding is symmetric and it has no
// input dilation.
// CHECK-NOT:   func.func private @disc_ral_conv_f32
// CHECK:       func.func private @disc_ral_cuda_conv_f32
// CHECK-LABEL: func.func @conv
// CHECK:         call @disc_ral_cuda_conv_f32(%arg0, %arg1, %arg2, %arg3,
func.func private @disc_ral_conv_f32(!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) attributes {llvm.emit_c_interface}
func.func @conv(%ctx: !llvm.ptr, %x: memref<*xf32>, %w: memref<*xf32>, %y: memref<*xf32>) {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %c2 = arith.constant 2 : i64
  %p1 = arith.constant 1 : i64
  %p2 = arith.constant 2 : i64
  call @disc_ral_conv_f32(%ctx, %x, %w, %y, %c1, %c1, %c1, %p1, %p1, %c0, %p1, %p1, %c0, %c1, %c1, %c1, %c1, %c1, %c1, %c1) : (!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
  return
}

// -----

// Must not: padding that differs between the sides ...
func.func private @disc_ral_conv_f32(!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) attributes {llvm.emit_c_interface}
func.func @asymmetric_conv(%ctx: !llvm.ptr, %x: memref<*xf32>, %w: memref<*xf32>, %y: memref<*xf32>) {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %c2 = arith.constant 2 : i64
  %p1 = arith.constant 1 : i64
  %p2 = arith.constant 2 : i64
  // expected-error @+1 {{calls @disc_ral_conv_f32 with padding that differs between the low and high side (1 and 2), which the cuda target does not support yet}}
  call @disc_ral_conv_f32(%ctx, %x, %w, %y, %c1, %c1, %c1, %p1, %p1, %c0, %p2, %p2, %c0, %c1, %c1, %c1, %c1, %c1, %c1, %c1) : (!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
  return
}

// -----

// A transposed convolution (input dilation 2) goes to cuDNN too (its
// backward data): the high padding may exceed the low one by less than
// the input dilation (the output padding) ...
// CHECK-LABEL: func.func @transposed_conv
// CHECK:         call @disc_ral_cuda_conv_f32(%arg0, %arg1, %arg2, %arg3,
func.func private @disc_ral_conv_f32(!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> () attributes {llvm.emit_c_interface}
func.func @transposed_conv(%ctx: !llvm.ptr, %x: memref<*xf32>, %w: memref<*xf32>, %y: memref<*xf32>) {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %c2 = arith.constant 2 : i64
  call @disc_ral_conv_f32(%ctx, %x, %w, %y, %c1, %c1, %c1, %c1, %c1, %c0, %c2, %c2, %c0, %c1, %c1, %c1, %c2, %c2, %c1, %c1) : (!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
  return
}

// -----

// ... but not by as much as the input dilation, ...
func.func private @disc_ral_conv_f32(!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> () attributes {llvm.emit_c_interface}
func.func @transposed_conv_too_much_output_padding(%ctx: !llvm.ptr, %x: memref<*xf32>, %w: memref<*xf32>, %y: memref<*xf32>) {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %c2 = arith.constant 2 : i64
  %c3 = arith.constant 3 : i64
  // expected-error @+1 {{calls @disc_ral_conv_f32 with a transposed convolution's padding 1 and 3: cuDNN's backward data needs the high padding from the low one to it + 1}}
  call @disc_ral_conv_f32(%ctx, %x, %w, %y, %c1, %c1, %c1, %c1, %c1, %c0, %c3, %c3, %c0, %c1, %c1, %c1, %c2, %c2, %c1, %c1) : (!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
  return
}

// -----

// ... nor below it ...
func.func private @disc_ral_conv_f32(!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> () attributes {llvm.emit_c_interface}
func.func @transposed_conv_high_below_low(%ctx: !llvm.ptr, %x: memref<*xf32>, %w: memref<*xf32>, %y: memref<*xf32>) {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %c2 = arith.constant 2 : i64
  // expected-error @+1 {{calls @disc_ral_conv_f32 with a transposed convolution's padding 2 and 1: cuDNN's backward data needs the high padding from the low one to it + 1}}
  call @disc_ral_conv_f32(%ctx, %x, %w, %y, %c1, %c1, %c1, %c2, %c2, %c0, %c1, %c1, %c0, %c1, %c1, %c1, %c2, %c2, %c1, %c1) : (!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
  return
}

// -----

// ... and a kernel gradient takes no input dilation.
func.func private @disc_ral_conv_backward_weights_f32(!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> () attributes {llvm.emit_c_interface}
func.func @dilated_kernel_gradient(%ctx: !llvm.ptr, %x: memref<*xf32>, %dy: memref<*xf32>, %dw: memref<*xf32>) {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %c2 = arith.constant 2 : i64
  // expected-error @+1 {{calls @disc_ral_conv_backward_weights_f32 with input dilation, which the cuda target does not support}}
  call @disc_ral_conv_backward_weights_f32(%ctx, %x, %dy, %dw, %c1, %c1, %c1, %c0, %c0, %c0, %c0, %c0, %c0, %c1, %c1, %c1, %c2, %c1, %c1, %c1) : (!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
  return
}

// -----

// A convolution's kernel gradient goes to cuDNN's backward filter, operands
// unchanged ...
// CHECK-LABEL: func.func @conv_backward_weights
// CHECK:         call @disc_ral_cuda_conv_backward_weights_f32(%arg0, %arg1, %arg2, %arg3,
// CHECK-NOT:     call @disc_ral_conv_backward_weights_f32
func.func private @disc_ral_conv_backward_weights_f32(!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) attributes {llvm.emit_c_interface}
func.func @conv_backward_weights(%ctx: !llvm.ptr, %x: memref<*xf32>, %dy: memref<*xf32>, %dw: memref<*xf32>) {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  call @disc_ral_conv_backward_weights_f32(%ctx, %x, %dy, %dw, %c1, %c1, %c1, %c0, %c0, %c0, %c0, %c0, %c0, %c1, %c1, %c1, %c1, %c1, %c1, %c1) : (!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
  return
}

// -----

// ... but not with padding that differs between the sides ...
func.func private @disc_ral_conv_backward_weights_bf16(!llvm.ptr, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) attributes {llvm.emit_c_interface}
func.func @conv_backward_weights_asymmetric(%ctx: !llvm.ptr, %x: memref<*xbf16>, %dy: memref<*xbf16>, %dw: memref<*xbf16>) {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %c2 = arith.constant 2 : i64
  // expected-error @+1 {{calls @disc_ral_conv_backward_weights_bf16 with padding that differs between the low and high side (1 and 2), which the cuda target does not support yet}}
  call @disc_ral_conv_backward_weights_bf16(%ctx, %x, %dy, %dw, %c1, %c1, %c1, %c1, %c1, %c0, %c2, %c1, %c0, %c1, %c1, %c1, %c1, %c1, %c1, %c1) : (!llvm.ptr, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
  return
}

// -----

// ... or another library call without a cuda implementation.
func.func private @disc_ral_attention_f32(!llvm.ptr, memref<*xf32>) attributes {llvm.emit_c_interface}
func.func @attention(%ctx: !llvm.ptr, %a: memref<*xf32>) {
  // expected-error @+1 {{calls @disc_ral_attention_f32 (a library call), which the cuda target does not support yet}}
  call @disc_ral_attention_f32(%ctx, %a) : (!llvm.ptr, memref<*xf32>) -> ()
  return
}

// -----

// A sort stays as it is, declaration included: generated code replaces it
// after the loop mapping (disc-cuda-sort-loops).
// CHECK: func.func private @disc_ral_sort_f32(!llvm.ptr, memref<*xf32>)
// CHECK-LABEL: func.func @sort
// CHECK:         call @disc_ral_sort_f32(%{{.*}}, %{{.*}})
func.func private @disc_ral_sort_f32(!llvm.ptr, memref<*xf32>) attributes {llvm.emit_c_interface}
func.func @sort(%ctx: !llvm.ptr, %a: memref<*xf32>) {
  call @disc_ral_sort_f32(%ctx, %a) : (!llvm.ptr, memref<*xf32>) -> ()
  return
}

// -----

// Must not touch calls that are not library calls.
// CHECK-LABEL: func.func @helper_call
// CHECK:         call @helper()
func.func private @helper()
func.func @helper_call() {
  call @helper() : () -> ()
  return
}

// -----

// A matmul whose epilogue is one bias add (disc-fuse-library-epilogues
// `cublaslt`) goes to cuBLASLt's bias epilogue: the steps constant does not
// reach the call (on the device a host constant would become a device
// buffer), nor do the unused operand slots.
// CHECK-NOT:   func.func private @disc_ral_matmul_post_f32
// CHECK:       func.func private @disc_ral_cuda_matmul_bias_f32(!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, memref<*xf32>) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @matmul_bias
// CHECK:         call @disc_ral_cuda_matmul_bias_f32(%arg0, %arg1, %arg2, %arg3, %c0_i64, %c1_i64, %arg4)
// CHECK-NOT:     call @disc_ral_matmul_post_f32
func.func private @disc_ral_matmul_post_f32(!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, memref<*xf64>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
func.func @matmul_bias(%ctx: !llvm.ptr, %a: memref<*xf32>, %b: memref<*xf32>, %c: memref<*xf32>, %bias: memref<*xf32>) {
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %t = arith.constant dense<[0.0, 0.0, 0.0]> : tensor<3xf64>
  %m = bufferization.to_buffer %t read_only : tensor<3xf64> to memref<3xf64, strided<[?], offset: ?>>
  %steps = memref.cast %m : memref<3xf64, strided<[?], offset: ?>> to memref<*xf64>
  call @disc_ral_matmul_post_f32(%ctx, %a, %b, %c, %c0_i64, %c1_i64, %steps, %bias, %c, %c, %c, %c, %c) : (!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, memref<*xf64>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
  return
}

// -----

// Any other epilogue is an error naming the call (the cuda mode of
// disc-fuse-library-epilogues forms none).
func.func private @disc_ral_matmul_post_f32(!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, memref<*xf64>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
func.func @matmul_bias_relu(%ctx: !llvm.ptr, %a: memref<*xf32>, %b: memref<*xf32>, %c: memref<*xf32>, %bias: memref<*xf32>) {
  %c0_i64 = arith.constant 0 : i64
  %t = arith.constant dense<[0.0, 0.0, 0.0, 16.0, 0.0, 0.0]> : tensor<6xf64>
  %m = bufferization.to_buffer %t read_only : tensor<6xf64> to memref<6xf64, strided<[?], offset: ?>>
  %steps = memref.cast %m : memref<6xf64, strided<[?], offset: ?>> to memref<*xf64>
  // expected-error @+1 {{calls @disc_ral_matmul_post_f32 with an epilogue other than one bias add, which the cuda target does not support yet (cuBLASLt's epilogue runs one bias add here; disc-fuse-library-epilogues makes no other)}}
  call @disc_ral_matmul_post_f32(%ctx, %a, %b, %c, %c0_i64, %c0_i64, %steps, %bias, %c, %c, %c, %c, %c) : (!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, memref<*xf64>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
  return
}

// -----

// Steps that are not a constant: an error too.
func.func private @disc_ral_matmul_post_f32(!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, memref<*xf64>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
func.func @matmul_unknown_steps(%ctx: !llvm.ptr, %a: memref<*xf32>, %b: memref<*xf32>, %c: memref<*xf32>, %steps: memref<*xf64>) {
  %c0_i64 = arith.constant 0 : i64
  // expected-error @+1 {{with an epilogue other than one bias add}}
  call @disc_ral_matmul_post_f32(%ctx, %a, %b, %c, %c0_i64, %c0_i64, %steps, %c, %c, %c, %c, %c, %c) : (!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, memref<*xf64>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
  return
}

// -----

// bf16: the bias entry point of its type.
// CHECK-LABEL: func.func @matmul_bias_bf16
// CHECK:         call @disc_ral_cuda_matmul_bias_bf16(%arg0, %arg1, %arg2, %arg3, %c0_i64, %c0_i64, %arg4) : (!llvm.ptr, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, i64, i64, memref<*xbf16>) -> ()
func.func private @disc_ral_matmul_post_bf16(!llvm.ptr, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, i64, i64, memref<*xf64>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>) attributes {llvm.emit_c_interface}
func.func @matmul_bias_bf16(%ctx: !llvm.ptr, %a: memref<*xbf16>, %b: memref<*xbf16>, %c: memref<*xbf16>, %bias: memref<*xbf16>) {
  %c0_i64 = arith.constant 0 : i64
  %t = arith.constant dense<[0.0, 0.0, 0.0]> : tensor<3xf64>
  %m = bufferization.to_buffer %t read_only : tensor<3xf64> to memref<3xf64, strided<[?], offset: ?>>
  %steps = memref.cast %m : memref<3xf64, strided<[?], offset: ?>> to memref<*xf64>
  call @disc_ral_matmul_post_bf16(%ctx, %a, %b, %c, %c0_i64, %c0_i64, %steps, %bias, %c, %c, %c, %c, %c) : (!llvm.ptr, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, i64, i64, memref<*xf64>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>, memref<*xbf16>) -> ()
  return
}
