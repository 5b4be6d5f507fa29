// RUN: disc-opt %s -split-input-file -disc-cuda-sort-loops -verify-diagnostics | FileCheck %s

// A descending f32 sort along dim 0 of a strided input: one block per line
// (the other dims' product), a thread loop copying the line and its
// positions, then the stages (a mirror step, then the distances), every
// thread loop over the P / 2 compare-exchanges of a step (positions by
// shifts and masks, no division). NaN goes first
// descending; equal values keep their input order (indices compared
// unsigned). The call and its declaration are gone.
// CHECK-NOT:   func.func private @disc_ral_sort_f32
// CHECK-LABEL: func.func @sort_f32_descending
// CHECK-SAME:    (%{{.*}}: !llvm.ptr, %[[IN:.*]]: memref<?x?xf32, strided<[?, ?], offset: ?>>, %[[V:.*]]: memref<?x?xf32>, %[[I:.*]]: memref<?x?xi64>)
// CHECK:         %[[N:.*]] = memref.dim %[[V]], %c0
// CHECK:         %[[LINES:.*]] = memref.dim %[[V]], %c1
// CHECK:         %[[CLZ:.*]] = math.ctlz
// CHECK:         %[[LOG2:.*]] = arith.subi %c64_i64, %[[CLZ]] : i64
// CHECK:         %[[STAGES:.*]] = arith.index_cast %[[LOG2]] : i64 to index
// CHECK:         %[[P:.*]] = arith.shli %{{.*}}, %[[STAGES]] : index
// CHECK:         %[[PAIRS:.*]] = arith.shrui %[[P]], %{{.*}} : index
// CHECK:         %[[T:.*]] = arith.minui %{{.*}}, %c256 : index
// CHECK:         scf.parallel (%[[LINE:.*]]) = (%{{.*}}) to (%[[LINES]])
// CHECK:           scf.parallel (%[[TID:.*]]) = (%{{.*}}) to (%[[T]])
// CHECK-NEXT:        scf.for %[[K:.*]] = %[[TID]] to %[[N]] step %[[T]] {
// CHECK-NEXT:          %[[X:.*]] = memref.load %[[IN]][%[[K]], %[[LINE]]]
// CHECK-NEXT:          memref.store %[[X]], %[[V]][%[[K]], %[[LINE]]]
// CHECK-NEXT:          %[[K64:.*]] = arith.index_cast %[[K]] : index to i64
// CHECK-NEXT:          memref.store %[[K64]], %[[I]][%[[K]], %[[LINE]]]
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK:           scf.for %[[S:.*]] = %{{.*}} to %[[STAGES]] step
// CHECK:             scf.parallel (%[[TID2:.*]]) = (%{{.*}}) to (%[[T]])
// CHECK-NEXT:          scf.for %{{.*}} = %[[TID2]] to %[[PAIRS]] step %[[T]] {
// CHECK-NOT:             arith.divui
// CHECK-NOT:             arith.remui
// CHECK:                 %[[INSIDE:.*]] = arith.cmpi ult, %{{.*}}, %[[N]] : index
// CHECK:                 scf.if %[[INSIDE]] {
// CHECK:                   %[[EARLIER:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : i64
// CHECK:                   arith.cmpf uno
// CHECK:                   arith.cmpf ogt
// CHECK:                   arith.cmpf oeq
// CHECK:                   scf.if
// CHECK-COUNT-4:             memref.store
// CHECK:             } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK:             scf.for %{{.*}} = %{{.*}} to %[[S]] step
// CHECK:               scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[T]])
// CHECK:                 scf.if
// CHECK:               } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK:         } {disc.row_block, mapping = [#gpu.loop_dim_map<processor = block_x
// CHECK-NOT:     call @disc_ral_sort
func.func private @disc_ral_sort_f32(!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xi64>, i64, i64) attributes {llvm.emit_c_interface}
func.func @sort_f32_descending(%ctx: !llvm.ptr, %x: memref<?x?xf32, strided<[?, ?], offset: ?>>, %v: memref<?x?xf32>, %i: memref<?x?xi64>) {
  %dim = arith.constant 0 : i64
  %descending = arith.constant 1 : i64
  %a = memref.cast %x : memref<?x?xf32, strided<[?, ?], offset: ?>> to memref<*xf32>
  %b = memref.cast %v : memref<?x?xf32> to memref<*xf32>
  %c = memref.cast %i : memref<?x?xi64> to memref<*xi64>
  call @disc_ral_sort_f32(%ctx, %a, %b, %c, %dim, %descending) : (!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xi64>, i64, i64) -> ()
  return
}

