// RUN: disc-opt %s -disc-legalize-to-linalg -split-input-file -verify-diagnostics

// dot_general must have been lowered to a library call before.
func.func @dot_left(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{failed to legalize operation 'disc.dot_general'}}
  %0 = disc.dot_general %a, %b, batching_dims = [] x [], contracting_dims = [1] x [0] : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
