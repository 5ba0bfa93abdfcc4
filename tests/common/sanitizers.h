// Which sanitizer this test binary is built with, for GCC (__SANITIZE_*__) and clang
// (__has_feature) alike: ONEPOOL_TEST_ASAN, ONEPOOL_TEST_TSAN, and ONEPOOL_TEST_SANITIZED for
// either.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define ONEPOOL_TEST_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define ONEPOOL_TEST_TSAN 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(ONEPOOL_TEST_ASAN)
#define ONEPOOL_TEST_ASAN 1
#endif
#if __has_feature(thread_sanitizer) && !defined(ONEPOOL_TEST_TSAN)
#define ONEPOOL_TEST_TSAN 1
#endif
#endif
#if defined(ONEPOOL_TEST_ASAN) || defined(ONEPOOL_TEST_TSAN)
#define ONEPOOL_TEST_SANITIZED 1
#endif
