// RUN: disc-opt %s -disc-cpu-prepare -disc-cpu-lower -mlir-print-ir-before=one-shot-bufferize -o /dev/null 2>&1 | FileCheck %s

// One tensor read by two library calls. Each call must read it through its
// own bufferization.to_buffer (here of its own reshape of %h) placed right
// before the call: that is where
// one-shot bufferization sees the read. If the two to_buffer ops were
// merged (CSE), the second read would be invisible and the add in between
// could be bufferized in place into %h's buffer before the second matmul
// read it (a miscompile found in yolo11n-pose).

// CHECK-LABEL: IR Dump Before OneShotBufferize
// CHECK: %[[H:.*]] = linalg.generic
// CHECK: %[[C1:.*]] = tensor.collapse_shape %[[H]]
// CHECK: %[[R1:.*]] = tensor.expand_shape %[[C1]]
// CHECK: bufferization.to_buffer %[[R1]] read_only
// CHECK: call @disc_ral_matmul_f32
// CHECK: linalg.generic {{.*}} ins(%[[H]]
// CHECK: %[[C2:.*]] = tensor.collapse_shape %[[H]]
// CHECK: %[[R2:.*]] = tensor.expand_shape %[[C2]]
// CHECK: bufferization.to_buffer %[[R2]] read_only
// CHECK: call @disc_ral_matmul_f32
func.func @main(%x: tensor<?x8xf32>, %w1: tensor<8x4xf32>, %w2: tensor<8x4xf32>)
    -> (tensor<?x4xf32>, tensor<?x8xf32>, tensor<?x4xf32>) {
  %h = disc.tanh %x : tensor<?x8xf32>
  %a = disc.dot_general %h, %w1, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
  %g = disc.add %h, %h : tensor<?x8xf32>
  %b = disc.dot_general %h, %w2, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
  return %a, %g, %b : tensor<?x4xf32>, tensor<?x8xf32>, tensor<?x4xf32>
}
