//===- disc-opt.cpp - mlir-opt with every DISC pass and dialect -----------===//
#include "disc/Compiler/Pipeline.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  disc::registerAllDialects(registry);
  disc::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "DISC optimizer driver\n", registry));
}
