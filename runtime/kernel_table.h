// (op type) -> kernel factory, the one registration style of every backend: a registry is built
// per Session (no global state), and each op family's file registers its ops with
// register_<family>_kernels(registry), under the same family names in runtime/cpu/kernels/ and
// runtime/cuda/kernels/ (elementwise, tensor, normalization, reduce, conv_pool, matmul,
// recurrent, ...).
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace onepool {

template <class Factory>
class KernelTable {
 public:
  /// Registers `factory` for `op_type` in the default ONNX domain; a second registration of the
  /// same op type replaces the first.
  void add(std::string op_type, Factory factory) {
    for (auto& entry : factories_) {
      if (entry.first == op_type) {
        entry.second = factory;
        return;
      }
    }
    factories_.emplace_back(std::move(op_type), factory);
  }

  /// The factory for `op_type` in the default ONNX domain, or nullptr.
  Factory find(const std::string& op_type) const {
    for (const auto& entry : factories_) {
      if (entry.first == op_type) return entry.second;
    }
    return nullptr;
  }

  /// Every registered op type, sorted.
  std::vector<std::string> op_types() const {
    std::vector<std::string> names;
    names.reserve(factories_.size());
    for (const auto& entry : factories_) names.push_back(entry.first);
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::vector<std::pair<std::string, Factory>> factories_;
};

}  // namespace onepool
