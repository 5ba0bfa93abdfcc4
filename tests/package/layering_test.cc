// The layers' dependencies point one way, checked on the sources' #include lines:
//   include/onepool (the API)  <-  planner/algo (placement)  <-  planner/core (IR, plan data)
//   <-  planner/{import, optimize, analysis, render}  <-  runtime (Session, backends)
//   <-  tools (CLI, server)
// The public headers include only each other; the placement algorithms only themselves and the
// Status type; the planner nothing of the runtime (public Session headers included) or the tools;
// the CPU and CUDA backends not each other.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
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

// The planner's layers (planner/<layer>/, one library each): what each may include besides the
// public API's plan-level headers. core sits on the placement algorithms; import, optimize,
// analysis and render each on core alone, never on each other.
TEST_CASE("each planner layer includes only the layers below it") {
  const std::map<std::string, std::vector<std::string>> allowed = {
      {"core", {"planner/core/", "planner/algo/"}},
      {"import", {"planner/import/", "planner/core/"}},
      {"optimize", {"planner/optimize/", "planner/core/"}},
      {"analysis", {"planner/analysis/", "planner/core/", "planner/algo/"}},
      {"render", {"planner/render/", "planner/core/", "planner/algo/"}},
  };
  for (const auto& [layer, prefixes] : allowed) {
    INFO("layer planner/" << layer);
    check_includes("planner/" + layer, [&prefixes](const std::string& target) {
      if (starts_with(target, "onepool/")) return true;  // checked below: no Session headers
      for (const std::string& prefix : prefixes) {
        if (starts_with(target, prefix)) return true;
      }
      return false;
    });
  }
}

// Every source file of planner/ lives in a layer folder: a file dropped at planner/'s top would
// escape the layer checks.
TEST_CASE("the planner has no files outside its layer folders") {
  const fs::path root = source_root();
  int loose = 0;
  for (const auto& entry : fs::directory_iterator(root / "planner")) {
    if (!entry.is_regular_file() || !is_source(entry.path())) continue;
    ++loose;
    MESSAGE(fs::relative(entry.path(), root).string() << " is not in a layer folder");
  }
  CHECK(loose == 0);
}

namespace {

// A unit is a header and its source file together ("planner/core/graph" for graph.h and
// graph.cc); public headers count as "include/onepool/<name>".
std::string unit_of(const std::string& file) {
  const std::string path = starts_with(file, "onepool/") ? "include/" + file : file;
  return fs::path(path).replace_extension().string();
}

// A cycle in `edges` reachable from `node`, as "a -> b -> a", or empty. `state`: 1 on the
// current path, 2 done.
std::string find_cycle(const std::string& node,
                       const std::map<std::string, std::set<std::string>>& edges,
                       std::map<std::string, int>& state, std::vector<std::string>& path) {
  state[node] = 1;
  path.push_back(node);
  const auto out = edges.find(node);
  if (out != edges.end()) {
    for (const std::string& next : out->second) {
      if (state[next] == 1) {
        std::string cycle;
        for (auto it = std::find(path.begin(), path.end(), next); it != path.end(); ++it) {
          cycle += *it + " -> ";
        }
        return cycle + next;
      }
      if (state[next] != 0) continue;
      std::string cycle = find_cycle(next, edges, state, path);
      if (!cycle.empty()) return cycle;
    }
  }
  path.pop_back();
  state[node] = 2;
  return "";
}

}  // namespace

// No two units include each other, directly or through others (a.cc includes b.h while b.cc
// includes a.h is a cycle too): every dependency points one way, inside a layer as between them.
TEST_CASE("units include each other without cycles") {
  std::map<std::string, std::set<std::string>> edges;
  for (const char* dir : {"include/onepool", "planner", "runtime", "tools"}) {
    for (const auto& include : quoted_includes(source_root(), dir)) {
      const std::string from = unit_of(include.file);
      const std::string to = unit_of(include.target);
      if (from != to) edges[from].insert(to);
    }
  }
  CHECK(edges.size() > 200);
  std::map<std::string, int> state;
  int cycles = 0;
  for (const auto& entry : edges) {
    if (state[entry.first] != 0) continue;
    std::vector<std::string> path;
    const std::string cycle = find_cycle(entry.first, edges, state, path);
    if (cycle.empty()) continue;
    ++cycles;
    MESSAGE("include cycle: " << cycle);
  }
  CHECK(cycles == 0);
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
bool in_import_layer(const std::string& file) { return starts_with(file, "planner/import/"); }

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
