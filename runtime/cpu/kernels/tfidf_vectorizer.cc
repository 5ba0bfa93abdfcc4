// TfIdfVectorizer over integer tokens: counts the pool's n-grams in each row of X ([N] or
// [B, N], int32 or int64) and writes Y ([C] or [B, C], float32) as counts (TF), 0/1 times the
// weight (IDF) or counts times the weight (TFIDF).
//
// n-grams of length n in [min_gram_length, max_gram_length] are the items at positions
// start, start + d, ..., start + (n - 1) d for every skip distance d in [1, max_skip_count + 1];
// unigrams count once per token whatever the skip (ONNX Runtime's rule, which the ONNX test data
// follows). The pool's n-grams are a trie built at prepare time; a run walks it from each start
// position (O(N × skips × max_gram_length) hash look-ups per row), with no allocation.
// String tokens are not supported.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_dtype.h"

namespace onepool::cpu {
namespace {

enum class TfIdfMode : uint8_t { kTf, kIdf, kTfIdf };

// Trie node: children by token; `output` is the n-gram's output column (-1: not an n-gram).
struct TrieNode {
  std::unordered_map<int64_t, int32_t> children;
  int64_t output = -1;
};

struct TfIdfPlan {
  std::vector<TrieNode> trie{TrieNode{}};  // node 0 is the root
  int64_t min_gram = 1, max_gram = 1, max_skip = 0;
  int64_t rows = 1, row_length = 0, columns = 0;
  TfIdfMode mode = TfIdfMode::kTf;
  std::vector<float> weights;  // per column; empty: 1
};

template <class Token>
class TfIdfKernel final : public Kernel {
 public:
  explicit TfIdfKernel(TfIdfPlan plan) : plan_(std::move(plan)) {}

  Status run(const RunContext& context) override {
    const Token* x = context.inputs[0].as<const Token>();
    float* y = context.outputs[0].as<float>();
    const int64_t N = plan_.row_length, C = plan_.columns;
    std::fill(y, y + plan_.rows * C, 0.0f);
    for (int64_t r = 0; r < plan_.rows; ++r) {
      const Token* row = x + r * N;
      float* counts = y + r * C;
      // Step 1. Unigrams, once per token.
      if (plan_.min_gram == 1) {
        for (int64_t i = 0; i < N; ++i) {
          const int32_t node = child(0, static_cast<int64_t>(row[i]));
          if (node >= 0 && plan_.trie[static_cast<size_t>(node)].output >= 0) {
            counts[plan_.trie[static_cast<size_t>(node)].output] += 1.0f;
          }
        }
      }
      // Step 2. Longer n-grams for every skip distance and start.
      const int64_t first_size = std::max<int64_t>(plan_.min_gram, 2);
      for (int64_t distance = 1; distance <= plan_.max_skip + 1; ++distance) {
        for (int64_t start = 0; start + distance * (first_size - 1) < N; ++start) {
          int32_t node = 0;
          int64_t position = start;
          for (int64_t size = 1; size <= plan_.max_gram && position < N;
               ++size, position += distance) {
            node = child(node, static_cast<int64_t>(row[position]));
            if (node < 0) break;
            const int64_t output = plan_.trie[static_cast<size_t>(node)].output;
            if (size >= first_size && output >= 0) counts[output] += 1.0f;
          }
        }
      }
      // Step 3. Weighting.
      for (int64_t c = 0; c < C; ++c) {
        const float weight = plan_.weights.empty() ? 1.0f : plan_.weights[static_cast<size_t>(c)];
        if (plan_.mode == TfIdfMode::kIdf) counts[c] = counts[c] > 0.0f ? weight : 0.0f;
        if (plan_.mode == TfIdfMode::kTfIdf) counts[c] *= weight;
      }
    }
    return Status::ok();
  }

 private:
  int32_t child(int32_t node, int64_t token) const {
    const auto& children = plan_.trie[static_cast<size_t>(node)].children;
    const auto found = children.find(token);
    return found == children.end() ? -1 : found->second;
  }

