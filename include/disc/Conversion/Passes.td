//===- Passes.td - disc lowering passes --------------------*- tablegen -*-===//
#ifndef DISC_CONVERSION_PASSES_TD
#define DISC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def DiscCheckBufferSizes : Pass<"disc-check-buffer-sizes", "mlir::func::FuncOp"> {
  let summary = "Check sizes computed at run time before a tensor is allocated";
  let description = [{
    A `tensor.empty` outside loops whose dynamic sizes are not all dims of
    existing tensors (a size read from a shape tensor, computed from
    padding, slice bounds or a concatenation) gets a `cf.assert` before it:
    every size non-negative and the byte size (element count times the
    element's bytes) within a signed 64-bit integer, without wrapping. A
    violation is a disc.InvocationError naming the op's location instead of
    a buffer smaller than the loops that write it. Sizes that are constants
    or `tensor.dim` of a tensor (checked where that tensor was made) are
    not checked again, and nothing is emitted when no size needs a check.
    Runs right after disc-legalize-to-linalg, before fusion moves the
    allocations into loop nests.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::cf::ControlFlowDialect"];
}

def DiscLowerLibraryCalls : Pass<"disc-lower-library-calls", "mlir::ModuleOp"> {
  let summary = "Lower disc.dot_general, disc.convolution and disc.attention to runtime library calls";
  let description = [{
    Compute-intensive ops never become generated loops: they become calls to
    the runtime (RAL), which runs them with oneDNN on CPU. Operands are
    normalised first (dot_general: transposes only when the layout cannot be
    expressed as a transpose flag; batch/free/contracting dims collapsed to
    3-d). The call operates on buffers: operands through
    `bufferization.to_buffer read_only`, the result in a fresh `memref.alloc`
    returned through `bufferization.to_tensor restrict`. Needs the RAL
    context argument (disc-add-ral-context).

    disc.sort becomes one call of the runtime's stable sort per element
    type (disc_ral_sort_f32, ..._i64), writing fresh values and indices
    buffers.

    disc.attention (f32 only) becomes one call of the runtime's blocked
    attention kernel on the 4-d operands as they are (any strides); without
    a mask the mask slot repeats the result buffer and has_mask is 0.

    A library op with an epilogue calls the `_post_f32` entry point; with
    `half-epilogues` (the cuda target, whose epilogue is cuBLASLt's bias)
    f16 and bf16 ones call `_post_f16` / `_post_bf16`, which
    disc-cuda-library-calls then lowers; without it they are an error (the
    CPU runtime's post-ops are f32 only).
  }];
  let options = [Option<"halfEpilogues", "half-epilogues", "bool", "false",
                        "f16 and bf16 library ops may have an epilogue">];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::func::FuncDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::math::MathDialect",
                           "mlir::tensor::TensorDialect"];
}

def DiscLowerIntegerContractions
    : Pass<"disc-lower-integer-contractions", "mlir::func::FuncOp"> {
  let summary = "Lower integer disc.dot_general and disc.convolution to linalg.generic";
  let description = [{
    oneDNN multiplies f32, f16 and bf16 only. An integer dot_general (int64
    `mm`, `bmm`, `matmul`) becomes one linalg.generic over the batch, free
    and contracting dims; an integer convolution becomes a zero `tensor.pad`
    of the input and one linalg.generic over [N, G, O/G, out spatial...,
    C/G, kernel spatial...], the groups split off the channel dims by
    `tensor.expand_shape`. Products and sums wrap around in the element
    type, as PyTorch's integer kernels do. Float ops are left alone (they
    become library calls), and so are ops with an epilogue. An integer
    convolution with an input dilation (transposed) or a dynamic padding is
    an error naming the op: the importer leaves those to eager. Runs before
    disc-legalize-to-linalg.

    `float-depthwise=1` (the cuda targets) also lowers float depthwise
    convolutions: groups equal to the kernel's output channels, one input
    channel per group (the multiplier 1 of MobileNet's, ConvNeXt's and
    conformer's), no input dilation, a static padding, no epilogue. Each
    becomes one all-parallel linalg.generic over the output whose body
    loops over the window taps (scf.for, any kernel size, static or not),
    reading input and kernel by tensor.extract; a tap in the padding adds
    0 (the input is read under an scf.if only where the tap lies inside
    it, so an input with an empty dim is never read: no padded copy). f16 and bf16
    accumulate in f32, as the libraries do. Elementwise to fusion, so the
    batch norm and activation after it join its kernel. (cuDNN's f32
    depthwise path is slow enough that PyTorch runs its own kernel there.)
    Other float convolutions are left alone.
  }];
  let options = [
    Option<"floatDepthwise", "float-depthwise", "bool", /*default=*/"false",
           "Also lower float depthwise convolutions (multiplier 1) to loop "
           "nests">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::cf::ControlFlowDialect"];
}

def DiscLegalizeToLinalg : Pass<"disc-legalize-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower memory-bound disc ops to linalg/tensor/arith/math/scf";
  let description = [{
    Elementwise, broadcast, reshape, transpose, slice, concatenate, pad,
    iota, reduce, gather and scatter become linalg ops on tensors (or tensor
    ops, or an scf loop nest for scatter). Shape operands are read at run
    time. Where the op semantics require two dynamic dims to be equal, a
    `cf.assert` checks it at run time. dot_general and convolution must have
    been lowered by disc-lower-library-calls; finding one is an error.

    `scatter-window-threads` (the CPU pipeline sets it): a scatter whose
    window covers operand dims that come before every indexed dim and that
    no index names (the N and C of a scatter into [N, C, H, W] at (h, w)
    positions: upsampling's and index_put's backward) becomes an
    `scf.forall` over those dims, each iteration running the whole
    sequential scatter into its own [1, 1, H, W] slice. Distinct
    iterations write distinct elements, the updates of one element still
    combine in order, and each iteration's writes stay within one slice
    (one row of the operand instead of a stride of H*W per update). Off,
    the window is the innermost loop nest (the CUDA target turns the
    batch loop into a grid with atomics instead).
  }];
  let options = [
    Option<"scatterWindowThreads", "scatter-window-threads", "bool",
           /*default=*/"false",
           "Run a scatter's leading unindexed window dims as an scf.forall">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::math::MathDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::cf::ControlFlowDialect"];
}

def DiscRalLowerAsserts : Pass<"disc-ral-lower-asserts", "mlir::ModuleOp"> {
  let summary = "Turn cf.assert into a runtime error report instead of abort()";
  let description = [{
    A failed run-time shape check must become a Python exception, not a
    crashed process. Each `cf.assert` in the entry function becomes a
    conditional branch to a block that calls `disc_ral_fail(ctx, message)`,
    which never returns (the runtime unwinds to the call boundary and
    releases the call's memory).
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect",
                           "mlir::cf::ControlFlowDialect"];
}

def DiscRalLowerThreadScratch
    : Pass<"disc-ral-lower-thread-scratch", "mlir::ModuleOp"> {
  let summary = "Lower disc.thread_scratch to a call of disc_ral_thread_scratch";
  let description = [{
    Each `disc.thread_scratch` becomes a call of the runtime's
    `disc_ral_thread_scratch(slot, bytes)` and the `memref<?xi8>`
    descriptor of the returned pointer (offset 0, size `bytes`, stride 1),
    cast back to the memref type for finalize-memref-to-llvm to consume.
    Runs before finalize-memref-to-llvm; needs no RAL context.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect",
                           "mlir::arith::ArithDialect"];
}

def DiscRalInjectContext : Pass<"disc-ral-inject-context", "mlir::ModuleOp"> {
  let summary = "Route heap allocation in LLVM-dialect code through the RAL";
  let description = [{
    After lowering to the LLVM dialect, calls to malloc/aligned_alloc/free in
    a function with a RAL context argument become
    `disc_ral_alloc(ctx, bytes)` / `disc_ral_free(ctx, ptr)`: every buffer,
    results included, comes from the runtime's caching allocator. With
    `device=cuda` the host code's buffers are device memory instead:
    `disc_ral_cuda_alloc` / `disc_ral_cuda_free` (stream-ordered on the
    call's stream).
  }];
  let options = [
    Option<"device", "device", "std::string", /*default=*/"\"cpu\"",
           "Where the buffers live: cpu or cuda">
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def DiscApproximateMath : Pass<"disc-approximate-math", "mlir::ModuleOp"> {
  let summary = "Replace f32 transcendental math ops by inline polynomial approximations";
  let description = [{
    A `math.exp`/`erf`/`tanh`/... on f32 that reaches LLVM becomes a call to
    the scalar libm function, and a loop containing a call is not
    vectorised: a GELU or softmax kernel then runs 10-20x slower than
    PyTorch's vectorised ATen kernels. This pass rewrites those ops into
    MLIR's upstream polynomial approximations (pure arith, so LLVM
    vectorises the loop around them). Runs after
    math-extend-to-supported-types, so f16/bf16 math is computed in f32
    and approximated too.

    Only ops whose upstream approximation is accurate to a few f32 ulp over
    the whole range are rewritten (`ops` lists them; the test
    `python/tests/test_math_accuracy.py` checks each against PyTorch).
    Others (sin/cos: upstream's range reduction loses ~50 ulp beyond
    |x| = 50; `math.tan`, `math.cbrt`, `math.powf`) and f64 stay
    libm calls.
  }];
  let options = [
    ListOption<"ops", "ops", "std::string",
               "math op names to approximate (default: the accurate set)">
  ];
  let dependentDialects = ["mlir::math::MathDialect", "mlir::arith::ArithDialect",
                           "mlir::vector::VectorDialect"];
}

def DiscLowerFloatMinMax : Pass<"disc-lower-float-min-max", "mlir::ModuleOp"> {
  let summary = "Lower arith float max/min straight to LLVM's intrinsics";
  let description = [{
    `arith-expand` (needed for bf16) rewrites `arith.maximumf` into
    compare + select with explicit NaN handling, a shape LLVM's loop
    vectoriser does not recognise as a max reduction (a softmax row max
    then runs one element at a time). `llvm.intr.maximum` has the same
    semantics (NaN propagates, -0 < +0), is a recognised reduction and
    lowers to vector code. This pass rewrites maximumf/minimumf/maxnumf/
    minnumf on f32/f64 scalars and vectors into `llvm.intr.maximum`/
    `minimum`/`maxnum`/`minnum`; run it before `arith-expand`, after
    f16/bf16 arithmetic has been emulated in f32.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def DiscRalLowerParallelFor : Pass<"disc-ral-lower-parallel-for", "mlir::ModuleOp"> {
  let summary = "Turn calls of outlined parallel loop bodies into disc_ral_parallel_for";
  let description = [{
    Runs on the LLVM dialect. For every function marked
    `disc.parallel_body` (disc-parallelize-loops: arguments lo, hi, work,
    captures..., memref descriptors already expanded), adds a packed entry
    `@<body>_packed(!llvm.ptr args, i64 lo, i64 hi)` that loads the
    captures from the struct at `args` and calls the body on [lo, hi).
    Each call of the body becomes: the captures stored into one stack
    struct, and `disc_ral_parallel_for(@<body>_packed, struct, units,
    work)`. The runtime calls the packed entry once per thread with that
    thread's range, or once on the calling thread for small work; it needs
    no knowledge of the body's signature.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def DiscApplyNoAliasArgs : Pass<"disc-apply-noalias-args", "mlir::ModuleOp"> {
  let summary = "Put llvm.noalias on the arguments disc-mark-noalias-args recorded";
  let description = [{
    Runs on the LLVM dialect, after convert-func-to-llvm. For each
    `llvm.func` with `disc.noalias_llvm_args`, sets `llvm.noalias` on the
    arguments at those positions (the aligned pointers of the memref
    arguments disc-mark-noalias-args marked) and drops the recording
    attributes. A function whose argument count is not the recorded
    `disc.llvm_arg_count`, or whose argument at a recorded position is not
    a pointer, fails the pass: its signature changed after the marks were
    made and they can no longer be trusted.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def DiscLowerStridedCopies : Pass<"disc-lower-strided-copies", "mlir::func::FuncOp"> {
  let summary = "Turn memref.copy with a strided side into a linalg.copy loop nest";
  let description = [{
    Bufferization copies whole buffers with `memref.copy`, e.g. a
    concatenate writing each operand into a subview of the result, or an
    in-place update of a read-only input. Between two contiguous buffers
    that becomes one `memcpy`; when either side is a strided view,
    finalize-memref-to-llvm calls MLIR's generic `memrefCopy`, which copies
    one element at a time through descriptor arithmetic (10% of a GAT run).
    This pass rewrites those copies into `linalg.copy`, which then becomes
    a loop nest like every other kernel (vectorised inner loop, parallel
    outer range). Copies between identity-layout memrefs stay `memref.copy`.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def DiscLowerExpandShape : Pass<"disc-lower-expand-shape", "mlir::func::FuncOp"> {
  let summary = "Lower memref.expand_shape to a reinterpret_cast of its buffer's metadata";
  let description = [{
    Upstream `expand-strided-metadata` (LLVM 22) crashes on a
    `memref.expand_shape` that splits a dim into dynamic sizes (it builds a
    reinterpret_cast from a null size). This pass does that lowering
    itself, right before: `memref.extract_strided_metadata` of the source,
    then `memref.reinterpret_cast` of its base buffer with the source's
    offset, the `output_shape` sizes, and strides from the source's: the
    last dim of each group keeps its source dim's stride, each other dim
    has the next one's stride times the next one's size. Strides and the
    offset that the result type fixes statically are given as constants.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect", "mlir::arith::ArithDialect"];
}

#endif // DISC_CONVERSION_PASSES_TD
