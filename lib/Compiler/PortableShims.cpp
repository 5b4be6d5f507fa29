//===- PortableShims.cpp - glibc symbols newer than the portable target ---===//
//
// Only in DISC_PORTABLE builds. LLVM's static Support library, built on
// Debian 12 (glibc 2.36), calls arc4random (new in glibc 2.36) for random
// seeds. Defining it here binds that call inside the extension, so the
// portable wheel needs glibc 2.34 (Ubuntu 22.04 has 2.35), not 2.36.
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <sys/random.h>

extern "C" uint32_t arc4random(void) {
  uint32_t value = 0;
  // getrandom (glibc 2.25) fills the word; a short read only happens for
  // requests over 256 bytes or an interrupted blocking read.
  while (getrandom(&value, sizeof(value), 0) != sizeof(value)) {
  }
  return value;
}