  TfIdfPlan plan_;
};

// Step 1 of prepare: the pool's n-grams into the trie, each with its output column.
Status build_trie(const NodeContext& node, TfIdfPlan& plan) {
  const auto& attributes = node.node().attributes;
  const std::vector<int64_t> pool = attributes.get_ints("pool_int64s");
  const std::vector<int64_t> counts = attributes.get_ints("ngram_counts");
  const std::vector<int64_t> indexes = attributes.get_ints("ngram_indexes");
  size_t gram = 0;  // n-grams read so far
  for (size_t g = 0; g < counts.size(); ++g) {
    const auto begin = counts[g];
    const auto end = g + 1 < counts.size() ? counts[g + 1] : static_cast<int64_t>(pool.size());
    const auto n = static_cast<int64_t>(g) + 1;
    if (begin < 0 || end < begin || end > static_cast<int64_t>(pool.size()) ||
        (end - begin) % n != 0) {
      return node.error(StatusCode::kInvalidModel, "ngram_counts[", g, "] = ", begin,
                        " does not split pool_int64s (", pool.size(), " items) into ", n, "-grams");
    }
    for (int64_t at = begin; at < end; at += n, ++gram) {
      if (gram >= indexes.size() || indexes[gram] < 0 || indexes[gram] >= plan.columns) {
        return node.error(StatusCode::kInvalidModel, "ngram_indexes has no valid output column ",
                          "for n-gram ", gram, " (output has ", plan.columns, " columns)");
      }
      int32_t current = 0;
      for (int64_t k = 0; k < n; ++k) {
        const int64_t token = pool[static_cast<size_t>(at + k)];
        auto& children = plan.trie[static_cast<size_t>(current)].children;
        const auto found = children.find(token);
        if (found != children.end()) {
          current = found->second;
          continue;
        }
        const auto created = static_cast<int32_t>(plan.trie.size());
        children.emplace(token, created);
        plan.trie.emplace_back();
        current = created;
      }
      plan.trie[static_cast<size_t>(current)].output = indexes[gram];
    }
  }
  return Status::ok();
}

Expected<PreparedKernel> make_tfidf_vectorizer_kernel(const NodeContext& node) {
  if (!node.has_input(0) || !node.has_output(0)) {
    return node.error(StatusCode::kInvalidModel, "expected input X and output Y");
  }
  const Value& x = node.input(0);
  if (x.dtype != DType::kInt32 && x.dtype != DType::kInt64) {
    return node.error(StatusCode::kUnsupported, "input '", x.name, "' has dtype ",
                      dtype_name(x.dtype), "; only int32 and int64 tokens are supported");
  }
  ONEPOOL_RETURN_IF_ERROR(require_output_dtype(node, 0, DType::kFloat32));
  const auto& attributes = node.node().attributes;
  TfIdfPlan plan;
  const Shape& out = node.output(0).shape;
  if (x.shape.rank() == 1 && out.rank() == 1) {
    plan.row_length = x.shape[0];
    plan.columns = out[0];
  } else if (x.shape.rank() == 2 && out.rank() == 2 && out[0] == x.shape[0]) {
    plan.rows = x.shape[0];
    plan.row_length = x.shape[1];
    plan.columns = out[1];
  } else {
    return node.error(StatusCode::kInvalidModel, "X ", x.shape.to_string(), " and Y ",
                      out.to_string(), " must be [N] → [C] or [B, N] → [B, C]");
  }
  plan.min_gram = attributes.get_int("min_gram_length", 1);
  plan.max_gram = attributes.get_int("max_gram_length", 1);
  plan.max_skip = attributes.get_int("max_skip_count", 0);
  if (plan.min_gram < 1 || plan.max_gram < plan.min_gram || plan.max_skip < 0) {
    return node.error(StatusCode::kInvalidModel,
                      "need 1 <= min_gram_length <= ", "max_gram_length and max_skip_count >= 0");
  }
  const std::string mode = attributes.get_string("mode", "TF");
  if (mode == "IDF") {
    plan.mode = TfIdfMode::kIdf;
  } else if (mode == "TFIDF") {
    plan.mode = TfIdfMode::kTfIdf;
  } else if (mode != "TF") {
    return node.error(StatusCode::kInvalidModel, "mode must be TF, IDF or TFIDF, got '", mode, "'");
  }
  if (attributes.has("pool_strings")) {
    return node.error(StatusCode::kUnsupported, "pool_strings (string tokens) is not supported");
  }
  ONEPOOL_RETURN_IF_ERROR(build_trie(node, plan));
  // Weights are per n-gram in pool order; the kernel wants them per output column.
  const std::vector<float> weights = attributes.get_floats("weights");
  if (!weights.empty()) {
    const std::vector<int64_t> indexes = attributes.get_ints("ngram_indexes");
    if (weights.size() != indexes.size()) {
      return node.error(StatusCode::kInvalidModel, "weights has ", weights.size(),
                        " entries, ngram_indexes ", indexes.size());
    }
    plan.weights.assign(static_cast<size_t>(plan.columns), 1.0f);
    for (size_t i = 0; i < indexes.size(); ++i) {
      if (indexes[i] < 0 || indexes[i] >= plan.columns) {
        return node.error(StatusCode::kInvalidModel, "ngram_indexes[", i, "] = ", indexes[i],
                          " is not an output column (0 to ", plan.columns - 1, ")");
      }
      plan.weights[static_cast<size_t>(indexes[i])] = weights[i];
    }
  }
  PreparedKernel prepared;
  if (x.dtype == DType::kInt32) {
    prepared.kernel = std::make_unique<TfIdfKernel<int32_t>>(std::move(plan));
  } else {
    prepared.kernel = std::make_unique<TfIdfKernel<int64_t>>(std::move(plan));
  }
  return prepared;
}

}  // namespace

void register_tfidf_vectorizer_kernel(KernelRegistry& registry) {
  registry.add("TfIdfVectorizer", &make_tfidf_vectorizer_kernel);
}

}  // namespace onepool::cpu