// -----

// Booleans ascending compare unsigned (false before true), i32 signed; a
// rank-1 line is the only one (no coordinates); the other library call
// (not a sort) stays.
// CHECK-LABEL: func.func @sort_bool_and_i32
// CHECK:         scf.parallel
// CHECK:           arith.cmpi ult, %{{.*}}, %{{.*}} : i1
// CHECK-NOT:       arith.cmpf
// CHECK:         } {disc.row_block
// CHECK:         scf.parallel
// CHECK:           arith.cmpi slt, %{{.*}}, %{{.*}} : i32
// CHECK:         } {disc.row_block
// CHECK:         call @disc_ral_matmul_f32
func.func private @disc_ral_sort_i1(!llvm.ptr, memref<*xi1>, memref<*xi1>, memref<*xi64>, i64, i64) attributes {llvm.emit_c_interface}
func.func private @disc_ral_sort_i32(!llvm.ptr, memref<*xi32>, memref<*xi32>, memref<*xi64>, i64, i64) attributes {llvm.emit_c_interface}
func.func private @disc_ral_matmul_f32(!llvm.ptr, memref<*xf32>) attributes {llvm.emit_c_interface}
func.func @sort_bool_and_i32(%ctx: !llvm.ptr, %x: memref<?xi1>, %v: memref<?xi1>, %i: memref<?xi64>, %y: memref<4x?xi32>, %w: memref<4x?xi32>, %j: memref<4x?xi64>, %m: memref<*xf32>) {
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %a = memref.cast %x : memref<?xi1> to memref<*xi1>
  %b = memref.cast %v : memref<?xi1> to memref<*xi1>
  %c = memref.cast %i : memref<?xi64> to memref<*xi64>
  call @disc_ral_sort_i1(%ctx, %a, %b, %c, %zero, %zero) : (!llvm.ptr, memref<*xi1>, memref<*xi1>, memref<*xi64>, i64, i64) -> ()
  %d = memref.cast %y : memref<4x?xi32> to memref<*xi32>
  %e = memref.cast %w : memref<4x?xi32> to memref<*xi32>
  %f = memref.cast %j : memref<4x?xi64> to memref<*xi64>
  call @disc_ral_sort_i32(%ctx, %d, %e, %f, %one, %zero) : (!llvm.ptr, memref<*xi32>, memref<*xi32>, memref<*xi64>, i64, i64) -> ()
  call @disc_ral_matmul_f32(%ctx, %m) : (!llvm.ptr, memref<*xf32>) -> ()
  return
}

// -----

// An unsigned element type is an error naming the call.
func.func private @disc_ral_sort_i8(!llvm.ptr, memref<*xui8>, memref<*xui8>, memref<*xi64>, i64, i64) attributes {llvm.emit_c_interface}
func.func @sort_unsigned(%ctx: !llvm.ptr, %x: memref<?xui8>, %v: memref<?xui8>, %i: memref<?xi64>) {
  %zero = arith.constant 0 : i64
  %a = memref.cast %x : memref<?xui8> to memref<*xui8>
  %b = memref.cast %v : memref<?xui8> to memref<*xui8>
  %c = memref.cast %i : memref<?xi64> to memref<*xi64>
  // expected-error @+1 {{calls @disc_ral_sort_i8: the cuda target sorts signless integers and floats, not 'ui8'}}
  call @disc_ral_sort_i8(%ctx, %a, %b, %c, %zero, %zero) : (!llvm.ptr, memref<*xui8>, memref<*xui8>, memref<*xi64>, i64, i64) -> ()
  return
}

// -----

// A dim that is not a constant is an error naming the call.
func.func private @disc_ral_sort_f32(!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xi64>, i64, i64) attributes {llvm.emit_c_interface}
func.func @sort_dynamic_dim(%ctx: !llvm.ptr, %x: memref<?xf32>, %v: memref<?xf32>, %i: memref<?xi64>, %dim: i64) {
  %zero = arith.constant 0 : i64
  %a = memref.cast %x : memref<?xf32> to memref<*xf32>
  %b = memref.cast %v : memref<?xf32> to memref<*xf32>
  %c = memref.cast %i : memref<?xi64> to memref<*xi64>
  // expected-error @+1 {{calls @disc_ral_sort_f32: expected ranked buffers (through memref.cast) and a constant dim and direction}}
  call @disc_ral_sort_f32(%ctx, %a, %b, %c, %dim, %zero) : (!llvm.ptr, memref<*xf32>, memref<*xf32>, memref<*xi64>, i64, i64) -> ()
  return
}
