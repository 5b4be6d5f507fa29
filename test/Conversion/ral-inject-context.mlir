// RUN: disc-opt %s -disc-ral-inject-context -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: llvm.func @main
// CHECK: llvm.call @disc_ral_alloc(%arg0, %{{.*}}) : (!llvm.ptr, i64) -> !llvm.ptr
// CHECK: llvm.call @disc_ral_free(%arg0, %{{.*}})
// CHECK-NOT: @malloc
// CHECK-NOT: @free(
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @free(!llvm.ptr)
llvm.func @main(%ctx: !llvm.ptr {disc.ral_context}, %n: i64) {
  %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  llvm.call @free(%p) : (!llvm.ptr) -> ()
  llvm.return
}

// -----

llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @helper(%n: i64) -> !llvm.ptr {
  // expected-error @+1 {{calls @malloc in a function without a RAL context argument}}
  %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  llvm.return %p : !llvm.ptr
}
