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

// -----

// Products from reshapes: dims are products of a coefficient and symbols
// ("12*s0" is 12 x s0), so a reshape's dim groups follow: s0 x s1 x 64 ->
// (s0*s1) x 64, 768 -> 12 x 64, a unit dim joins its neighbour. Symbols
// that are equal through an op (s2 joined to s0 by the add) are the same
// factor. Not proven: a sum ("s0 + 1"), and a product that does not
// divide (s0 x s1 -> s1*2).
// CHECK: @p reshape 0 groups {{\[}}[0, 1], [2]]
// CHECK: @p reshape 1 groups {{\[}}[0], [1, 2]]
// CHECK: @p reshape 2 groups {{\[}}[0, 1]]
// CHECK: @p reshape 3 groups {{\[}}[0, 1], [2]]
// CHECK: @p reshape 4 groups unproven
// CHECK: @p reshape 5 groups unproven
func.func @p(%a: tensor<?x?x64xf32> {disc.dims = ["s0", "s1", "64"]}, %b: tensor<?x768xf32> {disc.dims = ["s0", "768"]}, %c: tensor<?xf32> {disc.dims = ["s0"]}, %d: tensor<?xf32> {disc.dims = ["s2"]}, %s2: tensor<2xindex>, %s3: tensor<3xindex>, %s1: tensor<1xindex>) -> () {
  %0 = disc.dynamic_reshape %a, %s2 {disc.dims = ["s0*s1", "64"]} : (tensor<?x?x64xf32>, tensor<2xindex>) -> tensor<?x64xf32>
  %1 = disc.dynamic_reshape %b, %s3 {disc.dims = ["s0", "12", "64"]} : (tensor<?x768xf32>, tensor<3xindex>) -> tensor<?x12x64xf32>
  %2 = disc.dynamic_reshape %c, %s2 {disc.dims = ["s0", "1"]} : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x1xf32>
  %e = disc.add %c, %d : tensor<?xf32>
  %3 = disc.dynamic_reshape %a, %s2 {disc.dims = ["s1*s2", "64"]} : (tensor<?x?x64xf32>, tensor<2xindex>) -> tensor<?x64xf32>
  %4 = disc.dynamic_reshape %c, %s2 {disc.dims = ["s0 + 1", "1"]} : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x1xf32>
  %5 = disc.dynamic_reshape %a, %s2 {disc.dims = ["s1*2", "s0*32"]} : (tensor<?x?x64xf32>, tensor<2xindex>) -> tensor<?x?xf32>
  return
}

// -----

// Attention: batch of q, k, v and the result is one class; k and v share
// their heads, the result has q's (grouped-query attention: q's heads are a
// multiple of k's, not equal to them); q and k share the head dim, k and v
// the key length; the result has q's query length and v's value dim. A
// static mask dim other than 1 is the scores' dim (here the query length,
// which becomes static 5); a dynamic mask dim joins nothing: it may be a
// broadcast 1 at run time (the front end's disc.dims relate it when it is
// the scores' dim).
// CHECK: @attention %arg0 dim 0 -> class 0 dynamic
// CHECK: @attention %arg0 dim 1 -> class 1 dynamic
// CHECK: @attention %arg0 dim 2 -> class 2 static 5
// CHECK: @attention %arg0 dim 3 -> class 3 dynamic
// CHECK: @attention %arg1 dim 0 -> class 0 dynamic
// CHECK: @attention %arg1 dim 1 -> class 4 dynamic
// CHECK: @attention %arg1 dim 2 -> class 5 dynamic
// CHECK: @attention %arg1 dim 3 -> class 3 dynamic
// CHECK: @attention %arg2 dim 0 -> class 0 dynamic
// CHECK: @attention %arg2 dim 1 -> class 4 dynamic
// CHECK: @attention %arg2 dim 2 -> class 5 dynamic
// CHECK: @attention %arg2 dim 3 -> class 6 dynamic
// CHECK: @attention %arg3 dim 0 -> class 7 dynamic
// CHECK: @attention %arg3 dim 1 -> class 8 static 1
// CHECK: @attention %arg3 dim 2 -> class 2 static 5
// CHECK: @attention %arg3 dim 3 -> class 9 dynamic
// CHECK: @attention result0 dim 0 -> class 0 dynamic
// CHECK: @attention result0 dim 1 -> class 1 dynamic
// CHECK: @attention result0 dim 2 -> class 2 static 5
// CHECK: @attention result0 dim 3 -> class 6 dynamic
func.func @attention(%q: tensor<?x?x?x?xf32>, %k: tensor<?x?x?x?xf32>, %v: tensor<?x?x?x?xf32>, %m: tensor<?x1x5x?xf32>) -> tensor<?x?x?x?xf32> {
  %0 = disc.attention %q, %k, %v mask(%m) scale = 0.125 : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?x1x5x?xf32>) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}
