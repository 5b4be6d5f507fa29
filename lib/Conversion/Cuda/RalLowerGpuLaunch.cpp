//===- RalLowerGpuLaunch.cpp - gpu.launch_func -> disc_ral_cuda_launch ----===//
//
// See DiscRalLowerGpuLaunch in include/disc/Conversion/Cuda/Passes.td.
//
//===----------------------------------------------------------------------===//
#include "../RuntimeFunctions.h"
#include "disc/Conversion/Cuda/Passes.h"

#include "GpuLoopUtils.h"
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/raw_ostream.h"

namespace disc {
#define GEN_PASS_DEF_DISCRALLOWERGPULAUNCH
#include "disc/Conversion/Cuda/Passes.h.inc"
} // namespace disc

using namespace mlir;

namespace {

void appendInt64(std::string &out, int64_t value) {
  char bytes[8];
  llvm::support::endian::write64le(bytes, (uint64_t)value);
  out.append(bytes, 8);
}

/// The SM version of an object's target: 80 for "sm_80", 90 for "sm_90a".
FailureOr<int64_t> smVersion(gpu::ObjectAttr object) {
  auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget());
  if (!target)
    return failure();
  return disc::cuda::smVersionOfChip(target.getChip());
}

/// A constant internal global holding `bytes`; its address.
LLVM::GlobalOp constantBytes(ModuleOp module, Location loc, StringRef name,
                             StringRef bytes) {
  auto moduleBuilder = OpBuilder::atBlockBegin(module.getBody());
  auto type = LLVM::LLVMArrayType::get(
      IntegerType::get(moduleBuilder.getContext(), 8), bytes.size());
  auto global = LLVM::GlobalOp::create(
      moduleBuilder, loc, type, /*isConstant=*/true, LLVM::Linkage::Internal,
      name, moduleBuilder.getStringAttr(bytes), /*alignment=*/16);
  return global;
}

/// Whether a kernel operand fits an 8-byte argument slot: integers and
/// floats of up to 64 bits, pointers (what gpu-to-llvm leaves of scalars
/// and memref descriptors).
bool fitsArgumentSlot(Type type) {
  if (isa<LLVM::LLVMPointerType>(type))
    return true;
  if (auto integer = dyn_cast<IntegerType>(type))
    return integer.getWidth() <= 64;
  if (auto real = dyn_cast<FloatType>(type))
    return real.getWidth() <= 64;
  return false;
}

bool fitsArgumentSlots(gpu::LaunchFuncOp launch) {
  return llvm::all_of(launch.getKernelOperands().getTypes(),
                      fitsArgumentSlot);
}

/// A function's launches share one argument area, made at its entry:
/// `slots`, an 8-byte slot per argument, and `args`, the array of the
/// slots' addresses that cuLaunchKernel reads (the driver copies the
/// values at the launch, so the next launch may overwrite them). A launch
/// then stores its operands and nothing else: one area of its own per
/// launch (an alloca per operand, and the addresses stored again each
/// time) made the host code of a partition of 169 launches ~10,000
/// allocas and ~19,000 stores, and LLVM's time on it seconds.
struct ArgumentArea {
  Value slots, args;
  LLVM::LLVMArrayType slotsType, argsType;
};

