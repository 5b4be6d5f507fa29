// RUN: disc-opt %s -disc-ral-lower-asserts | FileCheck %s

// A failed check calls the runtime (which raises in Python) instead of
// abort(); the function continues in a new block.
// CHECK: llvm.mlir.global internal constant @disc_assert_msg_0("sizes differ\00")
// CHECK-LABEL: func @check
// CHECK-SAME: (%[[CTX:.*]]: !llvm.ptr {disc.ral_context}
// CHECK: cf.cond_br %{{.*}}, ^[[OK:.*]], ^[[FAIL:.*]]
// CHECK: ^[[FAIL]]:
// CHECK: llvm.call @disc_ral_fail(%[[CTX]], %{{.*}})
// CHECK: llvm.unreachable
// CHECK: ^[[OK]]:
// CHECK: return
// CHECK-NOT: cf.assert
func.func @check(%ctx: !llvm.ptr {disc.ral_context}, %a: index, %b: index) -> index {
  %eq = arith.cmpi eq, %a, %b : index
  cf.assert %eq, "sizes differ"
  return %a : index
}
