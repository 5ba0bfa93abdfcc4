// The layers' dependencies point one way, checked on the sources' #include lines:
//   include/onepool (the API)  <-  planner/algo (placement)  <-  planner (import, analysis, plan)
//   <-  runtime (Session, backends)  <-  tools (CLI, server)
// The public headers include only each other; the placement algorithms only themselves and the
// Status type; the planner nothing of the runtime (public Session headers included) or the tools;
// the CPU and CUDA backends not each other.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Include {
  std::string file;    // relative to the source root
  std::string target;  // what it includes, as written between the quotes
};

bool is_source(const fs::path& path) {
  const auto ext = path.extension().string();
  return ext == ".h" || ext == ".cc" || ext == ".cu" || ext == ".cuh";
}

// Every `#include "..."` (quoted: project headers) of the sources under `dir`.
std::vector<Include> quoted_includes(const fs::path& root, const std::string& dir) {
  std::vector<Include> includes;
  for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
    if (!entry.is_regular_file() || !is_source(entry.path())) continue;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("#include \"", 0) != 0) continue;
      const size_t end = line.find('"', 10);
      if (end == std::string::npos) continue;
      includes.push_back({fs::relative(entry.path(), root).string(), line.substr(10, end - 10)});
    }
  }
  return includes;
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

fs::path source_root() {
  const char* dir = std::getenv("ONEPOOL_SOURCE_DIR");
  REQUIRE(dir != nullptr);
  return dir;
}

// Checks that every quoted include of `dir` satisfies `allowed`; reports each one that does not.
template <class Allowed>
void check_includes(const std::string& dir, Allowed allowed) {
  const auto includes = quoted_includes(source_root(), dir);
  CHECK(!includes.empty());
  int violations = 0;
  for (const auto& include : includes) {
    if (allowed(include.target)) continue;
    ++violations;
    MESSAGE(include.file << " includes \"" << include.target << "\"");
  }
  CHECK(violations == 0);
}

}  // namespace

// include/onepool/*.h: 0 includes outside include/onepool (no planner/, no runtime/).
TEST_CASE("public headers include only public headers") {
  check_includes("include/onepool",
                 [](const std::string& target) { return starts_with(target, "onepool/"); });
}

// planner/algo: 0 includes outside planner/algo except onepool/status.h.
TEST_CASE("the placement algorithms depend on nothing else") {
  check_includes("planner/algo", [](const std::string& target) {
    return starts_with(target, "planner/algo/") || target == "onepool/status.h";
  });
}

// planner: 0 includes of runtime/, tools/, or the Session headers of the public API.
TEST_CASE("the planner includes nothing of the runtime or the tools") {
  check_includes("planner", [](const std::string& target) {
    return !starts_with(target, "runtime/") && !starts_with(target, "tools/") &&
           target != "onepool/session.h" && target != "onepool/session_pool.h" &&
           target != "onepool/dynamic_session.h";
  });
}

// runtime/cpu and runtime/cuda: 0 includes of each other, 0 of the tools.
TEST_CASE("the backends do not include each other") {
  check_includes("runtime/cpu", [](const std::string& target) {
    return !starts_with(target, "runtime/cuda/") && !starts_with(target, "tools/");
  });
  check_includes("runtime/cuda", [](const std::string& target) {
    return !starts_with(target, "runtime/cpu/") && !starts_with(target, "tools/");
  });
}

namespace {

// Whether `file` (relative to the root) reaches ONNX's or protobuf's headers through its quoted
// includes, followed transitively; `memo` caches each file's answer (cycles count as no).
bool reaches_onnx(const fs::path& root, const std::string& file, std::map<std::string, int>& memo) {
  const auto known = memo.find(file);
  if (known != memo.end()) return known->second == 1;
  memo[file] = 0;  // in progress
  fs::path path = root / file;
  if (!fs::exists(path)) path = root / "include" / file;
  std::ifstream in(path);
  std::string line;
  bool reaches = false;
  while (std::getline(in, line) && !reaches) {
    if (starts_with(line, "#include <onnx/") || starts_with(line, "#include <google/protobuf")) {
      reaches = true;
    } else if (starts_with(line, "#include \"")) {
      const size_t end = line.find('"', 10);
      reaches = end != std::string::npos && reaches_onnx(root, line.substr(10, end - 10), memo);
    }
  }
  memo[file] = reaches ? 1 : 0;
  return reaches;
}

// The ONNX import layer: the only files that may see ONNX's generated classes.
bool in_import_layer(const std::string& file) {
  const std::string name = fs::path(file).filename().string();
  return starts_with(file, "planner/") &&
         (starts_with(name, "import_") || starts_with(name, "onnx_import") ||
          starts_with(name, "constant_folding") || starts_with(name, "model_info") ||
          starts_with(name, "tensor_proto"));
}

}  // namespace

// ONNX and protobuf stay inside import: no file of the public API, the rest of the planner, the
// runtime, the tools or the Python module reaches their headers, even through another header.
TEST_CASE("ONNX and protobuf headers are reached only by the import layer") {
  const fs::path root = source_root();
  std::map<std::string, int> memo;
  int violations = 0;
  int checked = 0;
  for (const char* dir : {"include/onepool", "planner", "runtime", "tools", "python/src"}) {
    if (!fs::exists(root / dir)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      if (!entry.is_regular_file() || !is_source(entry.path())) continue;
      const std::string file = fs::relative(entry.path(), root).string();
      if (in_import_layer(file)) continue;
      ++checked;
      if (!reaches_onnx(root, file, memo)) continue;
      ++violations;
      MESSAGE(file << " reaches ONNX or protobuf headers");
    }
  }
  CHECK(checked > 300);
  CHECK(violations == 0);
}
