// Storage aliasing: the rules of find_aliases on small graphs, and build_plan with aliasing on
// thousands of random graphs, each executed on its plan's pool and checked against a reference.
#include "planner/analysis/alias.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "onepool/plan.h"
#include "planner/analysis/build_plan.h"
#include "planner/analysis/liveness.h"
#include "planner/core/graph.h"

namespace onepool {
namespace {

// kPad: pads its input with kPadFront zero words in front and kPadBack behind.
enum class Kind : uint8_t { kUnary, kBinary, kView, kConcat, kPad };
constexpr int64_t kPadFront = 16;
constexpr int64_t kPadBack = 48;

// A graph of 1-D float32 values built node by node, with the sharing each node's kernel allows.
struct Builder {
  Graph graph;
  std::vector<Kind> kinds;  // per node
  NodeMemoryNeeds needs;

  ValueId value(int64_t length, ValueKind kind = ValueKind::kActivation) {
    Value value;
    value.name = str_cat("v", graph.values.size());
    value.dtype = DType::kFloat32;
    value.shape = {length};
    value.kind = kind;
    const ValueId id = graph.add_value(value);
    if (kind == ValueKind::kGraphInput) graph.inputs.push_back(id);
    return id;
  }
  ValueId node(Kind kind, std::vector<ValueId> inputs, int64_t length) {
    const ValueId out = value(length);
    Node node;
    node.name = str_cat("n", graph.nodes.size());
    node.op_type = kind == Kind::kUnary    ? "Relu"
                   : kind == Kind::kBinary ? "Add"
                   : kind == Kind::kView   ? "Reshape"
                   : kind == Kind::kPad    ? "Pad"
                                           : "Concat";
    node.inputs = std::move(inputs);
    node.outputs = {out};
    graph.nodes.push_back(std::move(node));
    kinds.push_back(kind);
    NodeAliasing can;
    // Binary nodes may overwrite either input, as the CPU's same-shape Add declares.
    can.in_place_inputs = kind == Kind::kBinary                         ? 0b11u
                          : kind == Kind::kUnary || kind == Kind::kView ? 0b01u
                                                                        : 0u;
    can.output_is_view = kind == Kind::kView;
    can.concat_in_place = kind == Kind::kConcat;
    can.in_place_grows = kind == Kind::kPad;
    needs.aliasing.push_back(can);
    return out;
  }
  void output(ValueId id) {
    graph.values[static_cast<size_t>(id)].is_graph_output = true;
    graph.outputs.push_back(id);
  }
  AliasedLiveness aliases(AliasKinds kinds) {
    graph.rebuild_edges();
    auto plain = compute_liveness(graph, needs, 256);
    REQUIRE(plain.has_value());
    auto aliased = find_aliases(graph, *plain, needs, kinds, 256);
    REQUIRE_MESSAGE(aliased.has_value(), aliased.status().to_string());
    return *aliased;
  }
};

Attribute axis_attribute(int64_t axis) {
  Attribute attribute;
  attribute.i = axis;
  return attribute;
}

constexpr AliasKinds kAll{.views = true, .in_place = true, .concat = true, .growing = true};

ValueStorage storage_of(const AliasedLiveness& aliased, ValueId id) {
  return aliased.storage[static_cast<size_t>(id)];
}

// x (input) -relu0-> a -reshape1-> b -relu2-> y (output), 64 floats = 256 B each. relu0 may not
// overwrite the graph input x; b is a view of a; relu2 overwrites b (its group {a, b} dies at
// step 2). One buffer holds a, b and y; x has its own: 2 records, naive 512 (plain: 4 records,
// naive 1024); the lower bound stays 512 (two 256 B tensors live at every step).
TEST_CASE("views and in place on a chain") {
  Builder g;
  const ValueId x = g.value(64, ValueKind::kGraphInput);
  const ValueId a = g.node(Kind::kUnary, {x}, 64);
  const ValueId b = g.node(Kind::kView, {a}, 64);
  const ValueId y = g.node(Kind::kUnary, {b}, 64);
  g.output(y);
  const AliasedLiveness all = g.aliases(kAll);
  CHECK(storage_of(all, x).root == x);
  CHECK(storage_of(all, a).root == a);
  CHECK(storage_of(all, b).root == a);
  CHECK(storage_of(all, y).root == a);
  CHECK(all.alias_count == 2);
  REQUIRE(all.liveness.records.size() == 2);
  CHECK(naive_bytes(all.liveness.records) == 512);
  CHECK(lower_bound_bytes(all.liveness.records) == 512);
  const AliasedLiveness views = g.aliases({.views = true});
  CHECK(storage_of(views, b).root == a);
  CHECK(storage_of(views, y).root == y);
  const AliasedLiveness none = g.aliases({});
  CHECK(none.alias_count == 0);
  CHECK(naive_bytes(none.liveness.records) == 1024);
  CHECK(lower_bound_bytes(none.liveness.records) == 512);
}

// In place is refused when the input is a graph output, is read at a later step, or is in the
// same group as another input of the node (add(a, view of a)).
TEST_CASE("in place refused: graph output, later reader, same group twice") {
  Builder g;
  const ValueId x = g.value(64, ValueKind::kGraphInput);
  const ValueId a = g.node(Kind::kUnary, {x}, 64);  // step 0
  g.output(a);
  const ValueId b = g.node(Kind::kUnary, {a}, 64);      // 1: a is a graph output
  const ValueId c = g.node(Kind::kUnary, {b}, 64);      // 2: b is read again at step 3
  const ValueId d = g.node(Kind::kBinary, {b, c}, 64);  // 3: b dies here: in place
  const ValueId e = g.node(Kind::kView, {d}, 64);       // 4
  const ValueId f = g.node(Kind::kBinary, {d, e}, 64);  // 5: e shares d's group
  g.output(f);
  const AliasedLiveness all = g.aliases(kAll);
  CHECK(storage_of(all, b).root == b);
  CHECK(storage_of(all, c).root == c);
  CHECK(storage_of(all, d).root == b);
  CHECK(storage_of(all, e).root == b);
  CHECK(storage_of(all, f).root == f);
}

// concat(a, o, b, c, x) -> joined along its only axis, slices at bytes 0, 256, 512, 912, 1168:
// a and b move into joined; o is a graph output, c's slice is not a multiple of 256 and x is a
// graph input, so those three are copied.
TEST_CASE("concat in place: aligned slices only, never a graph input or output") {
  Builder g;
  const ValueId x = g.value(64, ValueKind::kGraphInput);
  const ValueId a = g.node(Kind::kUnary, {x}, 64);
  const ValueId o = g.node(Kind::kUnary, {x}, 64);
  g.output(o);
  const ValueId b = g.node(Kind::kUnary, {x}, 100);
  const ValueId c = g.node(Kind::kUnary, {x}, 64);
  const ValueId joined = g.node(Kind::kConcat, {a, o, b, c, x}, 356);
  g.output(g.node(Kind::kUnary, {joined}, 356));
  const AliasedLiveness all = g.aliases(kAll);
  CHECK(storage_of(all, a).root == joined);
  CHECK(storage_of(all, a).offset == 0);
  CHECK(storage_of(all, o).root == o);
  CHECK(storage_of(all, b).root == joined);
  CHECK(storage_of(all, b).offset == 512);
  CHECK(storage_of(all, c).root == c);
  CHECK(storage_of(all, x).root == x);
  const AliasedLiveness no_concat = g.aliases({.views = true, .in_place = true});
  CHECK(storage_of(no_concat, a).root == a);
}

// Concats whose inputs are strided inside the output ([2, 64] joined along axis 1) share
// nothing. Flattened to 1-D, first = concat(a, b) takes a and b; second = concat(b, a) cannot
// (b sits at byte 512 of first, a's group is all of first); last = concat(first, second) takes
// both, so everything lives in last: a and first at 0, b at 512, second at 1024.
TEST_CASE("concat in place refused: strided output, input already inside another") {
  Builder g;
  const ValueId x = g.value(128, ValueKind::kGraphInput);
  const ValueId a = g.node(Kind::kUnary, {x}, 128);
  const ValueId b = g.node(Kind::kUnary, {x}, 128);
  const ValueId first = g.node(Kind::kConcat, {a, b}, 256);
  const ValueId second = g.node(Kind::kConcat, {b, a}, 256);
  const ValueId last = g.node(Kind::kConcat, {first, second}, 512);
  g.output(last);
  for (ValueId id : {a, b}) g.graph.values[static_cast<size_t>(id)].shape = {2, 64};
  for (ValueId id : {first, second}) g.graph.values[static_cast<size_t>(id)].shape = {2, 128};
  g.graph.values[static_cast<size_t>(last)].shape = {2, 256};
  for (size_t n = 2; n < 5; ++n) g.graph.nodes[n].attributes.set("axis", axis_attribute(1));
  CHECK(g.aliases(kAll).alias_count == 0);

  for (ValueId id : {a, b}) g.graph.values[static_cast<size_t>(id)].shape = {128};
  for (ValueId id : {first, second}) g.graph.values[static_cast<size_t>(id)].shape = {256};
  g.graph.values[static_cast<size_t>(last)].shape = {512};
  for (size_t n = 2; n < 5; ++n) g.graph.nodes[n].attributes.set("axis", axis_attribute(-1));
  const AliasedLiveness flat = g.aliases(kAll);
  CHECK(flat.alias_count == 4);
  CHECK(storage_of(flat, a).root == last);
  CHECK(storage_of(flat, a).offset == 0);
  CHECK(storage_of(flat, first).root == last);
  CHECK(storage_of(flat, b).offset == 512);
  CHECK(storage_of(flat, second).root == last);
  CHECK(storage_of(flat, second).offset == 1024);
}

// pad(a) takes over a's bytes and extends past them (a dies there): one group holding a, the
// pad output and c (in place over it), from a's first step. Refused: pad(x) of a graph input,
// pad(c) of a value read again later, and pad(b) of a value at byte 256 of a Concat output.
TEST_CASE("growing in place: the larger output takes over a dying input from its start") {
  Builder g;
  const ValueId x = g.value(64, ValueKind::kGraphInput);
  const ValueId a = g.node(Kind::kUnary, {x}, 64);                // 0
  const ValueId padded = g.node(Kind::kPad, {a}, 128);            // 1: a dies here
  const ValueId from_input = g.node(Kind::kPad, {x}, 128);        // 2: x is a graph input
  const ValueId c = g.node(Kind::kUnary, {padded}, 128);          // 3: in place over padded
  const ValueId read_later = g.node(Kind::kPad, {c}, 192);        // 4: c is read at 9
  const ValueId b = g.node(Kind::kUnary, {read_later}, 64);       // 5
  const ValueId e = g.node(Kind::kUnary, {x}, 64);                // 6
  const ValueId joined = g.node(Kind::kConcat, {e, b}, 128);      // 7: b moves to byte 256
  const ValueId b_padded = g.node(Kind::kPad, {b}, 128);          // 8
  const ValueId sum = g.node(Kind::kBinary, {c, b_padded}, 128);  // 9
  g.output(g.node(Kind::kBinary, {from_input, sum}, 128));        // 10
  g.output(joined);
  const AliasedLiveness all = g.aliases(kAll);
  CHECK(storage_of(all, padded).root == a);
  CHECK(storage_of(all, padded).offset == 0);
  CHECK(storage_of(all, c).root == a);
  CHECK(storage_of(all, from_input).root == from_input);
  CHECK(storage_of(all, read_later).root == read_later);
  CHECK(storage_of(all, b).root == joined);
  CHECK(storage_of(all, b).offset == 256);
  CHECK(storage_of(all, b_padded).root == b_padded);
  const AliasedLiveness no_growing = g.aliases({.views = true, .in_place = true, .concat = true});
  CHECK(storage_of(no_growing, padded).root == padded);
}

// --- Random graphs, executed on the plan. ---

// Word i of every value: inputs from a seed, unary 3v+1, binary a+7b, view and concat copy.
using Words = std::vector<uint32_t>;

Words reference_output(Kind kind, const std::vector<const Words*>& in) {
  Words out;
  if (kind == Kind::kPad) {
    out.assign(static_cast<size_t>(kPadFront), 0);
    out.insert(out.end(), in[0]->begin(), in[0]->end());
    out.resize(out.size() + static_cast<size_t>(kPadBack), 0);
    return out;
  }
  if (kind == Kind::kConcat) {
    for (const Words* part : in) out.insert(out.end(), part->begin(), part->end());
    return out;
  }
  out = *in[0];
  for (size_t i = 0; i < out.size(); ++i) {
    if (kind == Kind::kUnary) out[i] = 3 * out[i] + 1;
    if (kind == Kind::kBinary) out[i] = out[i] + 7 * (*in[1])[i];
  }
  return out;
}

// Runs node n the way the CPU kernels do: element i read, then written; copies skipped when the
// bytes are already in place.
void run_on_pool(Kind kind, std::vector<uint32_t*> in, const std::vector<size_t>& lengths,
                 uint32_t* out) {
  if (kind == Kind::kPad) {  // from the last element down, as the in-place Pad does
    const size_t length = lengths[0] + static_cast<size_t>(kPadFront + kPadBack);
    for (size_t o = length; o-- > 0;) {
      const size_t i = o - static_cast<size_t>(kPadFront);
      out[o] = o >= static_cast<size_t>(kPadFront) && i < lengths[0] ? in[0][i] : 0;
    }
    return;
  }
  if (kind == Kind::kConcat) {
    for (size_t p = 0; p < in.size(); ++p) {
      if (in[p] != out) std::memcpy(out, in[p], lengths[p] * 4);
      out += lengths[p];
    }
    return;
  }
  for (size_t i = 0; i < lengths[0]; ++i) {
    if (kind == Kind::kView) out[i] = in[0][i];
    if (kind == Kind::kUnary) out[i] = 3 * in[0][i] + 1;
    if (kind == Kind::kBinary) out[i] = in[0][i] + 7 * in[1][i];
  }
}

Builder random_graph(std::mt19937& rng) {
  Builder g;
  const int64_t lengths[] = {64, 128, 100, 192};
  std::vector<ValueId> pool = {g.value(64, ValueKind::kGraphInput),
                               g.value(128, ValueKind::kGraphInput)};
  const int nodes = 4 + static_cast<int>(rng() % 30);
  auto pick = [&] {  // biased to recent values
    const size_t back = std::min<size_t>(pool.size(), 1 + rng() % 6);
    return pool[pool.size() - back];
  };
  for (int n = 0; n < nodes; ++n) {
    const ValueId a = pick();
    const int64_t length = g.graph.values[static_cast<size_t>(a)].shape[0];
    const auto kind = static_cast<Kind>(rng() % 5);
    if (kind == Kind::kBinary) {
      ValueId b = pick();
      if (g.graph.values[static_cast<size_t>(b)].shape[0] != length) b = a;
      pool.push_back(g.node(Kind::kBinary, {a, b}, length));
    } else if (kind == Kind::kConcat) {
      const ValueId b = pick();
      pool.push_back(
          g.node(Kind::kConcat, {a, b}, length + g.graph.values[static_cast<size_t>(b)].shape[0]));
    } else if (kind == Kind::kPad) {
      pool.push_back(g.node(Kind::kPad, {a}, length + kPadFront + kPadBack));
    } else {
      pool.push_back(g.node(kind, {a}, length));
    }
    if (rng() % 8 == 0) pool.push_back(g.value(lengths[rng() % 4], ValueKind::kGraphInput));
  }
  g.output(pool.back());
  if (rng() % 2 == 0 && pool[pool.size() / 2] != pool.back()) g.output(pool[pool.size() / 2]);
  g.graph.rebuild_edges();
  return g;
}

size_t pool_offset(const Plan& plan, ValueId id) {
  const PlannedTensor& tensor = plan.tensors[static_cast<size_t>(plan.find_tensor(id))];
  if (tensor.alias_of < 0) return tensor.offset;
  const PlannedTensor& owner = plan.tensors[static_cast<size_t>(plan.find_tensor(tensor.alias_of))];
  return owner.offset + tensor.alias_offset;
}

// Executes the graph on the plan's pool; every input a node reads and every graph output at the
// end must equal the reference. Returns false (after a FAIL message) on the first difference.
bool runs_correctly(const Builder& g, const Plan& plan, std::mt19937& rng) {
  const Graph& graph = g.graph;
  std::vector<Words> expected(graph.values.size());
  std::vector<uint32_t> pool(plan.pool_bytes / 4 + 1, 0xdeadbeef);
  auto words = [&](ValueId id) { return pool.data() + pool_offset(plan, id) / 4; };
  auto length = [&](ValueId id) {
    return static_cast<size_t>(graph.values[static_cast<size_t>(id)].shape[0]);
  };
  auto holds_expected = [&](ValueId id) {
    return std::memcmp(words(id), expected[static_cast<size_t>(id)].data(), length(id) * 4) == 0;
  };
  for (ValueId id : graph.inputs) {
    Words& value = expected[static_cast<size_t>(id)];
    for (size_t i = 0; i < length(id); ++i) value.push_back(static_cast<uint32_t>(rng()));
    std::memcpy(words(id), value.data(), length(id) * 4);
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    std::vector<const Words*> reference;
    std::vector<uint32_t*> in;
    std::vector<size_t> lengths;
    for (ValueId id : node.inputs) {
      if (!holds_expected(id)) {
        FAIL("step ", n, " reads ", graph.values[static_cast<size_t>(id)].name, ": overwritten");
        return false;
      }
      reference.push_back(&expected[static_cast<size_t>(id)]);
      in.push_back(words(id));
      lengths.push_back(length(id));
    }
    expected[static_cast<size_t>(node.outputs[0])] = reference_output(g.kinds[n], reference);
    run_on_pool(g.kinds[n], in, lengths, words(node.outputs[0]));
  }
  for (ValueId id : graph.outputs) {
    if (!holds_expected(id)) {
      FAIL("graph output ", graph.values[static_cast<size_t>(id)].name, " is wrong");
      return false;
    }
  }
  return true;
}

// 2,000 random graphs of 4-33 nodes: the plan verifies, its pool never exceeds the plain pool,
// the bounds are consistent, and running on the pool gives the reference results.
TEST_CASE("random graphs: aliased plans verify, never exceed plain, and compute correctly") {
  std::mt19937 rng(2024);
  size_t aliased_plans = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const Builder g = random_graph(rng);
    PlanOptions options;
    options.algorithm = trial % 2 == 0 ? "auto" : "greedy-by-size";
    auto plan = build_plan(g.graph, options, g.needs);
    REQUIRE_MESSAGE(plan.has_value(), plan.status().to_string());
    REQUIRE_MESSAGE(plan->verified, plan->verify().to_string());
    CHECK(plan->pool_bytes <= plan->plain_pool_bytes);
    CHECK(plan->pool_bytes >= plan->lower_bound_bytes);
    CHECK(plan->plain_pool_bytes >= plan->plain_lower_bound_bytes);
    for (const PlannedTensor& tensor : plan->tensors) aliased_plans += tensor.alias_of >= 0;
    if (!runs_correctly(g, *plan, rng)) break;
    options.aliasing = false;
    auto plain = build_plan(g.graph, options, g.needs);
    REQUIRE(plain.has_value());
    CHECK(plain->lower_bound_bytes == plan->plain_lower_bound_bytes);
    CHECK(plain->tensors.size() == plan->tensors.size());
    if (options.algorithm == "greedy-by-size") CHECK(plain->pool_bytes == plan->plain_pool_bytes);
  }
  CHECK(aliased_plans > 1000);  // the sharing is exercised, not only refused
}

// The JSON form carries alias_of and alias_offset, and a parsed plan still verifies.
TEST_CASE("an aliased plan round-trips through JSON") {
  Builder g;
  const ValueId x = g.value(64, ValueKind::kGraphInput);
  const ValueId a = g.node(Kind::kUnary, {x}, 64);
  const ValueId b = g.node(Kind::kUnary, {x}, 64);
  const ValueId c = g.node(Kind::kConcat, {a, b}, 128);
  g.output(g.node(Kind::kView, {c}, 128));
  g.graph.rebuild_edges();
  auto plan = build_plan(g.graph, PlanOptions{}, g.needs);
  REQUIRE(plan.has_value());
  auto parsed = Plan::from_json(plan->to_json());
  REQUIRE_MESSAGE(parsed.has_value(), parsed.status().to_string());
  CHECK(parsed->verify().is_ok());
  const PlannedTensor& tensor_b = parsed->tensors[static_cast<size_t>(parsed->find_tensor(b))];
  CHECK(tensor_b.alias_of == c);
  CHECK(tensor_b.alias_offset == 256);
  CHECK(tensor_b.bytes == 0);
  CHECK(parsed->plain_pool_bytes == plan->plain_pool_bytes);
  CHECK(parsed->plain_lower_bound_bytes == plan->plain_lower_bound_bytes);
  CHECK(parsed->to_json() == plan->to_json());
}

}  // namespace
}  // namespace onepool
