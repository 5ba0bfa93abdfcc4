// libonepool.so exports the public API and nothing else: every dynamic symbol it defines belongs
// to a class or function declared in include/onepool/ (cmake/onepool_exports.map), so the
// planner's, the kernels', ONNX's and protobuf's symbols cannot clash with a consumer's own.
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

// The public API's symbol prefixes, as cmake/onepool_exports.map lists them (demangled).
constexpr std::array<std::string_view, 20> kApiPrefixes = {
    "onepool::Model::",          "onepool::Session::",
    "onepool::DynamicSession::", "onepool::SessionPool::",
    "onepool::Status::",         "onepool::Shape::",
    "onepool::Device::",         "onepool::Plan::",
    "onepool::operator==",       "onepool::dtype_",
    "onepool::tensor_bytes",     "onepool::status_code_name",
    "onepool::pool_mode_name",   "onepool::check_tensor_matches",
    "onepool::library_version",  "onepool::ShapeProfile::",
    "onepool::log_level_name",   "onepool::cpu_isa_name",
    "onepool::parse_cpu_isa",    "onepool::CpuThreadPool::"};

bool is_api_symbol(std::string_view name) {
  for (std::string_view prefix : kApiPrefixes) {
    if (name.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

// Demangled names of the defined dynamic symbols of `library` (`nm -DC --defined-only`), minus
// the version node the map defines.
std::vector<std::string> defined_dynamic_symbols(const std::string& library) {
  const std::string command = "nm -DC --defined-only '" + library + "'";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  REQUIRE(pipe != nullptr);
  std::vector<std::string> names;
  std::array<char, 4096> line{};
  while (fgets(line.data(), static_cast<int>(line.size()), pipe.get()) != nullptr) {
    std::string text(line.data());
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    // "0000000000012345 T onepool::Model::load(...)": the name starts after the type letter.
    const size_t type_at = text.find(' ');
    if (type_at == std::string::npos || type_at + 3 > text.size()) continue;
    const std::string name = text.substr(type_at + 3);
    if (name.rfind("ONEPOOL_", 0) == 0) continue;  // the version node, an absolute symbol
    names.push_back(name);
  }
  return names;
}

}  // namespace

// libonepool.so defines Model::load, Session::run and ShapeProfile::parse (what a consumer calls
// first), and no
// symbol outside the API: not one of protobuf's (google::), ONNX's, or the planner's.
TEST_CASE("libonepool.so exports the public API only") {
  const char* library = std::getenv("ONEPOOL_SHARED_LIBRARY");
  if (library == nullptr || *library == '\0') {
    MESSAGE("built with ONEPOOL_SHARED=OFF: no shared library to check");
    std::exit(77);
  }
  const auto names = defined_dynamic_symbols(library);
  bool has_load = false;
  bool has_run = false;
  bool has_profile_parse = false;
  bool has_load_from_memory = false;
  bool has_log_level_name = false;
  std::vector<std::string> outside;
  for (const auto& name : names) {
    has_load = has_load || name.rfind("onepool::Model::load(", 0) == 0;
    has_run = has_run || name.rfind("onepool::Session::run(", 0) == 0;
    has_profile_parse = has_profile_parse || name.rfind("onepool::ShapeProfile::parse(", 0) == 0;
    has_load_from_memory =
        has_load_from_memory || name.rfind("onepool::Model::load_from_memory(", 0) == 0;
    has_log_level_name = has_log_level_name || name.rfind("onepool::log_level_name(", 0) == 0;
    if (!is_api_symbol(name)) outside.push_back(name);
  }
  MESSAGE(names.size() << " symbols exported");
  CHECK(has_load);
  CHECK(has_run);
  CHECK(has_profile_parse);
  CHECK(has_load_from_memory);
  CHECK(has_log_level_name);
  for (const auto& name : outside) MESSAGE("exported outside the API: " << name);
  CHECK(outside.empty());
}
