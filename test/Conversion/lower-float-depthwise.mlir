// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(disc-lower-integer-contractions{float-depthwise=1}))' | FileCheck %s
// RUN: disc-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(disc-lower-integer-contractions))' | FileCheck %s --check-prefix=OFF

// A 2-d depthwise convolution (stride 2, padding 1, dilation 1) with a
// symbolic kernel size: one all-parallel generic over the output, no
// padded copy; a loop per spatial dim over the taps, the input coordinate
// out * 2 - 1 + k checked against the input size (unsigned: the low
// padding's negatives too); the input is read only inside it (an scf.if:
// 0 outside, and an input with an empty dim is never read).
// CHECK-LABEL: func.func @depthwise_2d
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x?x?xf32>, %[[W:.*]]: tensor<8x1x?x?xf32>)
// CHECK: cf.assert {{.*}}"disc.convolution: along spatial dim 0 the kernel (dilated) is larger than the padded input"
// CHECK: cf.assert {{.*}}"disc.convolution: along spatial dim 1 the kernel (dilated) is larger than the padded input"
// CHECK: cf.assert {{.*}}"disc.convolution: input channels are not groups x kernel channels"
// CHECK-NOT: tensor.pad
// CHECK: linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(
// CHECK: %[[N:.*]] = linalg.index 0
// CHECK: %[[C:.*]] = linalg.index 1
// CHECK: %[[OH:.*]] = linalg.index 2
// CHECK: %[[OW:.*]] = linalg.index 3
// CHECK: scf.for %[[KH:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[IH:.*]] = arith.addi
// CHECK: %[[INH:.*]] = arith.cmpi ult, %[[IH]],
// CHECK: scf.for %[[KW:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[IW:.*]] = arith.addi
// CHECK: %[[INW:.*]] = arith.cmpi ult, %[[IW]],
// CHECK: %[[IN:.*]] = arith.andi %[[INH]], %[[INW]]
// CHECK: %[[XZ:.*]] = scf.if %[[IN]] -> (f32) {
// CHECK:   %[[XV:.*]] = tensor.extract %[[X]][%[[N]], %[[C]], %[[IH]], %[[IW]]]
// CHECK:   scf.yield %[[XV]]
// CHECK: } else {
// CHECK:   scf.yield %{{.*}} : f32
// CHECK: }
// CHECK: %[[WV:.*]] = tensor.extract %[[W]][%[[C]], %{{.*}}, %[[KH]], %[[KW]]]
// CHECK: %[[P:.*]] = arith.mulf %[[XZ]], %[[WV]] : f32
// CHECK: arith.addf %{{.*}}, %[[P]] : f32
// CHECK-NOT: disc.convolution
// OFF-LABEL: func.func @depthwise_2d
// OFF: disc.convolution
// OFF-NOT: linalg.generic
func.func @depthwise_2d(%x: tensor<?x?x?x?xf32>, %w: tensor<8x1x?x?xf32>) -> tensor<?x8x?x?xf32> {
  %0 = disc.convolution %x, %w, strides = [2, 2], pad_low = [1, 1], pad_high = [1, 1], dilation = [1, 1] {feature_group_count = 8 : i64} : (tensor<?x?x?x?xf32>, tensor<8x1x?x?xf32>) -> tensor<?x8x?x?xf32>
  return %0 : tensor<?x8x?x?xf32>
}

// -----

// f16 accumulates in f32 and converts the sum back once; a 1-d depthwise
// convolution with dilation 2 and unequal padding (which cuDNN's call
// rejects) has one tap loop.
// CHECK-LABEL: func.func @depthwise_1d_f16
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]
// CHECK: scf.for
// CHECK-NOT: scf.for
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: arith.mulf {{.*}} : f32
// CHECK: arith.addf {{.*}} : f32
// CHECK: arith.truncf {{.*}} : f32 to f16
// CHECK-NOT: disc.convolution
func.func @depthwise_1d_f16(%x: tensor<2x4x?xf16>, %w: tensor<4x1x5xf16>) -> tensor<2x4x?xf16> {
  %0 = disc.convolution %x, %w, strides = [1], pad_low = [4], pad_high = [3], dilation = [2] {feature_group_count = 4 : i64} : (tensor<2x4x?xf16>, tensor<4x1x5xf16>) -> tensor<2x4x?xf16>
  return %0 : tensor<2x4x?xf16>
}

// -----

// Must not: a grouped convolution with two input channels per group, a
// depthwise one with two outputs per group (multiplier 2), an ordinary
// convolution, a transposed one (input dilation), and one with a dynamic
// padding stay library ops.
// CHECK-LABEL: func.func @not_depthwise
// CHECK-COUNT-5: disc.convolution
// CHECK-NOT: linalg.generic
func.func @not_depthwise(%x: tensor<1x8x9x9xf32>, %w2: tensor<4x2x3x3xf32>, %wm: tensor<16x1x3x3xf32>, %w: tensor<4x8x3x3xf32>, %wt: tensor<8x1x3x3xf32>, %wd: tensor<8x1x?xf32>, %x1: tensor<1x8x?xf32>, %lo: index, %hi: index) -> (tensor<1x4x7x7xf32>, tensor<1x16x7x7xf32>, tensor<1x4x7x7xf32>, tensor<1x8x17x17xf32>, tensor<1x8x?xf32>) {
  %0 = disc.convolution %x, %w2, strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [1, 1] {feature_group_count = 4 : i64} : (tensor<1x8x9x9xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x7x7xf32>
  %1 = disc.convolution %x, %wm, strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [1, 1] {feature_group_count = 8 : i64} : (tensor<1x8x9x9xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x7x7xf32>
  %2 = disc.convolution %x, %w, strides = [1, 1], pad_low = [0, 0], pad_high = [0, 0], dilation = [1, 1] : (tensor<1x8x9x9xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x7x7xf32>
  %3 = disc.convolution %x, %wt, strides = [1, 1], pad_low = [1, 1], pad_high = [1, 1], dilation = [1, 1] lhs_dilation = [2, 2] {feature_group_count = 8 : i64} : (tensor<1x8x9x9xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x17x17xf32>
  %4 = disc.convolution %x1, %wd, strides = [1], pad_low = [%lo], pad_high = [%hi], dilation = [1] {feature_group_count = 8 : i64} : (tensor<1x8x?xf32>, tensor<8x1x?xf32>, index, index) -> tensor<1x8x?xf32>
  return %0, %1, %2, %3, %4 : tensor<1x4x7x7xf32>, tensor<1x16x7x7xf32>, tensor<1x4x7x7xf32>, tensor<1x8x17x17xf32>, tensor<1x8x?xf32>
}
