//===- SharedObject.h - LLVM IR to a loadable shared object -----*- C++ -*-===//
#ifndef DISC_COMPILER_SHAREDOBJECT_H
#define DISC_COMPILER_SHAREDOBJECT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace disc {

/// A target machine for this host's CPU and features, emitting
/// position-independent code (a shared object), optimisation level O3.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>> createHostTargetMachine();

/// Adds `void disc_entry(void **args)` to `module`: the packed form of
/// `entryName` (Runtime.h's calling convention: one pointer per argument
/// word, then a pointer to the result storage), the one symbol the runtime
/// looks up. Renames calls the MLIR lowering leaves to MLIR's runner
/// utilities (memrefCopy) to the runtime's own entry points.
llvm::Error addPackedEntry(llvm::Module &module, llvm::StringRef entryName);

/// Compiles `module` to a relocatable object file.
llvm::Expected<std::string> emitObject(llvm::Module &module,
                                       llvm::TargetMachine &machine);

/// Links object files (lld, in process) into a shared object whose
/// dependencies are libdisc_runtime.so, libm, libgcc_s and libc. Every
/// undefined symbol must resolve against them or another of the objects: a
/// symbol nothing provides is an error here, not when the object is loaded.
llvm::Expected<std::string>
linkSharedObject(llvm::ArrayRef<std::string> objects);

/// emitObject, then linkSharedObject of that one object.
llvm::Expected<std::string> emitSharedObject(llvm::Module &module,
                                             llvm::TargetMachine &machine);

} // namespace disc

#endif // DISC_COMPILER_SHAREDOBJECT_H
