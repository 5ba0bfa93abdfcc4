// Process-level settings the runtime makes for speed: OpenBLAS's idle workers stopped, huge-page
// advice on large blocks. Neither may change a result.
#include <cblas.h>
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runtime/cpu/blas_threads.h"
#include "runtime/huge_pages.h"

namespace {

int64_t thread_count() {
  int64_t count = 0;
  for ([[maybe_unused]] const auto& entry :
       std::filesystem::directory_iterator("/proc/self/task")) {
    ++count;
  }
  return count;
}

// C = A * B for a 3x4 by 4x2 product, on the calling thread.
std::vector<float> small_product() {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const std::vector<float> b = {1, -1, 0.5f, 2, -3, 0, 4, 1};
  std::vector<float> c(6, -7.0f);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 3, 2, 4, 1.0f, a.data(), 4, b.data(), 2,
              0.0f, c.data(), 2);
  return c;
}

// The VmFlags line of the mapping that holds `address`, from /proc/self/smaps.
std::string mapping_flags(const void* address) {
  const auto target = reinterpret_cast<uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    const size_t dash = line.find('-');
    const size_t space = line.find(' ');
    if (dash != std::string::npos && space != std::string::npos && dash < space &&
        line.find(':') > space) {
      const uintptr_t begin = std::stoull(line.substr(0, dash), nullptr, 16);
      const uintptr_t end = std::stoull(line.substr(dash + 1, space - dash - 1), nullptr, 16);
      inside = begin <= target && target < end;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

bool huge_pages_on_request() {
  std::ifstream setting("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string value;
  std::getline(setting, value);
  return value.find("[madvise]") != std::string::npos ||
         value.find("[always]") != std::string::npos;
}

}  // namespace

TEST_CASE("use_single_threaded_blas stops OpenBLAS's idle workers and keeps its results") {
  // Small integers: every order of summation gives these exactly.
  const std::vector<float> expected = {9, 7, 19, 15, 29, 23};
  CHECK(small_product() == expected);
  onepool::cpu::use_single_threaded_blas();
  // This test starts no thread of its own: only the main thread is left.
  CHECK(thread_count() == 1);
  CHECK(small_product() == expected);
  // Calls from several threads at once still run, each on its own thread.
  std::vector<std::vector<float>> results(4);
  std::vector<std::thread> callers;
  for (auto& result : results) callers.emplace_back([&result] { result = small_product(); });
  for (auto& caller : callers) caller.join();
  for (const auto& result : results) CHECK(result == expected);
  onepool::cpu::use_single_threaded_blas();  // again: harmless
  CHECK(thread_count() == 1);
}

TEST_CASE("advise_huge_pages is a hint that changes no byte") {
  onepool::advise_huge_pages(nullptr, 0);
  onepool::advise_huge_pages(nullptr, onepool::kHugePageBytes * 4);
  const size_t bytes = onepool::kHugePageBytes * 4;
  std::unique_ptr<unsigned char, decltype(&std::free)> block(
      static_cast<unsigned char*>(std::aligned_alloc(256, bytes)), &std::free);
  REQUIRE(block != nullptr);
  for (size_t i = 0; i < bytes; ++i) block.get()[i] = static_cast<unsigned char>(i * 7);
  onepool::advise_huge_pages(block.get() + 1, 100);  // smaller than a page: nothing to do
  onepool::advise_huge_pages(block.get(), bytes);
  bool same = true;
  for (size_t i = 0; i < bytes; ++i)
    same = same && block.get()[i] == static_cast<unsigned char>(i * 7);
  CHECK(same);
  if (huge_pages_on_request()) {
    // The 2 MiB-aligned middle of the block is marked for huge pages ("hg").
    const uintptr_t aligned = (reinterpret_cast<uintptr_t>(block.get()) + onepool::kHugePageBytes) &
                              ~uintptr_t{onepool::kHugePageBytes - 1};
    CHECK(mapping_flags(reinterpret_cast<const void*>(aligned)).find(" hg") != std::string::npos);
  } else {
    MESSAGE("transparent huge pages are off here: the advice is not checked");
  }
}
