// RUN: disc-opt %s -split-input-file -disc-print-shape-constraints -o /dev/null | FileCheck %s

// add joins all dims of %a and %b; the dot joins the contracting dims
// (%a dim 1 with %w dim 0) and gives the result %a's rows and %w's columns.
// %w dim 1 is static 16, which its whole class inherits.
// CHECK: @f %arg0 dim 0 -> class 0 dynamic
// CHECK: @f %arg0 dim 1 -> class 1 dynamic
// CHECK: @f %arg1 dim 0 -> class 0 dynamic
// CHECK: @f %arg1 dim 1 -> class 1 dynamic
// CHECK: @f %arg2 dim 0 -> class 1 dynamic
// CHECK: @f %arg2 dim 1 -> class 2 static 16
// CHECK: @f %arg3 dim 0 -> class 3 dynamic
// CHECK: @f result0 dim 0 -> class 0 dynamic
// CHECK: @f result0 dim 1 -> class 2 static 16
func.func @f(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %w: tensor<?x16xf32>, %unrelated: tensor<?xf32>) -> tensor<?x?xf32> {
  %0 = disc.add %a, %b : tensor<?x?xf32>
  %1 = disc.dot_general %0, %w, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<?x?xf32>, tensor<?x16xf32>) -> tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}

// -----

// `disc.dims` from the front end: dims with the same expression are equal
// even without an op that relates them; the reason names the symbol.
// CHECK: @g %arg0 dim 0 -> class 0 dynamic
// CHECK: @g %arg0 dim 1 -> class 1 dynamic
// CHECK: @g %arg1 dim 0 -> class 0 dynamic
// CHECK: @g %arg1 dim 1 -> class 2 dynamic
// CHECK: @g %arg2 dim 0 -> class 3 dynamic
// CHECK: @g result0 dim 0 -> class 0 dynamic
func.func @g(%a: tensor<?x?xf32> {disc.dims = ["s0", "s1"]}, %b: tensor<?x?xf32> {disc.dims = ["s0", "s1 + 1"]}, %c: tensor<?xf32>) -> tensor<?xf32> {
  %0 = disc.reduce %a, dims = [1], kind = sum {disc.dims = ["s0"]} : (tensor<?x?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
