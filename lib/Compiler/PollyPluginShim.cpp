//===- PollyPluginShim.cpp - the Polly plugin the static link references ---===//
//
// Only in DISC_PORTABLE builds (apart from PortableShims.cpp: LLVM's headers
// bring glibc's arc4random declaration).
//
// Debian's LLVM is built with Polly linked into its tools: lld's LTO
// pipeline (linked in for the artifact link step) registers the statically
// linked pass plugins by name and so references getPollyPluginInfo. DISC
// links no Polly and never runs LTO: an empty plugin satisfies the
// reference.
#include "llvm/Plugins/PassPlugin.h"

llvm::PassPluginLibraryInfo getPollyPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "Polly (not linked)", "0", nullptr};
}
