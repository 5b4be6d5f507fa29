// RUN: disc-opt %s -split-input-file -disc-apply-noalias-args -verify-diagnostics | FileCheck %s

// The recorded positions (the aligned pointers of two expanded rank-1
// memrefs) get llvm.noalias; the allocated pointers and other arguments
// do not, and the recording attributes are dropped.
// CHECK-LABEL: llvm.func @body(
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr {llvm.noalias}, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64,
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr {llvm.noalias}, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64)
// CHECK-NOT: disc.
// CHECK-LABEL: llvm.func @unmarked(
// CHECK-NOT: llvm.noalias
llvm.func @body(%a0: !llvm.ptr, %a1: !llvm.ptr, %a2: i64, %a3: i64, %a4: i64,
                %b0: !llvm.ptr, %b1: !llvm.ptr, %b2: i64, %b3: i64, %b4: i64)
    attributes {disc.noalias_llvm_args = array<i64: 1, 6>, disc.llvm_arg_count = 10 : i64} {
  llvm.return
}
llvm.func @unmarked(%a0: !llvm.ptr, %a1: !llvm.ptr) {
  llvm.return
}

// -----

// A signature that changed after the marks were recorded fails loudly
// instead of putting noalias on the wrong argument.
// expected-error @+1 {{has 2 arguments, but disc-mark-noalias-args recorded 5: its signature changed after the marks}}
llvm.func @changed(%a0: !llvm.ptr, %a1: !llvm.ptr)
    attributes {disc.noalias_llvm_args = array<i64: 1>, disc.llvm_arg_count = 5 : i64} {
  llvm.return
}

// -----

// expected-error @+1 {{argument 2 recorded as an aligned pointer is not a pointer}}
llvm.func @not_a_pointer(%a0: !llvm.ptr, %a1: !llvm.ptr, %a2: i64)
    attributes {disc.noalias_llvm_args = array<i64: 2>, disc.llvm_arg_count = 3 : i64} {
  llvm.return
}
