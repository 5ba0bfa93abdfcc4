// Einsum: any equation over any number of inputs, with "..." (broadcast dims), repeated labels
// in one input (diagonals), implicit output (labels seen once, in alphabetical order, after the
// "..." dims) and explicit "->" output.
//
// Prepare parses the equation into label ids; each label gets a size and, per input, a stride
// (the sum of the strides of that input's dims carrying the label: a repeated label walks the
// diagonal; a broadcast dim of size 1 has stride 0). Run walks the output labels, and for each
// output element sums the product of the inputs over the labels that are summed out.
//
// Cost: O(product of every label's size × inputs) multiply-adds, no workspace. That is the cost
// of the equation itself for diagonals, transposes, reductions and inner products; a large
// contraction (a matmul written as Einsum) runs this loop rather than a GEMM, several times
// slower than MatMul on the same sizes. Threads split the output elements.
#include <algorithm>
#include <array>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/cpu/kernel_registry.h"
#include "runtime/cpu/kernels/elementwise_dtype.h"

namespace onepool::cpu {
namespace {

constexpr int kMaxLabels = 64;  // 52 letters + the "..." dims (at most Shape::kMaxRank)
constexpr int kMaxInputs = 8;

// Label ids: 'a'..'z' → 0..25, 'A'..'Z' → 26..51, the i-th "..." dim (from the left, over the
// widest "...") → 52 + i.
constexpr int kEllipsisBase = 52;

struct EinsumTerm {
  std::vector<int> labels;  // one per dim of the tensor (after expanding "...")
};

struct EinsumPlan {
  int label_count = 0;                      // labels used (ids remapped to 0..n-1)
  int output_labels = 0;                    // the first output_labels ids are the output's
  std::array<int64_t, kMaxLabels> sizes{};  // per label
  std::vector<std::array<int64_t, kMaxLabels>> strides;  // per input, per label
  int64_t output_count = 1;
  int64_t reduce_count = 1;
};

int letter_id(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

// Parses one term ("ij", "...ii", "b...") for a tensor of `rank` dims; "..." covers the dims the
// letters leave, right-aligned against the widest "..." (`ellipsis_rank`).
Expected<EinsumTerm> parse_term(const NodeContext& node, const std::string& term, int rank,
                                int ellipsis_rank, bool is_output) {
  EinsumTerm result;
  int letters = 0;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term[i] == '.') {
      if (ellipsis || term.compare(i, 3, "...") != 0) {
        return node.error(StatusCode::kInvalidModel, "equation term '", term,
                          "': '.' only as one '...'");
      }
      ellipsis = true;
      i += 2;
      continue;
    }
    if (letter_id(term[i]) < 0) {
      return node.error(StatusCode::kInvalidModel, "equation term '", term,
                        "': unexpected character '", term[i], "'");
    }
    ++letters;
  }
  const int covered = is_output ? ellipsis_rank : rank - letters;
  if (!is_output && (covered < 0 || (!ellipsis && covered != 0))) {
    return node.error(StatusCode::kInvalidModel, "equation term '", term, "' has ", letters,
                      " labels for an input of rank ", rank);
  }
  for (size_t i = 0; i < term.size(); ++i) {
    if (term[i] == '.') {
      for (int d = 0; d < covered; ++d) {
        result.labels.push_back(kEllipsisBase + ellipsis_rank - covered + d);
      }
      i += 2;
      continue;
    }
    result.labels.push_back(letter_id(term[i]));
  }
  return result;
}

std::string without_spaces(const std::string& text) {
  std::string result;
  for (char c : text) {
    if (c != ' ') result.push_back(c);
  }
  return result;
}

std::vector<std::string> split_terms(const std::string& text) {
  std::vector<std::string> terms(1);
  for (char c : text) {
    if (c == ',') {
      terms.emplace_back();
      continue;
    }
    terms.back().push_back(c);
  }
  return terms;
}

Expected<EinsumPlan> make_einsum_plan(const NodeContext& node) {
  // Step 1. Split "inputs->output" and check the input count.
  const std::string equation = without_spaces(node.node().attributes.get_string("equation", ""));
  const size_t arrow = equation.find("->");
  const std::vector<std::string> input_terms = split_terms(equation.substr(0, arrow));
  const size_t inputs = node.input_count();
  if (input_terms.size() != inputs || inputs == 0 || inputs > kMaxInputs) {
    return node.error(StatusCode::kInvalidModel, "equation '", equation, "' has ",
                      input_terms.size(), " input terms for ", inputs, " inputs (1 to ", kMaxInputs,
                      " supported)");
  }
  // Step 2. Parse the input terms; "..." spans the widest broadcast rank.
  int ellipsis_rank = 0;
  for (size_t k = 0; k < inputs; ++k) {
    if (!node.has_input(k))
      return node.error(StatusCode::kInvalidModel, "input ", k, " is missing");
    int letters = 0;
    for (char c : input_terms[k]) letters += letter_id(c) >= 0 ? 1 : 0;
    ellipsis_rank = std::max(ellipsis_rank, node.input(k).shape.rank() - letters);
  }
  std::vector<EinsumTerm> terms;
  for (size_t k = 0; k < inputs; ++k) {
    ONEPOOL_ASSIGN_OR_RETURN(
        EinsumTerm term,
        parse_term(node, input_terms[k], node.input(k).shape.rank(), ellipsis_rank, false));
    terms.push_back(std::move(term));
  }
  // Step 3. The output term: explicit, or "..." then the letters seen once, sorted.
  std::array<int, kMaxLabels> occurrences{};
  for (const auto& term : terms) {
    for (int label : term.labels) ++occurrences[static_cast<size_t>(label)];
  }
  EinsumTerm output;
  if (arrow != std::string::npos) {
    ONEPOOL_ASSIGN_OR_RETURN(output,
                             parse_term(node, equation.substr(arrow + 2), 0, ellipsis_rank, true));
  } else {
    for (int d = 0; d < ellipsis_rank; ++d) output.labels.push_back(kEllipsisBase + d);
    for (int label = 0; label < kEllipsisBase; ++label) {
      if (occurrences[static_cast<size_t>(label)] == 1) output.labels.push_back(label);
    }
  }
  // Step 4. Number the labels: output labels first (in output order), then the summed ones.
  std::array<int, kMaxLabels> id;
  id.fill(-1);
  EinsumPlan plan;
  for (int label : output.labels) {
    if (id[static_cast<size_t>(label)] >= 0 ||
        (label < kEllipsisBase && occurrences[static_cast<size_t>(label)] == 0)) {
      return node.error(StatusCode::kInvalidModel, "equation '", equation,
                        "': output labels must be distinct and appear in an input");
    }
    id[static_cast<size_t>(label)] = plan.label_count++;
  }
  plan.output_labels = plan.label_count;
  for (int label = 0; label < kMaxLabels; ++label) {
    if (occurrences[static_cast<size_t>(label)] > 0 && id[static_cast<size_t>(label)] < 0) {
      id[static_cast<size_t>(label)] = plan.label_count++;
    }
  }
  // Step 5. Sizes (a letter's dims must agree; a "..." dim broadcasts from 1) and strides.
  plan.sizes.fill(1);
  std::array<bool, kMaxLabels> sized{};
  for (size_t k = 0; k < inputs; ++k) {
    const Shape& shape = node.input(k).shape;
    for (int d = 0; d < shape.rank(); ++d) {
      const int label = terms[k].labels[static_cast<size_t>(d)];
      const auto slot = static_cast<size_t>(id[static_cast<size_t>(label)]);
      const bool broadcast = label >= kEllipsisBase;
      if (broadcast && shape[d] == 1) continue;
      if (sized[slot] && plan.sizes[slot] != shape[d] && !(broadcast && plan.sizes[slot] == 1)) {
        return node.error(StatusCode::kInvalidModel, "input ", k, " '", node.input(k).name, "' ",
                          shape.to_string(), ": dim ", d, " is ", shape[d], ", another has ",
                          plan.sizes[slot], " for the same label");
      }
      plan.sizes[slot] = shape[d];
      sized[slot] = true;
    }
  }
  plan.strides.resize(inputs);
  for (size_t k = 0; k < inputs; ++k) {
    auto& strides = plan.strides[k];
    strides.fill(0);
    const Shape& shape = node.input(k).shape;
    int64_t stride = 1;
    for (int d = shape.rank() - 1; d >= 0; --d) {
      const int label = terms[k].labels[static_cast<size_t>(d)];
      if (shape[d] != 1) strides[static_cast<size_t>(id[static_cast<size_t>(label)])] += stride;
      stride *= shape[d];
    }
  }
  // Step 6. The output shape must be the output labels' sizes; the loop counts must fit.
  Shape expected;
  for (int i = 0; i < plan.output_labels; ++i) {
    expected.push_back(plan.sizes[static_cast<size_t>(i)]);
    plan.output_count *= plan.sizes[static_cast<size_t>(i)];
  }
  if (!node.has_output(0) || node.output(0).shape != expected) {
    return node.error(StatusCode::kInvalidModel, "output: expected shape ", expected.to_string(),
                      ", got ", node.has_output(0) ? node.output(0).shape.to_string() : "none");
  }
  for (int i = plan.output_labels; i < plan.label_count; ++i) {
    if (__builtin_mul_overflow(plan.reduce_count, plan.sizes[static_cast<size_t>(i)],
                               &plan.reduce_count)) {
      return node.error(StatusCode::kOutOfRange, "equation '", equation,
                        "': the summed labels' sizes overflow int64");
    }
  }
  return plan;
}

template <class T>
class EinsumKernel final : public Kernel {
 public:
  explicit EinsumKernel(EinsumPlan plan) : plan_(std::move(plan)) {}

