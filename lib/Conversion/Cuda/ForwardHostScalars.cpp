//===- ForwardHostScalars.cpp - host values through one-element buffers ---===//
//
// See DiscForwardHostScalars in include/disc/Conversion/Cuda/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "disc/Conversion/Cuda/Passes.h"

#include "GpuLoopUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace disc {
#define GEN_PASS_DEF_DISCFORWARDHOSTSCALARS
#include "disc/Conversion/Cuda/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

/// One use of a candidate buffer, with the op of the function's body that
/// holds it (the use itself at the top level).
struct BufferUse {
  Operation *user, *top;
  bool reads, writes;
};

/// A one-element buffer the pass may rewrite: allocated in `body`, used only
/// by loads, stores (as the destination), copies, deallocs and the return
/// (which reads it: a result's last write stays).
bool isCandidate(memref::AllocOp alloc) {
  if (!disc::cuda::isOneElementMemRef(alloc.getType()) ||
      !alloc.getType().getLayout().isIdentity())
    return false;
  for (OpOperand &use : alloc->getUses()) {
    Operation *user = use.getOwner();
    if (isa<memref::LoadOp, memref::CopyOp, memref::DeallocOp,
            func::ReturnOp>(user))
      continue;
    if (auto store = dyn_cast<memref::StoreOp>(user))
      if (store.getMemRef() == alloc.getResult())
        continue;
    return false;
  }
  return true;
}

/// The uses of `buffer` in the order of the body's ops that hold them
/// (uses under one top-level op keep their walk order).
SmallVector<BufferUse> usesInOrder(Value buffer, Block &body) {
  SmallVector<BufferUse> uses;
  for (Operation *user : buffer.getUsers()) {
    if (isa<memref::DeallocOp>(user))
      continue;
    Operation *top = body.findAncestorOpInBlock(*user);
    bool writes = isa<memref::StoreOp>(user) ||
                  (isa<memref::CopyOp>(user) &&
                   cast<memref::CopyOp>(user).getTarget() == buffer);
    uses.push_back({user, top, !writes, writes});
  }
  llvm::stable_sort(uses, [](const BufferUse &a, const BufferUse &b) {
    return a.top != b.top && a.top->isBeforeInBlock(b.top);
  });
  return uses;
}

struct ForwardHostScalarsPass
    : public disc::impl::DiscForwardHostScalarsBase<ForwardHostScalarsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &body = func.getBody().front();
    SmallVector<memref::AllocOp> candidates;
    for (auto alloc : body.getOps<memref::AllocOp>())
      if (isCandidate(alloc))
        candidates.push_back(alloc);
    // Until nothing changes: a forwarded load can make a later store's
    // value one the host computes (an element count stored, read back and
    // converted).
    bool forwarded = true;
    while (forwarded) {
      forwarded = false;
      // Each candidate's value after each of its top-level writes, for
      // copies out of it (candidates in body order: a copy's source is
      // usually allocated first).
      DenseMap<Operation *, Value> valueAfter;
      DenseMap<Value, bool> computable;
      for (memref::AllocOp alloc : candidates)
        forwarded |= forward(alloc.getResult(), body, valueAfter, computable);
    }
    // Dead writes and unread buffers, until nothing changes: dropping a
    // copy can make its source's last write dead.
    bool changed = true;
    while (changed) {
      changed = false;
      for (memref::AllocOp alloc : candidates)
        if (alloc)
          changed |= dropDeadWrites(alloc.getResult(), body);
      for (memref::AllocOp &alloc : candidates) {
        if (!alloc)
          continue;
        Value buffer = alloc.getResult();
        if (llvm::any_of(buffer.getUsers(), [&](Operation *user) {
              if (auto copy = dyn_cast<memref::CopyOp>(user))
                return copy.getSource() == buffer;
              return !isa<memref::StoreOp, memref::DeallocOp>(user);
            }))
          continue;
        for (Operation *user : llvm::to_vector(buffer.getUsers()))
          user->erase();
        alloc.erase();
        alloc = nullptr;
        changed = true;
      }
    }
  }

  /// Replaces loads of `buffer` by the host value stored before them;
  /// whether any.
  bool forward(Value buffer, Block &body,
               DenseMap<Operation *, Value> &valueAfter,
               DenseMap<Value, bool> &computable) {
    SmallVector<BufferUse> uses = usesInOrder(buffer, body);
    bool replaced = false;
    Value current;
    for (size_t i = 0; i < uses.size();) {
      Operation *top = uses[i].top;
      size_t end = i;
      bool nestedWrite = false;
      while (end < uses.size() && uses[end].top == top) {
        nestedWrite |= uses[end].writes && uses[end].user != top;
        ++end;
      }
      if (auto store = dyn_cast<memref::StoreOp>(top);
          store && store.getMemRef() == buffer) {
        Value value = store.getValueToStore();
        current = disc::cuda::hostComputable(value, body, computable)
                      ? value
                      : Value();
        valueAfter[top] = current;
      } else if (auto copy = dyn_cast<memref::CopyOp>(top);
                 copy && copy.getTarget() == buffer) {
        current = Value();
        Value source = copy.getSource();
        // The source's value at the copy: its last top-level write before.
        Operation *last = nullptr;
        for (Operation *user : source.getUsers()) {
          Operation *userTop = body.findAncestorOpInBlock(*user);
          if (userTop->isBeforeInBlock(top) &&
              (!last || last->isBeforeInBlock(userTop)))
            last = userTop;
        }
        if (last && valueAfter.count(last))
          current = valueAfter.lookup(last);
        valueAfter[top] = current;
      } else if (nestedWrite) {
        current = Value();
      } else if (current) {
        for (size_t k = i; k < end; ++k)
          if (auto load = dyn_cast<memref::LoadOp>(uses[k].user)) {
            load.getResult().replaceAllUsesWith(current);
            load->erase();
            replaced = true;
          }
      }
      i = end;
    }
    return replaced;
  }

  /// Drops top-level stores and copies into `buffer` that nothing reads
  /// before the next top-level write (or before the end); whether any.
  bool dropDeadWrites(Value buffer, Block &body) {
    SmallVector<BufferUse> uses = usesInOrder(buffer, body);
    bool dropped = false;
    for (size_t i = 0; i < uses.size(); ++i) {
      if (!uses[i].writes || uses[i].user != uses[i].top)
        continue;
      bool read = false;
      for (size_t k = i + 1; k < uses.size() && !read; ++k) {
        if (uses[k].writes && uses[k].user == uses[k].top)
          break;
        read = uses[k].reads;
      }
      if (!read) {
        uses[i].user->erase();
        dropped = true;
      }
    }
    return dropped;
  }
};

} // namespace
