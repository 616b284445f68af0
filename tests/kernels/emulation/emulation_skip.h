#pragma once
// The emulator runs a block's threads as ucontext fibers, whose stack switches
// AddressSanitizer does not follow: emulator tests skip themselves in ASan
// builds (`make test-asan`) with SKIP_WITHOUT_FIBERS().

#include <gtest/gtest.h>

#if defined(__SANITIZE_ADDRESS__)
#define NVHCQ_EMULATION_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NVHCQ_EMULATION_UNDER_ASAN 1
#endif
#endif

#ifdef NVHCQ_EMULATION_UNDER_ASAN
#define SKIP_WITHOUT_FIBERS() GTEST_SKIP() << "fibers (ucontext) are not run under AddressSanitizer"
#else
#define SKIP_WITHOUT_FIBERS() \
  do {                        \
  } while (0)
#endif
