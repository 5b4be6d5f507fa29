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

def DiscVerifyCompilable : Pass<"disc-verify-compilable", "mlir::ModuleOp"> {
  let summary = "Reject programs that verify but cannot be compiled safely";
  let description = [{
    Upstream ops accept some programs that their folders and lowerings
    then take on trust: `tensor.dim`/`memref.dim` with a constant index
    outside the source's rank (a negative one crashes the folder, one past
    the rank reads past the shape at run time), constant indices of
    `tensor.extract`/`tensor.insert` outside a static dim, index constants
    equal to INT64_MIN (MLIR's marker for a dynamic size or offset: folded
    into a static list it turns into a dynamic entry with no value), and
    static tensor types too large to materialise (more than 2^31 - 1
    elements, or an element count that overflows 64 bits), which abort LLVM
    when a constant or buffer of that type is emitted. Each is reported as
    an error at the op, so `disc.compile_mlir` raises CompileError naming
    it. Runs first, before anything folds. Well-formed programs pass
    unchanged.
  }];
}

def DiscFoldEmptyLoops : Pass<"disc-fold-empty-loops", "mlir::func::FuncOp"> {
  let summary = "Replace linalg ops that iterate over a static zero-size dim by their inits";
  let description = [{
    A linalg op on tensors whose iteration domain has a loop of static
    extent 0 runs its body no time: its results are its `outs` operands
    as they are (an elementwise op on an empty tensor gives that empty
    tensor, a reduction over a zero-length dim gives its initial value:
    the sum of nothing is 0, so `sum(x, dim)` of a [4, 0] tensor is its
    zero-filled init). The uses of each result are redirected to the init
    and the op is left for dead-code elimination. Upstream tiling (used by
    stitch fusion) divides by such extents; folding them first keeps
    zero-size programs (a batch of 0, an empty split) compilable. Loops
    whose extent is only known at run time are left alone: a zero extent
    there just runs no iteration.
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

def DiscTieResultsToArguments
    : Pass<"disc-tie-results-to-arguments", "mlir::ModuleOp"> {
  let summary = "Write results into the entry arguments that `disc.result_into` names";
  let description = [{
    For each argument of the `disc.entry` function that carries
    `disc.result_into = r`, result `r` becomes
    `bufferization.materialize_in_destination` of the returned value into
    that argument, and the argument is marked writable. Run right before
    `eliminate-empty-tensors`: the op that computes the value then writes
    it straight into the argument's buffer where one-shot bufferization
    finds no conflict (no later read of the argument's old value), and a
    copy into the argument at the end of the function is made otherwise.
    Either way the call returns with the argument updated and result `r`
    aliasing it. The attribute is removed once applied. Two arguments
    naming one result are an error. Arguments without the attribute keep
    `bufferization.writable = false` (disc-read-only-inputs).
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
    allocations, memory-free ops or `cf.assert` shape checks between them
    (and no results but the last one's) share a function, up to 8, called
    where the last one was (a check then runs before the earlier nests;
    its condition reads no memory they write). Values the nest
    uses from outside become arguments (constants are cloned in instead,
    so LLVM still sees them), loop results become results.

    Why: LLVM's loop passes (loop strength reduction, scalar evolution,
    unrolling) cost superlinear time in the size of a function; one
    function per kernel keeps compile time linear in model size. Kernels
    are `noinline` so LLVM does not merge them back.

    A nest is left in place when it needs the runtime context: it
    allocates or frees memory, calls a function, or contains an assert.
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::LLVM::LLVMDialect"];
}

def DiscPromoteAccumulators
    : Pass<"disc-promote-accumulators", "mlir::func::FuncOp"> {
  let summary = "Keep reduction accumulators in registers (scf.for iter_args)";
  let description = [{
    A reduction lowered to loops reads and writes its accumulator in memory
    on every iteration (`acc[i] = acc[i] + x[i, k]`). LLVM cannot keep it in
    a register when it cannot prove that no other access aliases it, and
    does not vectorise the loop. This pass turns a
    `memref.load %M[idx]` ... `memref.store %v, %M[idx]` pair of an
    `scf.for` body, with `idx` invariant in the loop, into a loop-carried
    value: one load before the loop, one store after it. Applied innermost
    first, so a reduction over several dims is promoted out of every loop
    it is invariant in.

    Only when it is safe: `%M` comes (through views) from a `memref.alloc`
    of this function, and nothing else in the loop touches that allocation
    or has unknown memory effects.

    The combining op (`arith.addf`/`mulf`) gets the `reassoc` fast-math
    flag, so LLVM vectorises the reduction with partial sums (the result
    may differ from a sequential sum in the last bits, as PyTorch's own
    vectorised reductions do). A float max/min (`maximumf`/`minimumf`,
    which propagate NaN and which x86 expands into six instructions each)
    whose running value nothing else reads becomes two carried values: a
    plain `maxnumf`/`minnumf` with `nnan nsz` (one `vmaxps`) and an `i1`
    "a NaN was seen" (the initial value included); after the loop a NaN
    seen selects NaN. Exact in any order, like the max itself. Not with
    `carry-nan-apart=0` (the cuda targets: a GPU has a NaN-propagating max
    instruction, and one carried value keeps a whole-range max one
    reduction the grid mapping parallelises).
  }];
  let options = [
    Option<"carryNanApart", "carry-nan-apart", "bool", /*default=*/"true",
           "Float max/min accumulators: a plain max/min and a NaN flag "
           "(x86) instead of maximumf/minimumf">
  ];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def DiscParallelRowChunks : Pass<"disc-parallel-row-chunks", "mlir::func::FuncOp"> {
  let summary = "Split a column or whole sum into chunks with partial sums that threads share";
  let description = [{
    A plain column sum ([R, C] summed over R: a bias gradient) lowers to
    `scf.for %r { scf.parallel (%c) { acc[c] = acc[c] + v(r, c) } }`:
    disc-parallelize-loops only splits top-level parallel loops, and
    splitting the columns into blocks makes each thread read part of every
    row (slower than one thread). Here, after loops are formed and before
    kernels are outlined, such a top-level nest becomes a parallel loop over
    row chunks, each adding its rows into its own row of a partial-sum
    buffer (`memref.alloc [chunks, C]`, cleared first), then a loop adding
    the chunks' partial sums into the accumulator in chunk order (the
    result does not depend on which thread ran which chunk). chunks =
    clamp(R / 32, 1, 32), decided at run time; each chunk adds its rows four
    at a time (one load and store of its partial sums per four rows).

    Matched only where the row loop has step 1 and no iter_args, its body
    is the 1-d `scf.parallel` alone (lower bound 0, step 1, upper bound
    defined above the row loop), and the parallel body has no loop, call
    or allocation: loads, pure ops and one store, of `addf`/`addi` of one
    load of the stored element and a value that does not depend on it, at
    indices that are the column or defined outside the nest. Float sums
    are reassociated (as the vectoriser's partial sums already are).

    A whole sum (`scf.for %i iter_args(%acc) { yield acc + v(i) }`: one
    carried value used only by the `addf`/`addi`, a body of loads and pure
    ops) is split likewise: clamp(n / 4096, 1, 32) chunks of n / chunks
    elements each summed in a parallel loop into a partial-sum buffer,
    added in chunk order onto the initial value, then the remainder (fewer
    than `chunks` elements) in the original loop.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def DiscParallelColumnBlocks : Pass<"disc-parallel-column-blocks", "mlir::ModuleOp"> {
  let summary = "Run a kernel's sequential loop around a parallel loop over column blocks";
  let description = [{
    A reduction over an outer and an inner dim that keeps a middle one
    (batch norm's backward: [N, C, H*W] summed over N and H*W) lowers to
    `scf.for %n { scf.parallel (%c) { scf.for %hw { ... } } }`:
    disc-parallelize-loops only splits top-level parallel loops, so it ran
    on one thread. In every kernel function (`disc.kernel`) such a top-level
    nest becomes
    `scf.parallel (%b) { scf.for %n { scf.for %c in block %b { ... } } }`:
    the kept dim is cut into blocks of max(16, ceil(n / 8) rounded up to
    16) (about 8 blocks to share between threads), and each block walks
    every %n. [64, 256, 3136] summed over dims 0 and 2: 5.1 ms -> 2.6 ms on
    2 threads.

    Only where each column does a loop of work: a plain column sum (one
    element per column and row) split this way makes each thread read part
    of every row, slower than one thread over whole rows (it needs
    per-thread partial sums over row ranges, not done yet). And only where
    the interchange is legal: the `scf.for` has no iter_args and
    its body is the 1-d `scf.parallel` alone (lower bound 0, step 1, upper
    bound defined above the `scf.for`), the body has no side effects but
    memref loads and stores, and every memref the body stores to is
    accessed, by every load and store in the body, at one same index list
    that holds the column index itself (each column's iterations touch
    only that column's elements).
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::arith::ArithDialect"];
}

def DiscParallelizeLoops : Pass<"disc-parallelize-loops", "mlir::ModuleOp"> {
  let summary = "Run each kernel's outer parallel loop on the runtime's threads";
  let description = [{
    In every kernel function (`disc.kernel`, from disc-outline-loop-kernels)
    each top-level `scf.parallel` (from linalg-to-parallel-loops: one per
    memory-bound op, reductions inside as `scf.for`) is split: all its
    dims but the innermost are linearised into one range of "units" that
    threads share; the innermost dim stays a sequential loop in the body so
    LLVM vectorises it (a 1-d loop is itself the range). The body becomes
    a function `@<kernel>_par<N>(lo, hi, work, captures...)`
    (`disc.parallel_body`) running units [lo, hi); the loop becomes a call
    with lo = 0, hi = the unit count and work = the elements per unit
    (innermost extent times the trip counts of the loops inside: a trip
    count computed in the body, such as a stitch kernel's row length read
    from a subview, is reified before the call by upstream value-bounds
    analysis; one it cannot express counts as 1).
    disc-ral-lower-parallel-for turns that call into the runtime's
    `disc_ral_parallel_for`, which decides at run time, from
    units x work and the thread count, whether to split the range or run
    it on the calling thread (tiny tensors never pay for a parallel launch).

    Left sequential: scf.parallel outside kernels (the entry), nested in
    another loop, with non-zero lower bounds / non-unit steps, or whose
    body calls the runtime (memref.alloc/dealloc, a call, a cf.assert):
    the runtime's per-call state belongs to the calling thread.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::func::FuncDialect", "mlir::LLVM::LLVMDialect",
                           "mlir::arith::ArithDialect", "mlir::affine::AffineDialect"];
}

def DiscMarkNoAliasArgs : Pass<"disc-mark-noalias-args", "mlir::ModuleOp"> {
  let summary = "Mark kernel buffer arguments that overlap no conflicting argument";
  let description = [{
    Puts `disc.noalias` on a memref argument of a kernel (`disc.kernel`)
    or parallel body (`disc.parallel_body`) when, at every call, its buffer
    cannot overlap the buffer of any other memref argument of which one of
    the two is written by the function. Overlap is decided in the caller:
    MLIR's local alias analysis (distinct allocations, or an allocation
    and a function argument, never overlap; views are followed to what
    they view), and inside a kernel, views of two different kernel
    arguments one of which is marked. A write is any use that is not a
    read: views and calls are followed, an op of unknown memory effects
    counts as a write. Two entry arguments, two views of one allocation (a
    concatenate's slices, an in-place update) or one buffer passed twice
    stay unmarked.

    LLVM expands a memref argument into several (allocated and aligned
    pointer, offset, sizes, strides) and drops argument attributes on the
    way, so the pass also records the marked arguments' aligned-pointer
    positions (`disc.noalias_llvm_args`) and the expanded argument count
    (`disc.llvm_arg_count`); disc-apply-noalias-args turns them into
    `llvm.noalias` after the conversion. With it LLVM hoists loads out of
    loops that store elsewhere and vectorises gathers without run-time
    overlap checks.
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def DiscFuseElementwise : Pass<"disc-fuse-elementwise"> {
  let summary = "Loop and input fusion: upstream linalg elementwise fusion with a recompute rule";
  let description = [{
    Upstream `linalg-fuse-elementwise-ops` (the same patterns: producer into
    consumer for generics and reductions, reshapes folded by expansion,
    linalg canonicalizations), with one more condition on fusing a producer
    into a consumer: when the consumer reads the producer's result through
    a broadcast (its indexing map leaves out some of the consumer's loops)
    and the producer is expensive to recompute (a math op such as exp or
    tanh, a division or remainder, or a gather through tensor.extract), the
    producer is not fused. Fused, it would run once per element along the
    broadcast dims; kept apart, it runs once and its (smaller) result is
    read back. Cheap broadcast producers (a bias add, a copy) still fuse.
    As upstream, a producer fuses only when its result has one use, with
    one exception: a producer that is cheap to duplicate (all-parallel,
    not expensive to recompute, and reading only tensors smaller than its
    result: a fill, a broadcast constant or bias) is first copied once per
    fusable consumer. CSE merges, for instance, the broadcast zero of every
    ReLU of one shape into one op; without the copies it would be written
    to memory once and read back by every ReLU kernel.

    With `multi-result`, a producer with several uses also fuses into one
    of its consumers when that consumer iterates over exactly the
    producer's elements (an all-parallel consumer reading the result
    through a permutation: nothing is recomputed) and every other use of
    the producer comes after that consumer in the same block: the fused
    loop computes both and yields the producer's result as well, which
    replaces the producer everywhere. An optimizer step's `exp_avg` (a
    result of the step, and read by the parameter update) is then computed
    in the update's loop instead of a loop of its own that the update reads
    back. A use before the consumer would need the producer's own loop
    (the value would be computed twice), so it prevents this fusion. The
    pipeline enables it after stitch fusion, whose row patterns (softmax's
    `exp` read by its sum and its division) it leaves alone.

    A result nothing uses whose init the payload reads (left by a
    multi-result fusion whose other consumers were fused too: `tril(v)`
    written over v's tensor) is dropped and its init read as an input.
    Upstream's dead-result removal keeps it, and bufferization then copies
    the init for the op to write over: in a stitch kernel, a row copy and a
    row temporary per row.

    With `recompute-broadcasts` (the cuda targets) the recompute rule is
    off: an expensive producer read through a broadcast fuses too and runs
    once per element. On a GPU the ALUs of a memory-bound kernel are idle
    and a kernel launch costs more than the arithmetic: batch norm's
    per-channel `rsqrt(var + eps)` was a kernel of its own before each
    normalisation (20 of ResNet-18's 65 launches).

    On either target, a producer whose payload reads its init (stitch
    fusion writes a row's log-sum-exp, log(sum) + max, over the max's row
    value) does not fuse into a consumer that reads it through a
    broadcast: upstream keeps such a result as a result of the fused op,
    indexed without the broadcast dims, so every element along them would
    rewrite it from the value the previous one wrote.

    `log` prints each fusion refused by the recompute rule or the init
    rule, each duplicated producer and each multi-result fusion.
  }];
  let options = [Option<"log", "log", "bool", "false",
                         "print refused fusions to stderr">,
                 Option<"recomputeBroadcasts", "recompute-broadcasts", "bool",
                        "false",
                        "fuse expensive producers read through a broadcast "
                        "too (recomputed per element)">,
                 Option<"multiResult", "multi-result", "bool", "false",
                        "fuse multi-use producers into their first consumer "
                        "when every other use follows it">];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::affine::AffineDialect",
                           "mlir::tensor::TensorDialect"];
}

def DiscStitchFusion : Pass<"disc-stitch-fusion", "mlir::func::FuncOp"> {
  let summary = "Fuse row reductions and the elementwise stages around them into one loop over rows";
  let description = [{
    Stitch fusion on CPU (DESIGN.md, fusion kinds): a softmax, layer norm or
    RMS norm is several row reductions and elementwise stages over the same
    rows. After upstream elementwise fusion each is still its own loop nest
    with full-size intermediates in memory. This pass picks, last op first,
    every linalg op ("root") whose producers (transitively, through linalg
    ops of this block) include a row reduction: a reduction over its
    innermost loop only. The root is tiled with tile size 1 on all loops
    but its innermost (an `scf.forall` over rows) and its producers are
    fused into the loop with upstream tile-and-fuse
    (`scf::tileConsumerAndFuseProducersUsingSCF`), each computing just the
    row the root needs. The copies tile-and-fuse makes of a producer per
    use are merged (CSE over the function after all groups). A cheap
    stage used twice is then computed twice per row (the elementwise
    fusion that follows merges each copy into its user, so no row-sized
    intermediate is written); an expensive one (a math op, a division, a
    gather: softmax's exp) is computed once into its elementwise user's
    destination, and that user, rewritten to read it through its init,
    overwrites it in place. A producer joins the group only
    when all its users are in it (at most 24 ops), so nothing is computed
    both inside and outside the row loop, and not when it is expensive to
    recompute (a math op, a division, a gather) and a user reads it through
    a broadcast over an outer loop: the row loop would recompute it for
    every row along that loop (swin's position bias, shared by all windows).

    Not fused (the row loop would redo whole reductions per row): a
    reduction over an outer dim (column reduction) or over several dims,
    or any producer whose slice for one row is more than one row (all
    sizes but the innermost must be 1; a reduction's slice must be all 1).

    `log` prints each group to stderr (`DISC_LOG=fusion`).
  }];
  let options = [Option<"log", "log", "bool", "false",
                        "Print each fusion group to stderr">];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::tensor::TensorDialect",
                           "mlir::linalg::LinalgDialect", "mlir::arith::ArithDialect"];
}

def DiscStackLoopTemporaries
    : Pass<"disc-stack-loop-temporaries", "mlir::func::FuncOp"> {
  let summary = "Small fixed-size buffers allocated inside loops go on the stack";
  let description = [{
    A stitch kernel's per-row scalars (a row's max, its sum) are
    `memref.alloc`s of a few elements inside the row loop after
    bufferization. From the runtime allocator that would be a call per
    row, and one that is not made for several threads. Each `memref.alloc`
    inside a loop with a static shape of at most 256 bytes whose uses (and
    the uses of its views) stay inside the allocating region and never
    reach a call or a return becomes a `memref.alloca` in place;
    disc-hoist-static-allocas later gives it a fixed frame slot.

    Allocations outside loops, dynamic or larger ones, and any that escape
    are left to the runtime allocator.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def DiscThreadScratchTemporaries
    : Pass<"disc-thread-scratch-temporaries", "mlir::func::FuncOp"> {
  let summary = "Buffers allocated inside loops come from per-thread scratch";
  let description = [{
    A `memref.alloc` inside a loop body (after disc-stack-loop-temporaries
    has put the small fixed-size ones on the stack) is a row temporary: a
    masked softmax's row of scores, say, of the row's dynamic length. From
    the runtime allocator it costs a call per row (CosyVoice: 37,000 per
    call) and keeps the loop off the runtime's threads, whose allocator
    bookkeeping is per call. Each such allocation whose uses (and its
    views') stay in the allocating region and never reach a call, a
    dealloc or a return becomes `disc.thread_scratch` (bytes, a slot of its
    own in the function) viewed as the original type with `memref.view`:
    the calling thread's reusable buffer. Allocations outside loops, with
    another layout or element type, and escaping ones stay.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect", "disc::DiscDialect"];
}

def DiscCollapseContiguousDims
    : Pass<"disc-collapse-contiguous-dims", "mlir::func::FuncOp"> {
  let summary = "Merge adjacent loop dims of a linalg.generic on buffers that every operand has contiguous";
  let description = [{
    An elementwise op over [N, C, H, W] becomes a loop over N*C rows of W
    elements each; with W = 7 or 14 (the last stages of a CNN) every row is
    too short for the vectorised loop LLVM makes, and each row pays its
    index arithmetic and, for dynamic shapes, the vectoriser's runtime
    checks. This pass merges adjacent iteration dims of each
    `linalg.generic` with buffer semantics into one (upstream
    `linalg::collapseOpIterationDims`, which puts a `memref.collapse_shape`
    view on each operand) when, for every operand, the dims appear next to
    each other and in order in its indexing map (or not at all: a
    per-channel operand [C] lets H and W merge) and its memref type
    guarantees the merged dims are contiguous (an identity layout, or a
    strided one whose strides prove it). [N, C, H, W] + [C] becomes
    [N, C, H*W]; two [N, C, H, W] operands become one dim of N*C*H*W.

    Only dims of the same iterator type merge. Left alone: ops on tensors,
    ops whose body reads `linalg.index` (the merged index would need a
    division per element), maps that are not projected permutations, and
    operands whose layout may have a gap between the dims (a subview).
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect",
                           "mlir::linalg::LinalgDialect"];
}

def DiscHoistStaticAllocas
    : Pass<"disc-hoist-static-allocas", "mlir::func::FuncOp"> {
  let summary = "Move fixed-size stack buffers out of loops to the function entry";
  let description = [{
    A `memref.alloca` inside a loop allocates stack space on every
    iteration (LLVM only treats allocas of the entry block as fixed
    frame slots). Per-row temporaries of stitch kernels (a row's max and
    sum, put on the stack by disc-stack-loop-temporaries) are such
    allocas. Every `memref.alloca` with a static shape and no alignment
    above 64 bytes moves to the start of its function's entry block: the
    buffer is reused by every iteration, which is what a fresh
    (uninitialised) buffer per iteration allows.

    Run after disc-parallelize-loops: a loop body the runtime runs on
    several threads is its own function by then, so each thread gets its
    own buffer. Loops still in a function run sequentially. Dynamic-size
    allocas stay where they are.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def DiscFuseLibraryEpilogues
    : Pass<"disc-fuse-library-epilogues", "mlir::func::FuncOp"> {
  let summary = "Fold the elementwise ops after a matmul/convolution into its library call";
  let description = [{
    Library ops with epilogues (DESIGN.md, fusion kinds): the chain of
    elementwise ops that consumes a dot_general's or convolution's result
    becomes the op's `epilogue`, which oneDNN applies as post-ops while the
    result is still in registers: one library call instead of a call and a
    loop kernel that reads the result back.

    The chain follows single uses from the library op's result and takes,
    in order:
    - `add`, `subtract`, `multiply`, `divide` with the chain value on the
      left (either side when commutative) and an other operand that is a
      broadcast (of a bias, a batch norm's mean, scale or shift, a scalar)
      or, for dot_general, a tensor of the result's shape (a residual). For
      a convolution the operand must be per-channel or scalar; for a
      dot_general its dims within each group the call merges (batch, lhs
      free, rhs free) must be all broadcast or all full. The operand
      becomes an epilogue operand of the result's rank with size-1 dims
      where it is broadcast;
    - `logistic`, `tanh`, SiLU (`x * logistic(x)`) and exact GELU
      (`x * 0.5 * (1 + erf(x * M_SQRT1_2))`), recognised across the value's
      two uses.
    Never fused: `maximum`, `minimum` and `clamp` (so ReLU, ReLU6,
    hardtanh): oneDNN's relu, clip and binary max/min post-ops turn a NaN
    into a number (x86 vmaxps/vminps), where PyTorch propagates it. The
    `relu`, `clamp`, `maximum` and `minimum` epilogue steps stay in the
    dialect for IR that accepts oneDNN's NaN behaviour.
    An inference batch norm after a convolution is subtract, multiply,
    multiply, add with per-channel operands: it is folded into the
    convolution's call this way, without changing the weights (which are
    call arguments and may change between calls).

    Not fused: other element types than f32; chains that go through a
    reshape, a convert or another block; operands whose shape cannot be
    proved to match (the shape analysis decides); more than 6 operands
    (the runtime's limit).

    Profitability (without `all`): with oneDNN 2.6 on x86, a convolution
    keeps its speed with a bias, an activation and at most two binary
    post-ops, while a batch norm's four per-channel post-ops slow its
    kernels by more than the loop kernel they replace costs, and matmul
    post-ops run as a separate pass inside oneDNN's gemm. So only
    convolutions whose whole chain has at most two binary steps are fused;
    `all` fuses every chain (tests, experiments: DISC_LIBRARY_EPILOGUES=all).

    `log` prints each library op's epilogue and why its chain stops.

    `cublaslt` (the cuda target): what cuBLASLt's epilogues compute, and
    nothing else. A dot_general (f32, f16 or bf16: cuBLASLt adds the bias
    in f32 before it rounds the product once) takes one `add` of a bias,
    an operand that is broadcast over the batch and lhs free dims and has
    the rhs free dims (cuBLASLt's CUBLASLT_EPILOGUE_BIAS: one value per
    output column, packed in memory). The bias must not come from a slice
    (looked through reshapes), whose buffer may be a strided view; function
    arguments and computed tensors are packed. The chain stops after it:
    cuBLASLt does not document what its ReLU does with a NaN (the rule
    above: never fuse what may drop one), and its GELU is the tanh
    approximation.
    Convolutions get no epilogue (cuDNN's fused forms are not used yet).
    Always profitable: the bias is added where the product is written.
  }];
  let options = [Option<"log", "log", "bool", "false",
                         "print each epilogue to stderr">,
                 Option<"all", "all", "bool", "false",
                        "fuse every chain, profitable or not">,
                 Option<"cublaslt", "cublaslt", "bool", "false",
                        "only what cuBLASLt's epilogues do (a bias add of "
                        "a dot_general)">];
  let dependentDialects = ["mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect"];
}
def DiscTransposeAfterCollapse
    : Pass<"disc-transpose-after-collapse", "mlir::func::FuncOp"> {
  let summary = "Collapse dims before a transpose instead of after it";
  let description = [{
    `q @ k.transpose(-2, -1)` on 4-d tensors reaches DISC as a transpose
    of k followed by a reshape that merges the batch and head dims (how
    PyTorch's matmul decomposes into bmm), so the transpose feeding the
    dot_general is not visible to its canonicalizer and is copied on
    every call. When a reshape only merges dims that the transpose keeps
    adjacent and in order, as proved by the shape analysis's reshape
    groups (ShapeConstraints::reshapeGroups), the reshape is applied to the
    transpose's operand first and a transpose of the (lower-rank) result
    replaces it:
    `reshape(transpose(k[B,H,S,D], [0,1,3,2]), [B*H,D,S])` becomes
    `transpose(reshape(k, [B*H,S,D]), [0,2,1])`, which dot_general then
    folds into its dimension numbers. A dynamic_reshape's shape operand
    is permuted to match; `disc.dims` follow their dims.

    Not rewritten: reshapes that expand or keep the rank, and groups whose
    dims the transpose reorders or separates (merging them needs the copy).
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect"];
}

def DiscDecomposeAttention
    : Pass<"disc-decompose-attention", "mlir::func::FuncOp"> {
  let summary = "disc.attention as two batched products around a softmax";
  let description = [{
    For targets without an attention library call (the cuda targets: the
    CPU's is the runtime's blocked attention). Each `disc.attention`
    becomes what PyTorch's math path computes, with the CPU kernel's
    conventions:

    - `scores = dot_general(q, k^T) * scale (+ mask)`, [B, H, L, S],
      batched over B and H; the scale is 1 / sqrt(E) when the op has none
      (computed at run time for a dynamic E); the mask is broadcast from
      its dims of 1; `causal` sets scores with j > i to -inf (iota
      compare and select);
    - the softmax in f32 (f16/bf16 scores are converted) through each
      row's log-sum-exp, `m = max(s)`, `lse = m + log(sum(exp(s - m)))`,
      `p = exp(s - lse)` (each exponential used once, so the stitch
      kernel needs no row-sized temporary when p is converted back to
      f16/bf16), then `out = dot_general(p, v)`. A row whose scores are
      all -inf is shifted by 0 and its sum of 0 counts as 1, so it is 0
      (the CPU target's attention gives 0 there); a NaN score makes its
      row NaN; no keys at all give 0;
    - grouped-query heads (key/value heads Hk dividing the query heads H):
      key and value are broadcast to [B, Hk, H / Hk, S, E] and reshaped to
      [B, H, S, E] (query head h reads key/value head h / (H / Hk)), with
      a run-time check that Hk divides H when either is dynamic. Static,
      equal head counts keep key and value as they are.

    The products become library calls (cuBLASLt on cuda) and the softmax a
    stitch kernel, as the fusion passes do for any such graph.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::cf::ControlFlowDialect",
                           "mlir::math::MathDialect",
                           "mlir::tensor::TensorDialect"];
}

def DiscScatterWindowIndices
    : Pass<"disc-scatter-window-indices", "mlir::func::FuncOp"> {
  let summary = "Scatter windows along dims whose index component is an iota";
  let description = [{
    `torch.scatter_add(x, dim, index, src)` (and scatter, scatter_reduce)
    address one element per update: the front end builds, for every
    element of `index`, a full coordinate vector, `index`'s value at `dim`
    and an iota for each other dim, concatenated into an int64 tensor of
    `index.numel() * rank` elements. Graph code (PyTorch Geometric's
    message passing) scatters rows with an `index` expanded from a vector
    (`idx.view(-1, 1).expand_as(src)`), so that tensor is written and read
    on every call although only `idx` carries information.

    When the index vector names every operand dim once and a batch dim's
    component is an iota along that dim while every other component is
    constant along it (a splat, an iota along another dim, a broadcast
    that expands or adds the dim, elementwise ops of those), the dim
    becomes an update window dim (StableHLO: the window starts at 0 along
    its operand dim). The remaining components are sliced at position 0
    of the window dims and form a smaller index tensor:
    `scatter(x[1000x256], concat(bcast(idx), iota_1)[Nx256x2], src[Nx256])`
    becomes `scatter(x, idx[Nx1], src, update_window_dims = [1],
    inserted_window_dims = [0])`. Updates, result and the combination
    order are unchanged.

    Not rewritten: scatters that already have window dims, indices not
    built by a concatenate of reshaped components along the index vector
    dim, components whose sizes the shape analysis cannot prove equal to
    the batch shape, dims with two iota components or a component that
    varies along them, windows whose operand dims would come out of order,
    and scatters whose every component is an iota (no index left).
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect"];
}

def DiscFreeAfterLastUse
    : Pass<"disc-free-after-last-use", "mlir::func::FuncOp"> {
  let summary = "Free each runtime buffer right after its last use";
  let description = [{
    Memory planning for dynamic shapes. Sizes are symbolic, so buffers
    cannot be packed into a static arena at compile time; instead every
    `memref.alloc` gets a `memref.dealloc` right after the last op that
    uses it (or one of its views), and the runtime's caching allocator
    hands the freed block to the next allocation of the same size bucket.
    Intermediates of a long chain of kernels and library calls then reuse
    a few blocks (a recently written, cache-warm one first) instead of
    staying alive until the end of the call.

    Liveness is per block: an op's position is that of its ancestor in
    the allocating block, so a use inside a loop keeps the buffer alive
    for the whole loop. A buffer is left alone (the runtime frees it at
    the end of the call, or hands it to the caller) when it or a view of
    it reaches a terminator (a return, a yield, a branch), is turned into
    a pointer or integer address, is used in another block of a
    multi-block region, or already has a `memref.dealloc`. Any op that
    takes the buffer and returns a memref (a view, a cast, a call) is
    assumed to return an alias, whose uses count as uses of the buffer.
    An address taken only to be tested (the vector grids compute address
    % 16 to pick a variant) is not an escape: only arithmetic and the
    conditions computed from it read it.
    Calls and library calls that take it must not keep it past their
    return, which holds for the runtime's functions and the kernels.

    Run after the kernels are outlined (the uses in the entry function are
    then calls) and before lowering to LLVM.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def DiscProfileCalls : Pass<"disc-profile-calls", "mlir::ModuleOp"> {
  let summary = "Time every kernel, library call and copy of the entry (DISC_PROFILE=1)";
  let description = [{
    Per-kernel timing for `DISC_PROFILE=1` (docs/debugging.md). In the
    function marked `disc.entry` (after disc-outline-loop-kernels), every
    call of a loop kernel (a `disc.kernel` function), every library call
    (a `disc_ral_*` function other than the profiling hooks) and every
    `memref.copy` is bracketed by
    `disc_ral_profile_begin(ctx, name)` / `disc_ral_profile_end(ctx, name)`,
    where `name` is a constant string "<kind> <callee> at <file:line:col>"
    (the location of the call, i.e. of the op it came from in the imported
    MLIR). The runtime adds up calls and wall time per name.

    Not instrumented: calls in other functions (a kernel's parallel bodies
    are timed as part of their kernel), calls of functions that are neither
    kernels nor library entry points, and an entry without a RAL context
    argument (a diagnostic: run disc-add-ral-context first).
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect",
                           "mlir::func::FuncDialect"];
}

#endif // DISC_TRANSFORMS_PASSES_TD
