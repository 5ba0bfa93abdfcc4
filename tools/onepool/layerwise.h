// `onepool compare --layerwise`: every intermediate tensor made a graph output, and the first
// node, in the candidate's execution order, whose output differs from the reference's.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "onepool/onepool.h"
#include "planner/core/graph.h"
#include "tools/onepool/tensor_compare.h"

namespace onepool::cli {

/// A copy of `model` whose outputs are its own followed by every other tensor a node produces,
/// in execution order. The nodes are those of `model` as loaded (optimized already: it is not
/// optimized again, so what optimization fused away stays away); the plan keeps every tensor to
/// the end of the run, so in-place kernels and reuse are off for them. `options` gives the
/// tensor budget; its optimize level and schedule are ignored.
Expected<std::shared_ptr<const Model>> with_intermediate_outputs(const Model& model,
                                                                 const LoadOptions& options);

/// A tensor that differs element by element (|a - e| > atol + rtol * |e| somewhere).
struct TensorDifference {
  std::string node;  ///< the candidate node that produced it
  std::string op;
  std::string tensor;
  double max_abs_diff = 0.0;
  double scale = 0.0;  ///< the reference tensor's largest |value|
};

/// The first candidate tensor that differs from the reference tensor of the same name beyond
/// atol + rtol * (the reference tensor's largest |value|).
struct Divergence {
  bool found = false;
  std::string node;            ///< the candidate node that produced it
  std::string op;              ///< its op (a fused one: "Conv" with its Relu inside)
  std::string tensor;          ///< the tensor's name, the same in both runs
  std::string reference_node;  ///< the reference node that produced it ("node 'x' (Relu)")
  Comparison comparison;
  double scale = 0.0;         ///< the reference tensor's largest |value|
  int compared = 0;           ///< tensors present in both runs, compared up to and with it
  int candidate_only = 0;     ///< candidate tensors with no reference one (renamed by a fusion)
  double largest_diff = 0.0;  ///< the largest max abs diff among the compared tensors
  std::string largest_at;     ///< the tensor it was found in
  /// The first tensor, up to the divergence, that differs only element by element (a rounding
  /// difference in a result that cancels): reported, not counted as a divergence.
  bool elementwise_found = false;
  TensorDifference elementwise;
  /// Every tensor compared, in order (`compare --layerwise -v` prints them).
  std::vector<TensorDifference> tensors;
};

/// Walks the candidate's nodes in execution order and compares each output that the reference
/// also has, by name; stops at the first that differs beyond atol + rtol * max |e|. Rounding in
/// a sum grows with its terms, not with its result, so an intermediate whose values cancel (a
/// residual Add near 0) is held to its tensor's scale; the plain |a - e| <= atol + rtol * |e|
/// is applied too and its first failure noted.
/// `candidate_outputs` / `reference_outputs` follow each model's outputs() order.
Divergence first_divergence(const Model& candidate,
                            const std::vector<HostTensor>& candidate_outputs,
                            const Model& reference,
                            const std::vector<HostTensor>& reference_outputs, double atol,
                            double rtol);

}  // namespace onepool::cli
