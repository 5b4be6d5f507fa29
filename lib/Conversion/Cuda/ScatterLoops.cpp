//===- ScatterLoops.cpp - scatter loops as parallel loops -----------------===//
#include "ScatterLoops.h"

#include "GpuLoopUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace disc::cuda {

namespace {

/// The load of `store`'s load-combine-store (`store(combine(load(B[I]),
/// v), B[I])`, one use each, one block), or null.
memref::LoadOp combinedLoad(memref::StoreOp store) {
  Operation *combine = store.getValueToStore().getDefiningOp();
  if (!combine || !atomicKindOf(combine) ||
      !combine->getResult(0).hasOneUse() ||
      combine->getBlock() != store->getBlock())
    return nullptr;
  for (Value operand : combine->getOperands()) {
    auto load = operand.getDefiningOp<memref::LoadOp>();
    if (load && load.getMemRef() == store.getMemRef() &&
        load.getIndices() == store.getIndices() && load->hasOneUse() &&
        load->getBlock() == store->getBlock())
      return load;
  }
  return nullptr;
}

/// The load-combine-stores of `loop` when it is a scatter loop (header),
/// plain stores given a null load; none otherwise.
std::optional<SmallVector<std::pair<memref::StoreOp, memref::LoadOp>>>
analyzeScatter(scf::ForOp loop) {
  if (loop.getNumRegionIterArgs() != 0)
    return std::nullopt;
  SmallVector<std::pair<memref::StoreOp, memref::LoadOp>> stores;
  llvm::DenseMap<Value, int> readsOf; // root buffer -> loads in the loop
  bool ok = true;
  loop.getBody()->walk([&](Operation *op) {
    if (auto nested = dyn_cast<scf::ForOp>(op)) {
      ok &= nested.getNumRegionIterArgs() == 0;
      return;
    }
    if (isa<scf::IfOp, scf::YieldOp, cf::AssertOp>(op))
      return;
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      ++readsOf[rootBuffer(load.getMemRef())];
      return;
    }
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      stores.push_back({store, combinedLoad(store)});
      return;
    }
    if (op->getNumRegions() != 0 || !isMemoryEffectFree(op))
      ok = false; // loops of other kinds, calls, copies, atomics, allocs
  });
  if (!ok || stores.empty())
    return std::nullopt;
  // A written buffer is read only by its own load-combine-stores.
  llvm::DenseMap<Value, int> combinedReads;
  for (auto [store, load] : stores)
    if (load)
      ++combinedReads[rootBuffer(store.getMemRef())];
  for (auto [store, load] : stores) {
    Value root = rootBuffer(store.getMemRef());
    if (readsOf.lookup(root) != combinedReads.lookup(root))
      return std::nullopt;
    if (!definedOutside(store.getMemRef(), loop))
      return std::nullopt;
  }
  return stores;
}

} // namespace

unsigned parallelizeScatterLoops(func::FuncOp func) {
  unsigned rewritten = 0;
  for (Block &block : func.getBody())
    for (auto loop : llvm::to_vector(block.getOps<scf::ForOp>())) {
      auto stores = analyzeScatter(loop);
      if (!stores)
        continue;
      // Each combining write one atomic read-modify-write of that kind.
      for (auto [store, load] : *stores) {
        if (!load)
          continue;
        Operation *combine = store.getValueToStore().getDefiningOp();
        Value update = combine->getOperand(0) == load.getResult()
                           ? combine->getOperand(1)
                           : combine->getOperand(0);
        OpBuilder b(store);
        memref::AtomicRMWOp::create(b, store.getLoc(), *atomicKindOf(combine),
                                    update, store.getMemRef(),
                                    store.getIndices());
        store.erase();
        combine->erase();
        load.erase();
      }
      OpBuilder b(loop);
      auto parallel = scf::ParallelOp::create(
          b, loop.getLoc(), ValueRange{loop.getLowerBound()},
          ValueRange{loop.getUpperBound()}, ValueRange{loop.getStep()});
      IRMapping mapping;
      mapping.map(loop.getInductionVar(), parallel.getInductionVars()[0]);
      OpBuilder body = OpBuilder::atBlockBegin(parallel.getBody());
      for (Operation &op : loop.getBody()->without_terminator())
        body.clone(op, mapping);
      loop.erase();
      ++rewritten;
    }
  return rewritten;
}

} // namespace disc::cuda
