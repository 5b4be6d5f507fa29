//===- Passes.td - disc graph-level passes -----------------*- tablegen -*-===//
#ifndef DISC_TRANSFORMS_PASSES_TD
#define DISC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def DiscSelectEntry : Pass<"disc-select-entry", "mlir::ModuleOp"> {
  let summary = "Pick the entry function and make every other function private";
  let description = [{
    The entry is the only public function, or the public function named
    `main` when there are several. It gets the unit attribute `disc.entry`.
    Other functions become private so that inlining and symbol DCE can
    remove them. Fails with a diagnostic when no entry can be chosen.
  }];
}

def DiscAddRalContext : Pass<"disc-add-ral-context", "mlir::ModuleOp"> {
  let summary = "Prepend the runtime context argument to the entry function";
  let description = [{
    Compiled code holds no global state: everything it needs from the
    runtime (allocator, library handles, error reporting) comes through an
    opaque `!llvm.ptr` context passed as the first argument of the function
    marked `disc.entry`. The argument carries the `disc.ral_context` attr.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def DiscReadOnlyInputs : Pass<"disc-read-only-inputs", "mlir::ModuleOp"> {
  let summary = "Mark the entry's tensor arguments read-only for bufferization";
  let description = [{
    Inputs are taken zero-copy from the caller: compiled code must never
    write into them. Every tensor argument of the function marked
    `disc.entry` gets `bufferization.writable = false`, so one-shot
    bufferization copies an input before an op would update it in place
    (scatter, insert_slice into an argument, ...). Arguments that already
    carry the attribute keep it.
  }];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect"];
}

def DiscPrintShapeConstraints
    : Pass<"disc-print-shape-constraints", "mlir::ModuleOp"> {
  let summary = "Test pass: print the dim-equality classes of the entry function";
}

def DiscOutlineLoopKernels
    : Pass<"disc-outline-loop-kernels", "mlir::ModuleOp"> {
  let summary = "Outline each outermost loop nest of the entry into a kernel function";
  let description = [{
    After bufferization every memory-bound op is a loop nest on memrefs
    inside the entry function. This pass moves outermost `scf.for` /
    `scf.parallel` nests into private functions `@<entry>_kernel_<N>` and
    replaces them by a `func.call`. Adjacent nests of one block with only
    allocations or memory-free ops between them (and no results but the
    last one's) share a function, up to 8, called where the last one was. Values the nest
    uses from outside become arguments (constants are cloned in instead,
    so LLVM still sees them), loop results become results.

    Why: LLVM's loop passes (loop strength reduction, scalar evolution,
    unrolling) cost superlinear time in the size of a function; one
    function per kernel keeps compile time linear in model size. Kernels
    are `noinline` so LLVM does not merge them back.

    A nest is left in place when it needs the runtime context: it
    allocates or frees memory, calls a function, or contains an assert.
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

#endif // DISC_TRANSFORMS_PASSES_TD