struct RalLowerGpuLaunchPass
    : public disc::impl::DiscRalLowerGpuLaunchBase<RalLowerGpuLaunchPass> {
  using DiscRalLowerGpuLaunchBase::DiscRalLowerGpuLaunchBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    auto i32 = IntegerType::get(ctx, 32);
    auto voidType = LLVM::LLVMVoidType::get(ctx);

    // gpu.binary -> one constant image global per binary.
    llvm::StringMap<std::pair<LLVM::GlobalOp, int64_t>> images;
    for (auto binary : llvm::to_vector(module.getOps<gpu::BinaryOp>())) {
      std::string image = "DISCGPU1";
      appendInt64(image, binary.getObjects().size());
      for (Attribute attr : binary.getObjects()) {
        auto object = cast<gpu::ObjectAttr>(attr);
        FailureOr<int64_t> sm = smVersion(object);
        if (failed(sm)) {
          binary.emitOpError() << "has an object for target "
                               << object.getTarget()
                               << "; the RAL loads NVVM (sm_XX) objects only";
          return signalPassFailure();
        }
        appendInt64(image, *sm);
        StringRef bytes = object.getObject().getValue();
        if (!dumpDir.empty()) {
          std::error_code error;
          llvm::raw_fd_ostream out(dumpDir + "/" + binary.getSymName().str() +
                                       ".sm_" + std::to_string(*sm) + ".fatbin",
                                   error);
          if (!error)
            out << bytes;
        }
        appendInt64(image, bytes.size());
        image.append(bytes.begin(), bytes.end());
      }
      std::string name = ("__disc_gpu_image_" + binary.getSymName()).str();
      auto global = constantBytes(module, binary.getLoc(), name, image);
      images[binary.getSymName()] = {global, (int64_t)image.size()};
      binary.erase();
    }

    // The most arguments of a function's launches that fit the slots.
    DenseMap<Operation *, int64_t> areaSizes;
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto func = launch->getParentOfType<LLVM::LLVMFuncOp>();
      if (func && fitsArgumentSlots(launch)) {
        int64_t &size = areaSizes[func];
        size = std::max<int64_t>(size, launch.getKernelOperands().size());
      }
    });
    DenseMap<Operation *, ArgumentArea> areas;
    auto areaOf = [&](LLVM::LLVMFuncOp func, Location loc) {
      ArgumentArea &area = areas[func];
      if (area.slots)
        return area;
      const int64_t size = std::max<int64_t>(areaSizes[func], 1);
      OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
      Value one =
          LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(1));
      area.slotsType = LLVM::LLVMArrayType::get(i64, size);
      area.argsType = LLVM::LLVMArrayType::get(ptr, size);
      area.slots = LLVM::AllocaOp::create(b, loc, ptr, area.slotsType, one,
                                          /*alignment=*/8);
      area.args = LLVM::AllocaOp::create(b, loc, ptr, area.argsType, one);
      for (int32_t i = 0; i < size; ++i) {
        Value slot = LLVM::GEPOp::create(b, loc, ptr, area.slotsType,
                                         area.slots,
                                         ArrayRef<LLVM::GEPArg>{0, i});
        Value entry = LLVM::GEPOp::create(b, loc, ptr, area.argsType,
                                          area.args,
                                          ArrayRef<LLVM::GEPArg>{0, i});
        LLVM::StoreOp::create(b, loc, slot, entry);
      }
      return area;
    };

    LLVM::LLVMFuncOp launchFn;
    llvm::StringMap<LLVM::GlobalOp> kernelNames;
    WalkResult result = module.walk([&](gpu::LaunchFuncOp launch) {
      auto func = launch->getParentOfType<LLVM::LLVMFuncOp>();
      if (!func || func.getNumArguments() == 0 ||
          !func.getArgAttr(0, disc::kRalContextAttr)) {
        launch.emitOpError("is not in a function with a RAL context argument "
                           "(run disc-add-ral-context and gpu-to-llvm first)");
        return WalkResult::interrupt();
      }
      if (!launch.getAsyncDependencies().empty() || launch.getAsyncToken() ||
          launch.hasClusterSize()) {
        launch.emitOpError("async tokens and clusters are not supported");
        return WalkResult::interrupt();
      }
      StringRef moduleName = launch.getKernelModuleName().getValue();
      auto image = images.find(moduleName);
      if (image == images.end()) {
        launch.emitOpError() << "launches a kernel of @" << moduleName
                             << ", which is not a gpu.binary (run "
                                "gpu-module-to-binary first)";
        return WalkResult::interrupt();
      }
      for (Value operand : launch.getKernelOperands())
        if (!LLVM::isCompatibleType(operand.getType())) {
          launch.emitOpError("has kernel operands that are not LLVM types "
                             "(run gpu-to-llvm first)");
          return WalkResult::interrupt();
        }
      if (!launchFn)
        launchFn = disc::declareRuntimeFunction(
            module, "disc_ral_cuda_launch",
            LLVM::LLVMFunctionType::get(
                voidType, {ptr, ptr, i64, ptr, i64, i64, i64, i64, i64, i64,
                           i32, ptr, i64}));
      std::string kernel = launch.getKernelName().getValue().str();
      std::string kernelKey = (moduleName + "::" + kernel).str();
      LLVM::GlobalOp &nameGlobal = kernelNames[kernelKey];
      if (!nameGlobal) {
        std::string bytes = kernel;
        bytes.push_back('\0');
        nameGlobal = constantBytes(
            module, launch.getLoc(),
            ("__disc_gpu_kernel_name_" + std::to_string(kernelNames.size()))
                .c_str(),
            bytes);
      }

      Location loc = launch.getLoc();
      const int64_t numArgs = launch.getKernelOperands().size();
      Value args;
      OpBuilder b(launch);
      if (fitsArgumentSlots(launch)) {
        ArgumentArea area = areaOf(func, loc);
        b.setInsertionPoint(launch);
        args = area.args;
        for (auto [i, operand] : llvm::enumerate(launch.getKernelOperands())) {
          Value slot = LLVM::GEPOp::create(
              b, loc, ptr, area.slotsType, area.slots,
              ArrayRef<LLVM::GEPArg>{0, (int32_t)i});
          LLVM::StoreOp::create(b, loc, operand, slot);
        }
      } else {
        // An operand wider than a slot: slots of its own types, at the
        // function entry (no stack growth per launch).
        OpBuilder entryBuilder =
            OpBuilder::atBlockBegin(&func.getBody().front());
        Value one = LLVM::ConstantOp::create(
            entryBuilder, loc, i64, entryBuilder.getI64IntegerAttr(1));
        SmallVector<Value> slots;
        for (Value operand : launch.getKernelOperands())
          slots.push_back(LLVM::AllocaOp::create(entryBuilder, loc, ptr,
                                                 operand.getType(), one));
        auto arrayType =
            LLVM::LLVMArrayType::get(ptr, std::max<int64_t>(numArgs, 1));
        args = LLVM::AllocaOp::create(entryBuilder, loc, ptr, arrayType, one);
        for (auto [i, operand] : llvm::enumerate(launch.getKernelOperands())) {
          LLVM::StoreOp::create(b, loc, operand, slots[i]);
          Value slotAddress = LLVM::GEPOp::create(
              b, loc, ptr, arrayType, args,
              ArrayRef<LLVM::GEPArg>{0, (int32_t)i});
          LLVM::StoreOp::create(b, loc, slots[i], slotAddress);
        }
      }
      auto i64Value = [&](Value v) -> Value {
        if (v.getType() == i64)
          return v;
        return LLVM::ZExtOp::create(b, loc, i64, v);
      };
      Value imageAddress =
          LLVM::AddressOfOp::create(b, loc, image->second.first);
      Value imageBytes = LLVM::ConstantOp::create(
          b, loc, i64, b.getI64IntegerAttr(image->second.second));
      Value nameAddress = LLVM::AddressOfOp::create(b, loc, nameGlobal);
      Value sharedBytes = launch.getDynamicSharedMemorySize();
      if (!sharedBytes)
        sharedBytes =
            LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(0));
      Value numArgsValue =
          LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(numArgs));
      LLVM::CallOp::create(
          b, loc, launchFn,
          ValueRange{func.getArgument(0), imageAddress, imageBytes,
                     nameAddress, i64Value(launch.getGridSizeX()),
                     i64Value(launch.getGridSizeY()),
                     i64Value(launch.getGridSizeZ()),
                     i64Value(launch.getBlockSizeX()),
                     i64Value(launch.getBlockSizeY()),
                     i64Value(launch.getBlockSizeZ()), sharedBytes, args,
                     numArgsValue});
      launch.erase();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    // The container attribute promised gpu.module/gpu.binary ops; none left.
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

} // namespace
