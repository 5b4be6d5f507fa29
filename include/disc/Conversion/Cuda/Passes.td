//===- Passes.td - disc passes of the CUDA target -----------*- tablegen -*-===//
#ifndef DISC_CONVERSION_CUDA_PASSES_TD
#define DISC_CONVERSION_CUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def DiscMapLoopsToGpu : Pass<"disc-map-loops-to-gpu", "mlir::ModuleOp"> {
  let summary = "Map each loop nest of the host function to a block/thread grid";
  let description = [{
    After bufferization every memory-bound op is a loop nest on memrefs in
    the entry function (the host code). On a GPU, host code must not touch
    device memory, so this pass turns every nest into a grid of GPU threads
    that upstream `convert-parallel-loops-to-gpu` then makes a `gpu.launch`:

    - An outermost `scf.parallel` over dims with trip counts n0..nk-1
      becomes `scf.parallel (%bx) = 0 to ceildiv(n0*..*nk-1, B)` mapped to
      `block_x`, around `scf.parallel (%tx) = 0 to B` mapped to `thread_x`;
      the thread's linear index `bx * B + tx` is guarded against the total
      and delinearised (innermost dim fastest) into the original induction
      variables. The grid size is computed on the host from the shapes.
      A loop whose total is the constant 1 gets B = 1.
    - Inside a mapped nest, inner `scf.parallel` loops (a stitch kernel's
      per-row stages) become sequential `scf.for` nests: one thread runs
      one row.
    - A column reduction, a sequential loop around a parallel loop whose
      iterations each update their own elements (`x.sum(0)`; `x.mean(1)`
      inside a parallel loop over the batch), becomes one parallel loop
      over the outer and inner dims around the sequential loop
      (ColumnLoops.h): one thread per output element, consecutive threads
      on consecutive elements, instead of one thread for everything (host
      code) or one per batch. Where every element the loop updates is an
      accumulator (`e = combine(e, x)`), the thread carries it in a
      register (loaded before its loop, stored after), and, when
      `column-threads` > 0 and the combiners have identities (float sums
      count as reassociable), the nest gets a second variant chosen per
      call: each column's rows split into parts, `scf.parallel (%p,
      columns)` reducing part %p from the identities into a buffer, then
      `scf.parallel (columns)` combining each column's parts in order;
      taken when min(ceildiv(column-threads, columns), ceildiv(rows, 32),
      64) parts is 2 or more. Each call notes its choice
      (`disc_ral_note_variant(4 | 5)`).
    - A reduction that keeps a middle dim (`x.sum((0, 2, 3))`: a host
      `scf.for` over N around a `scf.parallel` over C of row reductions
      over H*W, whose elements do not move with N) becomes one
      `scf.parallel` over C whose row loop runs over the N*H*W elements in
      the original order (ColumnLoops.h): a row kernel, instead of the
      one-thread grid host code touching memory gets.
    - A row kernel (a parallel loop over rows whose body is a sequence of
      reductions over the row, `scf.for` loops whose iteration arguments
      are each combined by one associative, commutative op, and stages over
      the row, `scf.parallel` loops that write no stack buffer, with
      region-free ops between them) also gets a block-per-row variant:
      `scf.parallel` over rows mapped to `block_x` and marked
      `disc.row_block`, whose reductions and stages are each a
      `scf.parallel` over the block's threads mapped to `thread_x`
      (a reduction: each thread reduces iterations t, t + T, ... from the
      combiner's identity, `scf.reduce` combines the threads, then the
      loop's initial value is combined in). T is a multiple of 32 in
      [32, 256], about four elements per thread, computed on the host from
      the longest phase's trip count. With `row-variant=auto` the host
      picks per call: rows of 32 elements or more one per block, shorter
      ones one per thread (a row length that depends on the row: one per
      thread). A third variant runs one row per warp, 8 rows per block
      (`disc.row_warp`: blocks over groups of 8 rows, `scf.parallel` over
      the warps mapped to `thread_y`, a row guard, thread loops of 32
      lanes); `auto` takes it for rows of 32 to 128 elements, and of up to
      1024 when there are 2048 rows or more. `thread`, `warp` and `block`
      force a variant (tests, A/B runs). Each call of a row kernel calls
      `disc_ral_note_variant(0 | 1 | 6)` (thread, block, warp), counted in
      `disc.stats()`. `disc-row-blocks-to-gpu` lowers the block and warp
      variants; run as ordinary loops (the CPU), they compute what the
      original does.
    - With `row-vectors`, each phase of the block and warp variants whose
      accesses allow it (RowKernels.h, RowVectorPlan: one dim from 0 step
      1, a host trip count, a straight-line body, loads/stores of the row
      through views that keep it contiguous from an identity-layout
      buffer) also gets a vector path: thread t runs elements 4t .. 4t + 3,
      4(t + T) .., with `vector.load`/`vector.store`, a reduction one
      partial result per lane combined after its loop. The host computes
      per call whether every such trip count is a multiple of 4 and every
      such buffer is aligned for the vector (rows too), notes it
      (`disc_ral_note_variant(9 | 10)`) and passes it as an index; each
      planned phase branches on it (uniform across the row's threads).
    - With `row-cache-bytes` > 0, a row kernel whose phases touch the row
      of a buffer more than once (RowKernels.h, RowCachePlan: the same
      view and row-level indices, phases over the same host-known length
      from 0 step 1, straight-line bodies, no other access to the buffer)
      also gets block and warp nests that keep that row in a row cache
      (`memref.alloc` marked `disc.row_cache` in the row's body): the
      first phase reads the buffer and fills the cache, later phases read
      the cache, only the last phase that writes the row writes the
      buffer. The host takes them per call when one block's caches (each
      rounded up to 16 bytes; 8 rows a block for the warp variant) fit in
      `row-cache-bytes`, and notes the choice
      (`disc_ral_note_variant(11 | 12)`); `disc-row-blocks-to-gpu` puts
      the caches in dynamic shared memory. The uncached kernel (rows too
      long for the caches) has no vector path. With `auto`, rows whose
      8-row warp block does not fit run one per block, so the warp variant
      has only its cached kernel.
    - An elementwise grid over two or more dims (its delinearisation
      divides) delinearises in i32 when every thread's linear index is at
      most `index32-limit` (2^31 - 1): the host computes the choice, notes
      it (`disc_ral_note_variant(7 | 8)`) and passes it to the grid as an
      index (1 or 0), where an `scf.if` yields the induction variables
      from i32 divisions and remainders (widened back to index) or from
      index ones. A uniform branch, not a second kernel: on a GPU a 32-bit
      division is a fraction of a 64-bit one.
    - A `memref.copy` of the host code becomes a parallel copy nest.
    - Memory accesses of the host code outside any parallel loop (a
      reduction of a whole tensor to a scalar: `memref.store`, `scf.for`,
      `memref.load`) run as one single-thread grid, in program order with
      the grids around them; a stack buffer (`memref.alloca`) of the host
      code becomes a device allocation.
    - A constant of the host code (`memref.get_global`, which lives in host
      memory) becomes a device buffer filled by a copy grid that reads the
      global inside the kernel; kernel outlining clones the global into the
      kernel's module.

    Library calls (`disc_ral_*`) of the host code stay where they are,
    between the grids. Errors name the op: a loop nest that allocates heap
    memory or calls an external function, or a device value the host code
    needs (a data-dependent shape), is not supported on the GPU.

    With `B` = `block-size` (default 256). The result runs on the CPU too
    (the mapping attributes are ignored there): the CPU pipeline with this
    pass inserted (target "cuda-emulated") checks the index arithmetic of
    the mapping without a GPU.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block of the mapped grids">,
    Option<"rowVariant", "row-variant", "std::string", /*default=*/"\"auto\"",
           "Row kernels: auto (chosen per call), thread, warp or block">,
    Option<"rowUnroll", "row-unroll", "int64_t", /*default=*/"4",
           "Block-per-row kernels: each thread's loop over its part of a "
           "phase unrolled by this factor (1: not unrolled)">,
    Option<"vectorize", "vectorize", "bool", /*default=*/"true",
           "Give elementwise grids a variant of four iterations per thread "
           "with vector loads and stores">,
    Option<"linearLanes", "linear-lanes", "bool", /*default=*/"true",
           "The vector variant may run four consecutive iterations of the "
           "whole nest per thread (crossing rows) where rows of four do "
           "not suit it: a row length not known to be a multiple of four">,
    Option<"rowVectors", "row-vectors", "bool", /*default=*/"true",
           "Give the phases of block- and warp-per-row kernels a vector "
           "path (four consecutive elements per thread and step, vector "
           "loads and stores), chosen per call by the host">,
    Option<"rowCacheBytes", "row-cache-bytes", "int64_t",
           /*default=*/"40960",
           "Row kernels' block and warp variants keep rows their phases "
           "touch more than once in shared memory when one block's rows "
           "take at most this many bytes (0: never; at most 45056)">,
    Option<"reductionSlots", "reduction-slots", "int64_t", /*default=*/"4096",
           "Whole-range reductions: the most parts (each a row of the "
           "parts kernel, its result a slot) they are cut into (0: "
           "threads whose atomics go to the result itself)">,
    Option<"log", "log", "bool", /*default=*/"false",
           "Print to stderr each loop left to a one-thread grid">,
    Option<"columnThreads", "column-threads", "int64_t", /*default=*/"65536",
           "Column reductions with fewer columns than this: a variant that "
           "splits each column's rows into parts, for about this many "
           "threads (0: one thread per column always)">,
    Option<"index32Limit", "index32-limit", "int64_t",
           /*default=*/"2147483647",
           "Elementwise grids over two or more dims delinearise in 32 bits "
           "when every thread's linear index is at most this (0: never; at "
           "most 2^31 - 1)">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect"];
}

def DiscForwardHostScalars
    : Pass<"disc-forward-host-scalars", "mlir::func::FuncOp"> {
  let summary = "Forward values the host computes through one-element "
                "buffers to their loads";
  let description = [{
    On the GPU targets every load or store of device memory left in the
    host code runs as a one-thread kernel (disc-map-loops-to-gpu): a
    reduction's zero-filled accumulator copied into its result buffer, or a
    mean's element count stored and read back, costs a launch each (a
    group norm of batch 1 had six such launches). Before the mapping, for a
    one-element `memref.alloc` of the function's body whose only uses are
    loads, stores, copies and deallocs:

    - a value stored at the function's top level that the host computes
      without reading memory (constants, shape arithmetic, function
      arguments of scalar type) replaces the loads that follow, at the top
      level or nested in later ops (a kernel's body then takes it as an
      argument), until an op that may write the buffer; a copy into the
      buffer carries the source buffer's forwarded value;
    - a top-level store or copy into the buffer that nothing reads before
      the next top-level write is dropped;
    - a buffer nothing reads any more is erased with its stores, copies
      and deallocs.

    Values read from memory are never forwarded (the host does not hold
    them), nor are loads in an op that also writes the buffer.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def DiscHoistLoopTemporaries
    : Pass<"disc-hoist-loop-temporaries", "mlir::func::FuncOp"> {
  let summary = "Row temporaries of loop nests become slices of one buffer "
                "allocated before the nest";
  let description = [{
    A stitch kernel whose row needs a buffer of the row's length (a value
    that both the row's reduction and a later elementwise stage read) has
    a `memref.alloc` of the row's size inside its row loop after
    bufferization. The CPU gives it per-thread scratch
    (disc-thread-scratch-temporaries); a GPU kernel cannot allocate. For
    each `memref.alloc` inside a loop nest that is a loop temporary (numbers
    in the identity layout; every use, through views, stays in the
    allocating block and none frees it, calls with it or returns it) whose
    enclosing ops up to the function are `scf.parallel` and `scf.for`
    loops, and whose sizes and enclosing parallel loops' bounds are
    defined before the outermost loop:

    - host code before the outermost loop allocates one byte buffer of
      (the enclosing parallel loops' trip counts, multiplied) slices, each
      the temporary's bytes rounded up to 64 (`disc.loop_temporaries`
      marks it);
    - the allocation becomes `memref.view` of the slice of its iteration
      (the linear index of the enclosing parallel loops' iterations, outer
      first), of the same type: nothing else changes. Iterations of an
      enclosing `scf.for` run one after another on one thread and share
      their slice.

    disc-map-loops-to-gpu may then keep such a row in shared memory (a row
    cache), where the buffer's row is never written. An allocation that
    does not qualify is left as it is (disc-map-loops-to-gpu then names
    it). Run by the cuda targets only, before the loop mapping.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect"];
}

def DiscIfResultsToBuffers
    : Pass<"disc-if-results-to-buffers", "mlir::func::FuncOp"> {
  let summary = "A host-level scf.if writes the buffers it would yield";
  let description = [{
    A host-level `scf.if` that yields buffers has the host choose a buffer
    by its condition; on the GPU targets a condition read from device
    memory (a scatter of one update whose loop folded away: the window
    check picks the updated copy or the operand) cannot be known to the
    host. For each `scf.if` of the function's body with an else branch and
    buffer results, each buffer result becomes one `memref.alloc` made
    before the if, which both branches write:

    - an allocation a branch makes and yields once, of the result's type,
      becomes that buffer;
    - any other buffer a branch yields is copied into it (`memref.copy`).

    The if keeps only its other results; disc-map-loops-to-gpu then runs
    it, with its loads and copies, in a one-thread grid. Dynamic sizes
    come from an allocation a branch yields (sizes defined before the if)
    or from a buffer defined before the if (`memref.dim`), and must be
    provably equal in both branches (the same value or the same dim of one
    buffer). An if is left as it is (disc-map-loops-to-gpu then names the
    host's use of its result) when a buffer result has a layout or sizes
    not known that way, or when a branch allocates a buffer it does not
    yield (that would allocate inside a kernel). Run by the cuda targets
    only, right before the loop mapping.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def DiscCudaSortLoops : Pass<"disc-cuda-sort-loops", "mlir::ModuleOp"> {
  let summary = "Replace the sort library call with a bitonic sort per line, "
                "one block per line";
  let description = [{
    The GPU targets' `sort`: a call of `disc_ral_sort_<type>(ctx, input,
    values, indices, dim, descending)` (disc-lower-library-calls; its
    buffers through `memref.cast`s, `dim` and `descending` constants)
    becomes a block-per-row nest (`scf.parallel` marked `disc.row_block`,
    which disc-row-blocks-to-gpu turns into `gpu.launch`), one block per
    line along `dim`. It runs after disc-map-loops-to-gpu (which keeps
    library calls of the host code and would take the nest's step loops
    for a column reduction's):

    - a thread loop copies the line into `values` and its positions into
      `indices`;
    - then log2(P) stages (P the power of two at or above the line's
      length n), stage s over blocks of 2^(s+1) positions: a thread loop
      compares each position of a block's lower half with its mirror,
      then one thread loop per distance 2^(s-1) .. 1 compares i with
      i + distance. Each thread runs compare-exchanges t, t + T, ... of
      the P / 2 of a step (T threads: P / 2 in multiples of 32, 32 to
      256, as the row kernels).

    A compare-exchange puts the element that goes first at the lower
    position: by value, NaN above every number (last ascending, first
    descending), equal values by their input position, so the result is
    the stable sort's; booleans compare unsigned. Positions n .. P - 1 are
    padding above every element: a comparison with one is skipped, and
    padding never moves. The steps' loops (`scf.for` over stages and
    distances, the same trip counts for every thread) hold the thread
    loops; disc-row-blocks-to-gpu puts a barrier after each thread loop.

    Signless integers and floats; anything else is an error naming the
    call. The element type's comparisons run in it (f16, bf16 included).
    The sort declarations left without callers are erased.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::math::MathDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def DiscRowBlocksToGpu : Pass<"disc-row-blocks-to-gpu", "mlir::func::FuncOp"> {
  let summary = "Lower block- and warp-per-row nests to gpu.launch with "
                "block- or warp-wide reductions";
  let description = [{
    Upstream `convert-parallel-loops-to-gpu` accepts side effects only in
    the innermost loop and no reductions, so the block-per-row nests of
    `disc-map-loops-to-gpu` (`scf.parallel` marked `disc.row_block`) are
    lowered here, before it:

    - the nest becomes `gpu.launch` with one block per row and as many
      threads as its thread loops run (all of them run the same count);
      every thread runs the row-level ops (they compute one value for the
      whole block; stack buffers are per thread and all threads write the
      same values to them);
    - each thread loop's body runs with the thread id; its `scf.reduce`
      becomes one `gpu.all_reduce` per result with the combiner as its
      region (i1/i8/i16 values are reduced as i32, f16/bf16 as f32: what
      warp shuffles move);
    - `gpu.barrier` separates a thread loop that writes memory from what
      follows, and row-level stores from the next thread loop;
    - a step loop (`scf.for` without results in the row's body, its
      bounds the same for every thread: disc-cuda-sort-loops' stages)
      stays a loop that every thread runs, its body lowered the same way
      (a barrier at the end of an iteration whose row-level stores
      nothing synchronized yet).

    A warp-per-row nest (`disc.row_warp`: blocks over row groups, an
    `scf.parallel` over the group's warps mapped to `thread_y`, a row guard
    `scf.if`, thread loops of 32 lanes inside it) becomes `gpu.launch` with
    32 x R threads per block: `thread_y` the warp, `thread_x` its lane. The
    guard stays (it is the same for all lanes of a warp); each `scf.reduce`
    becomes a butterfly of five `gpu.shuffle xor` steps with the combiner
    (every lane ends with the row's result), and `nvvm.bar.warp.sync`
    takes the place of `gpu.barrier` (no shared memory, no block barrier).

    A row cache (`memref.alloc(%n)` marked `disc.row_cache` in the row's
    body, %n a host value) becomes a slice of the block's dynamic shared
    memory (`gpu.dynamic_shared_memory`, `memref.view`): cache by cache in
    the body's order, each its bytes rounded up to 16, one slice per row of
    the block (a warp's at thread_y times the bytes); its dealloc goes, and
    the launch's `dynamic_shared_memory_size` is the block's total.

    Run on the CPU (target cuda-emulated) the nest stays loops; this pass
    is only for the GPU.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::NVVM::NVVMDialect",
                           "mlir::scf::SCFDialect"];
}

def DiscCudaLibraryCalls : Pass<"disc-cuda-library-calls", "mlir::ModuleOp"> {
  let summary = "Point library calls at the RAL's CUDA implementations";
  let description = [{
    Runs right after disc-lower-library-calls in the cuda pipeline. A call
    of `disc_ral_matmul_<f32|f16|bf16>` (dot_general) becomes a call of
    `disc_ral_cuda_matmul_<...>` with the same operands: cuBLASLt on the
    call's stream, operands in device memory; `disc_ral_matmul_post_<...>`
    (a dot_general with a bias epilogue, disc-fuse-library-epilogues
    `cublaslt`) becomes `disc_ral_cuda_matmul_bias_<...>` with the bias
    alone (the steps constant does not reach the runtime). A call of
    `disc_ral_conv_<...>` becomes `disc_ral_cuda_conv_<...>` (cuDNN) and
    `disc_ral_conv_backward_weights_<...>` becomes
    `disc_ral_cuda_conv_backward_weights_<...>` (cuDNN's backward filter)
    when its parameters are constants without input dilation and with equal
    low and high padding; otherwise it is an error naming the op. A call of
    `disc_ral_sort_<...>` stays for disc-cuda-sort-loops (generated code,
    after the loop mapping). Every other library call (attention,
    convolutions with epilogues) is an error naming the op: the cuda
    target does not support it yet.
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def DiscDeduplicateGpuKernels
    : Pass<"disc-deduplicate-gpu-kernels", "mlir::ModuleOp"> {
  let summary = "One gpu.module for each set of identical outlined kernels";
  let description = [{
    Runs after `gpu-kernel-outlining` (one `gpu.module` per launch) and
    before `disc-merge-gpu-modules`. Networks repeat their blocks, and with
    dynamic shapes the kernels of two blocks are often the same code:
    yolo11n-pose's largest partition outlines 324 kernels of 70 kinds. Each
    copy cost an LLVM NVPTX compile and a ptxas run per chip. A module whose
    body prints the same as an earlier one's (its ops without locations,
    its attributes other than its name) is a duplicate: its launches are
    pointed at the earlier module and it is erased. An assertion's location
    becomes the file and line a failing kernel reports, so modules that
    assert keep apart unless their assertions' locations are the same too.
    A duplicate that something other than a `gpu.launch_func` names is
    kept. With `log`, the count is written to stderr (DISC_LOG=fusion).
  }];
  let options = [
    Option<"log", "log", "bool", /*default=*/"false",
           "Write how many kernels were duplicates to stderr">
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def DiscMergeGpuModules : Pass<"disc-merge-gpu-modules", "mlir::ModuleOp"> {
  let summary = "Merge the outlined kernels' gpu.modules into a few";
  let description = [{
    Runs after `gpu-kernel-outlining`, which makes one `gpu.module` per
    kernel: `gpu-module-to-binary` then runs ptxas once per module and
    chip (GraphNet's Fast-SCNN: 241 kernels, 482 ptxas runs, 9.6 of its
    10.6 s of compilation), and the runtime loads one CUDA module per
    kernel. This pass moves the kernels of consecutive modules, at most
    `kernels-per-module` of them, into the first module of each group:
    each `gpu.func` is renamed after the module it came from (outlining
    names the modules uniquely and every kernel alike), and each
    `gpu.launch_func` is pointed at its merged module. Other symbols of the
    modules (helper functions of `convert-math-to-funcs`, constants cloned
    by outlining) are clones of one host symbol: one copy is kept per
    merged module; two different symbols of one name are an error. Modules
    with different attributes (targets attached already) are not merged.
    A few modules rather than one: `disc-gpu-module-to-binary` serialises
    every (module, chip) pair on a thread of its own, and one module of
    hundreds of kernels (swin_v2_t: 700 loop kernels, 9.4 s per chip) is
    one long LLVM and ptxas run.
  }];
  let options = [
    Option<"kernelsPerModule", "kernels-per-module", "int64_t",
           /*default=*/"64", "Kernels in one merged module at most">
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def DiscGpuModuleToBinary
    : Pass<"disc-gpu-module-to-binary", "mlir::ModuleOp"> {
  let summary = "gpu-module-to-binary with the targets serialised in parallel";
  let description = [{
    Does what upstream `gpu-module-to-binary` does (each `gpu.module`
    becomes a `gpu.binary` with one object per target attribute, in the
    targets' order), but serialises the targets of a module on the
    context's threads: each target gets a clone of the module, and the
    clones go through LLVM's NVPTX code generation and ptxas at once. With
    two chips (sm_80, sm_90) that is two ptxas runs in parallel rather than
    one after the other. A module without targets, or a target that fails,
    is an error naming the module (and the target's own diagnostics).

    With `share-ptx` (the default) and a binary or fatbin format, a module
    whose targets are NVVM targets that differ in their chip only (or that
    has one NVVM target) goes through LLVM once: translated and compiled to
    PTX for the oldest chip, which every newer chip's ptxas takes; then
    ptxas (and fatbinary, which packs each cubin with that PTX) runs once
    per chip, in parallel. The
    objects are what the per-target path makes, but for the `.target` line
    of the PTX inside. `share-ptx=0`, an `isa` format, or targets that
    differ otherwise: each target serialises its own clone.
  }];
  let options = [
    Option<"toolkitPath", "toolkit", "std::string", /*default=*/"\"\"",
           "The CUDA toolkit (ptxas, fatbinary, libdevice)">,
    Option<"sharePtx", "share-ptx", "bool", /*default=*/"true",
           "Compile a module to PTX once for all its chips">,
    Option<"compilationTarget", "format", "std::string",
           /*default=*/"\"fatbin\"",
           "isa, bin or fatbin, as gpu-module-to-binary's format">
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def DiscRalLowerGpuLaunch
    : Pass<"disc-ral-lower-gpu-launch", "mlir::ModuleOp"> {
  let summary = "Lower gpu.binary and gpu.launch_func to RAL CUDA runtime calls";
  let description = [{
    Runs after `gpu-to-llvm` and `gpu-module-to-binary`. Each `gpu.binary`
    becomes one constant global holding its objects (one per target chip)
    in the RAL's kernel-image format: "DISCGPU1", the object count (i64),
    then per object its SM version (i64, 80 for sm_80), its byte size (i64)
    and its bytes. Each `gpu.launch_func` becomes

      disc_ral_cuda_launch(ctx, image, image_bytes, kernel_name,
                           gx, gy, gz, bx, by, bz, shared_bytes,
                           args, num_args)

    with `args` an array of pointers to stack slots holding the kernel's
    LLVM arguments (memref descriptors already expanded by gpu-to-llvm).
    The runtime picks the object of the newest chip the device runs,
    loads it once per executable and CUDA context, and launches on the
    call's stream. The caller must be a function with a RAL context
    argument. With `dump-dir`, every object is also written there as
    `<binary>.sm_<N>.fatbin` (DISC_DUMP_DIR).
  }];
  let options = [
    Option<"dumpDir", "dump-dir", "std::string", /*default=*/"\"\"",
           "Directory to write each kernel object to">
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

#endif // DISC_CONVERSION_CUDA_PASSES_TD
