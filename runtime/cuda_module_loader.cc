// dlopen of the CUDA backend library: where to look, and errors that say what is missing.
#include "runtime/cuda_module_loader.h"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/cuda/module/cuda_module_abi.h"

namespace onepool {

namespace {

// The directory of the binary or shared library this code is linked into.
std::filesystem::path this_binary_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&load_cuda_backend), &info) == 0 ||
      info.dli_fname == nullptr) {
    return {};
  }
  std::error_code error;
  auto path = std::filesystem::canonical(info.dli_fname, error);
  return error ? std::filesystem::path() : path.parent_path();
}

// Step 1: beside this binary, in ../lib from it, in the build tree; then the bare file name for
// the dynamic linker's own search (LD_LIBRARY_PATH, RUNPATH, ld.so.cache).
std::vector<std::string> candidate_paths() {
  std::vector<std::string> paths;
  const auto dir = this_binary_dir();
  if (!dir.empty()) {
    paths.push_back((dir / kCudaModuleFileName).string());
    paths.push_back((dir.parent_path() / "lib" / kCudaModuleFileName).string());
  }
#ifdef ONEPOOL_CUDA_MODULE_BUILD_PATH
  if (std::find(paths.begin(), paths.end(), ONEPOOL_CUDA_MODULE_BUILD_PATH) == paths.end()) {
    paths.push_back(ONEPOOL_CUDA_MODULE_BUILD_PATH);
  }
#endif
  paths.push_back(kCudaModuleFileName);
  return paths;
}

struct OpenedModule {
  void* handle = nullptr;
  std::string failures;  // why each existing candidate did not load
};

OpenedModule open_module() {
  OpenedModule opened;
  std::string searched;
  for (const auto& path : candidate_paths()) {
    const bool bare_name = path.find('/') == std::string::npos;
    std::error_code error;
    if (!bare_name && !std::filesystem::exists(path, error)) {
      searched += str_cat("\n  ", path, ": not there");
      continue;
    }
    opened.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (opened.handle != nullptr) return opened;
    const char* reason = dlerror();
    searched += str_cat("\n  ", path, ": ", reason != nullptr ? reason : "dlopen failed");
  }
  opened.failures = searched;
  return opened;
}

template <class Fn>
Fn find_symbol(void* handle, const char* name) {
  return reinterpret_cast<Fn>(dlsym(handle, name));
}

}  // namespace

Expected<std::unique_ptr<Backend>> load_cuda_backend(const SessionOptions& options) {
  // Step 2: open the library (the dynamic linker counts references: a second dlopen of the same
  // file returns the same handle, so nothing is loaded twice).
  const OpenedModule opened = open_module();
  if (opened.handle == nullptr) {
    return make_status(StatusCode::kUnsupported, "device ", options.device.to_string(),
                       " requested, but the CUDA backend library ", kCudaModuleFileName,
                       " could not be loaded (it needs the CUDA runtime and cuBLAS libraries "
                       "it was built with):",
                       opened.failures);
  }
  // Step 3: check it comes from this build, then create the backend.
  const auto abi = find_symbol<OnepoolCudaModuleAbiFn>(opened.handle, "onepool_cuda_module_abi");
  const auto create =
      find_symbol<OnepoolCudaCreateBackendFn>(opened.handle, "onepool_cuda_create_backend");
  if (abi == nullptr || create == nullptr) {
    return make_status(StatusCode::kUnsupported, "device ", options.device.to_string(),
                       " requested, but ", kCudaModuleFileName,
                       " lacks its entry points: it is not a OnePool CUDA backend library");
  }
  if (abi() != kCudaModuleAbiVersion) {
    return make_status(StatusCode::kUnsupported, "device ", options.device.to_string(),
                       " requested, but ", kCudaModuleFileName, " was built for backend ABI ",
                       abi(), " and this runtime expects ", kCudaModuleAbiVersion,
                       ": install the library from the same build");
  }
  Expected<std::unique_ptr<Backend>> result =
      make_status(StatusCode::kInternal, kCudaModuleFileName, " created no backend");
  create(&options, &result);
  return result;
}

}  // namespace onepool