  Status run(const RunContext& context) override {
    const size_t inputs = plan_.strides.size();
    std::array<const T*, kMaxInputs> data{};
    for (size_t k = 0; k < inputs; ++k) data[k] = context.inputs[k].as<const T>();
    T* out = context.outputs[0].as<T>();
    context.threads->parallel_for(plan_.output_count, 64, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) out[o] = static_cast<T>(element(data, o));
    });
    return Status::ok();
  }

 private:
  // Integers accumulate in uint64 so that overflow wraps (as int32 arithmetic is defined to in
  // ONNX Runtime) instead of being undefined; the cast back keeps the low bits.
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;

  // The output element `o`: the sum over the summed labels of the product of the inputs.
  Acc element(const std::array<const T*, kMaxInputs>& data, int64_t o) const {
    const size_t inputs = plan_.strides.size();
    std::array<int64_t, kMaxInputs> base{};
    int64_t rest = o;
    for (int i = plan_.output_labels - 1; i >= 0; --i) {
      const int64_t size = plan_.sizes[static_cast<size_t>(i)];
      const int64_t index = rest % size;
      rest /= size;
      for (size_t k = 0; k < inputs; ++k)
        base[k] += index * plan_.strides[k][static_cast<size_t>(i)];
    }
    std::array<int64_t, kMaxLabels> coord{};
    std::array<int64_t, kMaxInputs> offset = base;
    Acc sum = Acc(0);
    for (int64_t r = 0; r < plan_.reduce_count; ++r) {
      Acc product = Acc(1);
      for (size_t k = 0; k < inputs; ++k) product = product * static_cast<Acc>(data[k][offset[k]]);
      sum = sum + product;
      // Advance the summed labels' odometer, moving each input's offset with it.
      for (int i = plan_.label_count - 1; i >= plan_.output_labels; --i) {
        const auto slot = static_cast<size_t>(i);
        for (size_t k = 0; k < inputs; ++k) offset[k] += plan_.strides[k][slot];
        if (++coord[slot] < plan_.sizes[slot]) break;
        for (size_t k = 0; k < inputs; ++k) offset[k] -= plan_.strides[k][slot] * plan_.sizes[slot];
        coord[slot] = 0;
      }
    }
    return sum;
  }

  EinsumPlan plan_;
};

