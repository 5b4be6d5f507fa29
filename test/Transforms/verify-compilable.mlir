// RUN: disc-opt %s -split-input-file -disc-verify-compilable -verify-diagnostics | FileCheck %s

// Well-formed programs pass unchanged (the must-not): dims in range, a
// large but materialisable static type, indices into static dims, a
// dynamic dim index, an i64 INT64_MIN (a legitimate value, not an index).
// CHECK-LABEL: func.func @in_range
// CHECK: tensor.dim %{{.*}}, %{{.*}} : tensor<?x?xf32>
// CHECK: tensor.extract %{{.*}}[%{{.*}}] : tensor<4xi64>
func.func @in_range(%x: tensor<?x?xf32>, %i: index, %t: tensor<4xi64>) -> (index, index, i64, tensor<1024x1024x1024xi8>) {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %d = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e = tensor.dim %x, %i : tensor<?x?xf32>
  %v = tensor.extract %t[%c3] : tensor<4xi64>
  %min = arith.constant -9223372036854775808 : i64
  %s = arith.addi %v, %min : i64
  %big = tensor.empty() : tensor<1024x1024x1024xi8>
  return %d, %e, %s, %big : index, index, i64, tensor<1024x1024x1024xi8>
}

// -----

func.func @dim_negative(%x: tensor<?x?xf32>) -> index {
  %c = arith.constant -1 : index
  // expected-error @+1 {{'tensor.dim' op dim index of a rank-2 source -1 is out of range [0, 2)}}
  %d = tensor.dim %x, %c : tensor<?x?xf32>
  return %d : index
}

// -----

func.func @dim_past_rank(%x: memref<?x?xf32>) -> index {
  %c = arith.constant 2 : index
  // expected-error @+1 {{'memref.dim' op dim index of a rank-2 source 2 is out of range [0, 2)}}
  %d = memref.dim %x, %c : memref<?x?xf32>
  return %d : index
}

// -----

func.func @extract_past_static_dim(%t: tensor<4x?xi64>, %j: index) -> i64 {
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{'tensor.extract' op index of dim 0 4 is out of range [0, 4)}}
  %v = tensor.extract %t[%c4, %j] : tensor<4x?xi64>
  return %v : i64
}

// -----

func.func @insert_negative(%t: tensor<4xi64>, %v: i64) -> tensor<4xi64> {
  %c = arith.constant -2 : index
  // expected-error @+1 {{'tensor.insert' op index of dim 0 -2 is out of range [0, 4)}}
  %r = tensor.insert %v into %t[%c] : tensor<4xi64>
  return %r : tensor<4xi64>
}

// -----

func.func @dynamic_marker_index() -> tensor<1xindex> {
  // expected-error @+1 {{index value -9223372036854775808 is MLIR's marker for a dynamic size}}
  %s = arith.constant dense<-9223372036854775808> : tensor<1xindex>
  return %s : tensor<1xindex>
}

// -----

func.func @too_large() -> tensor<2147483648xindex> {
  %c = arith.constant 1 : index
  // expected-error @+1 {{result type 'tensor<2147483648xindex>' has 2147483648 elements in its static dims; DISC materialises at most 2147483647}}
  %0 = tensor.splat %c : tensor<2147483648xindex>
  return %0 : tensor<2147483648xindex>
}

// -----

// expected-error @+1 {{block argument type 'tensor<4294967296x4294967296x?xf32>' has more elements than a 64-bit count holds}}
func.func @count_overflows(%x: tensor<4294967296x4294967296x?xf32>) -> tensor<4294967296x4294967296x?xf32> {
  return %x : tensor<4294967296x4294967296x?xf32>
}