Expected<PreparedKernel> make_einsum_kernel(const NodeContext& node) {
  ONEPOOL_ASSIGN_OR_RETURN(EinsumPlan plan, make_einsum_plan(node));
  const DType dtype = node.input(0).dtype;
  for (size_t k = 1; k < node.input_count(); ++k) {
    ONEPOOL_RETURN_IF_ERROR(require_input_dtype(node, k, dtype));
  }
  ONEPOOL_RETURN_IF_ERROR(require_output_dtype(node, 0, dtype));
  constexpr DTypeSet kEinsumTypes = kFloatTypes | dtype_bit(DType::kInt32) |
                                    dtype_bit(DType::kInt64) | dtype_bit(DType::kUInt32) |
                                    dtype_bit(DType::kUInt64);
  return visit_dtype<kEinsumTypes>(node, describe_input(node, 0), dtype,
                                   [&](auto tag) -> Expected<PreparedKernel> {
                                     using T = typename decltype(tag)::type;
                                     PreparedKernel prepared;
                                     prepared.kernel = std::make_unique<EinsumKernel<T>>(plan);
                                     return prepared;
                                   });
}

}  // namespace

void register_einsum_kernel(KernelRegistry& registry) {
  registry.add("Einsum", &make_einsum_kernel);
}

}  // namespace onepool::cpu
