// The best-fit engine behind every greedy order: place_greedy_in_order().
//
// For each record (in the given order) the engine needs the address union of the already placed
// records that share a step with it, to place the record in the smallest gap that fits (lowest
// offset on ties) or, when none fits, on top of the highest one.
//
// The records live at some step of [lo, hi] are those live at step lo plus those starting in
// (lo, hi]; the two sets are disjoint. Records with the same lifetime form one group with one
// address union. Steps are cut into blocks, with a segment tree over the blocks (PlacedByTime):
//  - live at lo: the groups covering lo's whole block sit in the unions of the tree nodes on the
//    block's root path (the top levels' unions, which change rarely, also kept merged per path);
//    the placed groups that cover the block only partly are in the block's edge list, which also
//    holds every group starting in (lo, hi] inside lo's block;
//  - starting after lo's block: in hi's block, from that block's edge list (the groups starting
//    after its first step; those starting at it are read by first step); in the blocks between,
//    per-node unions of the groups starting under the node, brought up to date lazily (the runs
//    inserted since the last read wait in a per-node list).
// The lists are read in place, each sorted by address (the edge lists are kept in address order,
// so the runs they give need no sorting). Best fit merges them smallest first, and the last merge
// feeds the best-fit scan directly (RunCollector, BestFitScan in address_runs.h). First fit
// merges all but the longest and the edge lists the same way, then reads those few lists in
// turns only up to the first gap that fits (FirstFitCursor): the edge lists, the bulk of the
// runs when many records start per step, are filtered as they are read, and their entries above
// the gap are never touched.
//
// Addresses are counted in units of the gcd of the sizes, in 32 bits when the sum of all sizes
// fits (the usual case: half the memory traffic of 64-bit runs), else in 64 bits. Both give the
// same offsets: scaling every size and address by one factor changes no comparison.
//
// Cost: O(n + steps) to compress steps and group lifetimes (O(n log n) when steps are sparse);
// per record O(log B) union updates and a query over the Q runs of the k lists read (B blocks,
// k <= 2 log B + 3 plus the groups with several records): O(Q log Q) at worst, O(Q k) merging.
// First fit reads the edge entries and the longest list only up to the gap it picks, in turns
// that each move the cursor: O(Q k) as well at worst, much less when the gap is low.
// On DNN-like instances Q is about the number of records live at one step; when every record is
// live at once Q is 1. Fragmented unions (uniformly random long lifetimes) are the slow case: Q
// grows towards n.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

#include "planner/algo/address_runs.h"
#include "planner/algo/algorithms.h"

namespace onepool {
namespace {

// Steps per block of the time index (see PlacedByTime).
constexpr size_t kBlockSteps = 64;
// Edge entries a first-fit query takes at once (see PlacedByTime::pass_edges).
constexpr std::ptrdiff_t kEdgeChunk = 8;
// Runs a node of the starts index may hold back before it is rebuilt from its children.
constexpr size_t kMaxPendingRuns = 1024;
// Levels of the tree, from the root, whose cover unions are kept merged per path (see
// PlacedByTime::append_top).
constexpr size_t kMergedTopLevels = 8;
// Up to this many waiting runs are added one by one (a search and a move each), not sorted and
// merged with the whole union.
constexpr size_t kMaxPendingAdds = 8;

// Placed records indexed by time. Records with the same lifetime share one `Group` and one
// address union, so identical lifetimes (e.g. everything live at once) cost a single run.
//
// Steps are cut into blocks of kBlockSteps; a segment tree over the blocks holds
//  - `cover_`: the union of the groups whose lifetime covers every step of the node's blocks
//    (each group in the O(log B) nodes of its fully covered block range);
//  - `starts_`: the union of the groups starting in the node's blocks, brought up to date only
//    when a query reads the node (inserts just queue their run in the node's `pending_`);
//  - `top_unions_`: for each node kMergedTopLevels below the root, the union of `cover_` over
//    its path from the root, rebuilt when the path changed (`cover_versions_`).
// A placed group that covers a block only partly is listed in that block's `edges_` (at most
// two blocks per group).
//
// Records are placed in a size-like order, so consecutive records hit unrelated groups: the
// data a query reads is laid out to avoid those cache misses. Lifetimes are kept in placement
// order, and an edge entry is 16 bytes (32-bit words) with its group's single run inline.
template <class Word>
class PlacedByTime {
 public:
  using Run = AddressRun<Word>;

  // `lifetimes` holds (lo, hi) compressed steps of the records in placement order; `steps` is
  // the number of compressed steps.
  PlacedByTime(std::span<const std::pair<int32_t, int32_t>> lifetimes, size_t steps);

  // Marks record k (in placement order) as placed at `run`.
  void insert(size_t k, Run run);

  // Appends the runs of every placed record live at some step of record k's lifetime (runs
  // from different lists may overlap). The lists are read in place: `out` stays valid until
  // the next insert or collect.
  void collect(size_t k, RunCollector<Word>& out) { collect_into(k, out); }

  // First fit for record k: the lowest offset where `bytes` overlap no placed record live at
  // some step of its lifetime, else the end of the highest one. The same lists as collect(),
  // read lazily (see FirstFitCursor): only up to the gap that fits.
  Word first_fit(size_t k, Word bytes);

  // Starts loading the group record k will be inserted into. Records come in size order, not in
  // time order, so the group is a cache miss; started a record ahead, it is not waited for.
  void prefetch(size_t k) const {
    const auto group = static_cast<size_t>(group_of_[k]);
    __builtin_prefetch(&groups_[group]);
  }

 private:
  // Most groups hold one record: its run is kept inline, the union (in unions_) only from the
  // second on.
  struct Group {
    uint32_t placed = 0;
    int32_t union_index = -1;
    Run single{0, 0};
  };
  // A placed group in a block's edge list: its lifetime clipped to the block, relative to the
  // block's first step. A block's entries are kept in order of `single.begin`, so the single
  // runs a query keeps need no sorting; for a group of 2+ records `single` is its union's lowest
  // run (see mark_several).
  struct EdgeEntry {
    uint8_t lo;
    uint8_t hi;
    uint8_t several;        // the group holds 2+ records: read its union, not `single`
    uint8_t starts_inside;  // the group starts after the block's first step
    int32_t group;
    Run single;
  };
  static_assert(kBlockSteps <= 256, "edge entries store steps within a block in 8 bits");
  // The entries of an edge list a query keeps: those live at some step of [lo, hi] (relative to
  // the block's first step), and with `inside_only` only those starting after that step.
  struct EdgeFilter {
    int32_t lo;
    int32_t hi;
    uint8_t inside_only;
    bool operator()(const EdgeEntry& entry) const {
      return (entry.lo <= hi) & (lo <= entry.hi) & (entry.starts_inside >= inside_only);
    }
  };
  // The lists of a first-fit query, each with the place it has been read up to. All but the edge
  // lists are gathered and merged but the longest (as for best fit), so that a turn reads a few
  // lists, not the dozens of tree nodes that long lifetimes fill.
  struct FirstFitLists {
    struct SortedList {
      const Run* next;
      const Run* end;
    };
    struct EdgeList {
      const EdgeEntry* next;
      const EdgeEntry* end;
      EdgeFilter live;
    };
    RunCollector<Word> gathered;
    std::vector<SortedList> sorted;
    std::vector<EdgeList> edges;

    void clear() {
      gathered.clear();
      sorted.clear();
      edges.clear();
    }
    void append(std::span<const Run> list) { gathered.append(list); }
    void append_one_if(bool keep, const Run& run) { gathered.append_one_if(keep, run); }
    // Another list to read while the query runs (a group's union found in an edge list).
    void append_to_read(std::span<const Run> list) {
      if (!list.empty()) sorted.push_back({list.data(), list.data() + list.size()});
    }
    // Merges the lists gathered into the two a query starts with.
    void merge_gathered() {
      for (std::span<const Run> list : gathered.merge_all_but_longest()) append_to_read(list);
    }
  };

  size_t block_of(int32_t step) const { return static_cast<size_t>(step) / kBlockSteps; }
  int32_t block_first(size_t block) const { return static_cast<int32_t>(block * kBlockSteps); }
  int32_t block_last(size_t block) const {
    return static_cast<int32_t>(std::min((block + 1) * kBlockSteps, steps_) - 1);
  }
  // Appends a group's runs. Most groups hold one run: the filter is branch-free for them, as
  // placement varies from one group to the next.
  template <class Out>
  void append_group(const Group& group, Out& out) const {
    out.append_one_if(group.placed == 1, group.single);
    if (group.placed > 1) out.append(unions_[static_cast<size_t>(group.union_index)].runs());
  }
  // Groups starting at steps [first, last].
  template <class Out>
  void append_starting(int32_t first, int32_t last, Out& out) const {
    const auto begin = group_starts_[static_cast<size_t>(first)];
    const auto end = group_starts_[static_cast<size_t>(last) + 1];
    for (int32_t index = begin; index < end; ++index) {
      append_group(groups_[static_cast<size_t>(index)], out);
    }
  }
  // Appends the runs of the entries of `block`'s edge list that `live` keeps, single runs to
  // ordered list `list` (in address order, as the entries are).
  void append_edges_if(size_t block, EdgeFilter live, size_t list, RunCollector<Word>& out) const {
    const EdgeEntry* const begin = edges_.data() + edge_starts_[block];
    const EdgeEntry* const end = begin + edge_counts_[block];
    Run* const singles = out.ordered_room(list, static_cast<size_t>(end - begin));
    size_t kept = 0;
    for (const EdgeEntry* entry = begin; entry != end; ++entry) {
      const bool keep = live(*entry);
      singles[kept] = entry->single;
      kept += static_cast<size_t>(keep & !entry->several);
      if (keep & (entry->several != 0)) {
        const Group& group = groups_[static_cast<size_t>(entry->group)];
        out.append(unions_[static_cast<size_t>(group.union_index)].runs());
      }
    }
    out.ordered_written(list, kept);
  }
  // The same for a first-fit query: the edge list is filtered as it is read.
  void append_edges_if(size_t block, EdgeFilter live, size_t, FirstFitLists& out) const {
    const EdgeEntry* const begin = edges_.data() + edge_starts_[block];
    if (edge_counts_[block] > 0) out.edges.push_back({begin, begin + edge_counts_[block], live});
  }
  // Moves `cursor` past the kept entries of an edge list that begin before its window's end; a
  // group of 2+ records becomes one more list to read. Whole chunks first: when a chunk's last
  // entry begins in the window so do all of its entries (they are in address order), and the
  // highest end kept is taken at once, without a chain of dependent steps from entry to entry.
  void pass_edges(typename FirstFitLists::EdgeList& edges, FirstFitCursor<Word>& cursor,
                  FirstFitLists& lists) const {
    const EdgeEntry* entry = edges.next;
    while (edges.end - entry >= kEdgeChunk &&
           entry[kEdgeChunk - 1].single.begin < cursor.window_end()) {
      Word highest = 0;
      bool several = false;
      for (std::ptrdiff_t i = 0; i < kEdgeChunk; ++i) {
        const bool live = edges.live(entry[i]);
        highest = std::max(highest, select(live & !entry[i].several, entry[i].single.end, Word{0}));
        several |= live & (entry[i].several != 0);
      }
      cursor.pass_to(highest);
      if (several) append_several_if(entry, entry + kEdgeChunk, edges.live, lists);
      entry += kEdgeChunk;
    }
    for (; entry != edges.end && entry->single.begin < cursor.window_end(); ++entry) {
      const bool live = edges.live(*entry);
      cursor.pass_if(live & !entry->several, entry->single);
      if (live & (entry->several != 0)) append_several_if(entry, entry + 1, edges.live, lists);
    }
    edges.next = entry;
  }
  // The unions of the groups of 2+ records among [begin, end) that `live` keeps, to read next.
  void append_several_if(const EdgeEntry* begin, const EdgeEntry* end, EdgeFilter live,
                         FirstFitLists& lists) const {
    for (const EdgeEntry* entry = begin; entry != end; ++entry) {
      if (!live(*entry) || entry->several == 0) continue;
      const Group& group = groups_[static_cast<size_t>(entry->group)];
      lists.append_to_read(unions_[static_cast<size_t>(group.union_index)].runs());
    }
  }
  template <class Out>
  void collect_into(size_t k, Out& out);
  template <class Out>
  void append_starting_in_last_block(size_t block, int32_t hi, Out& out);
  void make_groups(std::span<const std::pair<int32_t, int32_t>> lifetimes);
  void make_edge_room(size_t blocks);
  // The blocks the lifetime covers only partly (-1: none): the first and last blocks at most.
  std::array<int64_t, 2> edge_blocks(std::pair<int32_t, int32_t> lifetime) const {
    const auto [lo, hi] = lifetime;
    const size_t first_block = block_of(lo);
    const size_t last_block = block_of(hi);
    std::array<int64_t, 2> blocks = {-1, -1};
    if (lo != block_first(first_block) || hi < block_last(first_block)) {
      blocks[0] = static_cast<int64_t>(first_block);
    }
    if (last_block != first_block && hi != block_last(last_block)) {
      blocks[1] = static_cast<int64_t>(last_block);
    }
    return blocks;
  }
  void insert_into_group(size_t k, const Run& run);
  void add_edge(int32_t group_index, std::pair<int32_t, int32_t> lifetime, size_t block);
  void mark_several(int32_t group_index, size_t block, const Run& lowest);
  template <class Out>
  void append_top(size_t node, Out& out);
  const AddressRuns<Word>& fresh_starts(size_t node);
  void rebuild_starts(size_t node);

  size_t steps_;
  size_t leaves_ = 1;     // blocks, rounded up to a power of two
  size_t top_shift_ = 0;  // a leaf's ancestor at the lowest merged top level: leaf >> top_shift_
  std::vector<std::pair<int32_t, int32_t>> lifetimes_;        // per record, in placement order
  std::vector<int32_t> group_of_;                             // per record, in placement order
  std::vector<std::pair<int32_t, int32_t>> group_lifetimes_;  // sorted
  std::vector<Group> groups_;                                 // in the same order
  std::vector<AddressRuns<Word>> unions_;                     // of the groups with 2+ records
  std::vector<int32_t> group_starts_;  // groups starting at step s: [starts[s], starts[s + 1])
  // Edge entries of block b: edges_[edge_starts_[b] + i] for i < edge_counts_[b]. Room for
  // every group that may be listed is made up front; entries are filled in as groups are placed.
  std::vector<EdgeEntry> edges_;
  std::vector<int32_t> edge_starts_;
  std::vector<int32_t> edge_counts_;
  std::vector<AddressRuns<Word>> cover_;
  std::vector<uint64_t> cover_versions_;  // per node: how many times cover_ changed
  // For a node of the lowest merged top level: the union of cover_ over its path from the root,
  // and the sums of the path's versions when it was built and last read (a sum differs when a
  // node on the path changed since).
  struct TopUnion {
    AddressRuns<Word> runs;
    uint64_t built_at = std::numeric_limits<uint64_t>::max();
    uint64_t read_at = std::numeric_limits<uint64_t>::max();
  };
  std::vector<TopUnion> top_unions_;
  std::vector<AddressRuns<Word>> starts_;
  // starts_ is brought up to date lazily: runs inserted since the last query wait in pending_;
  // a node with too many waiting runs drops them and is rebuilt from its children instead.
  std::vector<std::vector<Run>> pending_;
  std::vector<uint8_t> rebuild_;
  AddressRuns<Word> merged_;
  RunCollector<Word> scratch_;
  FirstFitLists first_fit_lists_;
};

template <class Word>
PlacedByTime<Word>::PlacedByTime(std::span<const std::pair<int32_t, int32_t>> lifetimes,
                                 size_t steps)
    : steps_(std::max<size_t>(steps, 1)), lifetimes_(lifetimes.begin(), lifetimes.end()) {
  const size_t blocks = (steps_ + kBlockSteps - 1) / kBlockSteps;
  size_t height = 0;
  while (leaves_ < blocks) {
    leaves_ *= 2;
    ++height;
  }
  top_shift_ = height - std::min(height, kMergedTopLevels);
  cover_.resize(2 * leaves_);
  cover_versions_.assign(2 * leaves_, 0);
  top_unions_.resize(leaves_ >> top_shift_);
  starts_.resize(2 * leaves_);
  pending_.resize(2 * leaves_);
  rebuild_.assign(2 * leaves_, 0);
  make_groups(lifetimes);
  make_edge_room(blocks);
}

// One group per distinct lifetime, sorted by (lo, hi), indexed by first step. A counting sort
// by hi, then a stable one by lo: O(n + steps).
template <class Word>
void PlacedByTime<Word>::make_groups(std::span<const std::pair<int32_t, int32_t>> lifetimes) {
  const size_t count = lifetimes.size();
  std::vector<int32_t> by_hi(count);
  std::vector<int32_t> by_lifetime(count);
  std::vector<int32_t> starts(steps_ + 1, 0);
  for (const auto& lifetime : lifetimes) ++starts[static_cast<size_t>(lifetime.second) + 1];
  for (size_t s = 0; s < steps_; ++s) starts[s + 1] += starts[s];
  for (size_t k = 0; k < count; ++k) {
    by_hi[static_cast<size_t>(starts[static_cast<size_t>(lifetimes[k].second)]++)] =
        static_cast<int32_t>(k);
  }
  group_starts_.assign(steps_ + 1, 0);
  for (const auto& lifetime : lifetimes) ++group_starts_[static_cast<size_t>(lifetime.first) + 1];
  for (size_t s = 0; s < steps_; ++s) group_starts_[s + 1] += group_starts_[s];
  std::vector<int32_t> next(group_starts_.begin(), group_starts_.end() - 1);
  for (int32_t k : by_hi) {
    const size_t lo = static_cast<size_t>(lifetimes[static_cast<size_t>(k)].first);
    by_lifetime[static_cast<size_t>(next[lo]++)] = k;
  }
  // group_starts_ counted records so far; recount it in groups.
  group_of_.assign(count, 0);
  std::fill(group_starts_.begin(), group_starts_.end(), 0);
  for (int32_t k : by_lifetime) {
    const auto lifetime = lifetimes[static_cast<size_t>(k)];
    if (group_lifetimes_.empty() || group_lifetimes_.back() != lifetime) {
      group_lifetimes_.push_back(lifetime);
      ++group_starts_[static_cast<size_t>(lifetime.first) + 1];
    }
    group_of_[static_cast<size_t>(k)] = static_cast<int32_t>(group_lifetimes_.size() - 1);
  }
  for (size_t s = 0; s < steps_; ++s) group_starts_[s + 1] += group_starts_[s];
  groups_.resize(group_lifetimes_.size());
}

template <class Word>
void PlacedByTime<Word>::make_edge_room(size_t blocks) {
  edge_starts_.assign(blocks + 1, 0);
  edge_counts_.assign(blocks, 0);
  for (const auto& lifetime : group_lifetimes_) {
    for (const int64_t block : edge_blocks(lifetime)) {
      if (block >= 0) ++edge_starts_[static_cast<size_t>(block) + 1];
    }
  }
  for (size_t b = 0; b < blocks; ++b) edge_starts_[b + 1] += edge_starts_[b];
  edges_.resize(static_cast<size_t>(edge_starts_[blocks]));
}

// Lists a newly placed group in the edge list of a block it covers only partly, in order of
// its run's begin (a move of the later entries: a block lists a few dozen groups).
template <class Word>
void PlacedByTime<Word>::add_edge(int32_t group_index, std::pair<int32_t, int32_t> lifetime,
                                  size_t block) {
  const auto [lo, hi] = lifetime;
  const int32_t first = block_first(block);
  const Run& run = groups_[static_cast<size_t>(group_index)].single;
  EdgeEntry* const begin = edges_.data() + edge_starts_[block];
  EdgeEntry* const end = begin + edge_counts_[block]++;
  EdgeEntry* const at = std::upper_bound(
      begin, end, run.begin,
      [](Word value, const EdgeEntry& entry) { return value < entry.single.begin; });
  std::copy_backward(at, end, end + 1);
  *at = EdgeEntry{static_cast<uint8_t>(std::max(lo, first) - first),
                  static_cast<uint8_t>(std::min(hi, block_last(block)) - first),
                  0,
                  static_cast<uint8_t>(lo > first),
                  group_index,
                  run};
}

// Marks a group's entry in a block's edge list as holding 2+ records and moves it down to the
// place of the union's lowest run, which only gets lower: a first-fit query stops reading an
// edge list at the first entry beginning above its window, so a union must not sit higher.
template <class Word>
void PlacedByTime<Word>::mark_several(int32_t group_index, size_t block, const Run& lowest) {
  EdgeEntry* const begin = edges_.data() + edge_starts_[block];
  EdgeEntry* const end = begin + edge_counts_[block];
  EdgeEntry* const entry = std::find_if(
      begin, end, [group_index](const EdgeEntry& listed) { return listed.group == group_index; });
  EdgeEntry moved = *entry;
  moved.several = 1;
  moved.single = lowest;
  EdgeEntry* const at = std::upper_bound(
      begin, entry, lowest.begin,
      [](Word value, const EdgeEntry& listed) { return value < listed.single.begin; });
  std::copy_backward(at, entry, entry + 1);
  *at = moved;
}

template <class Word>
void PlacedByTime<Word>::insert_into_group(size_t k, const Run& run) {
  const int32_t group_index = group_of_[k];
  Group& group = groups_[static_cast<size_t>(group_index)];
  if (group.placed++ == 0) {
    group.single = run;
    for (const int64_t block : edge_blocks(lifetimes_[k])) {
      if (block >= 0) add_edge(group_index, lifetimes_[k], static_cast<size_t>(block));
    }
    return;
  }
  if (group.placed == 2) {
    group.union_index = static_cast<int32_t>(unions_.size());
    unions_.emplace_back().add(group.single.begin, group.single.end);
  }
  AddressRuns<Word>& runs = unions_[static_cast<size_t>(group.union_index)];
  const bool lower = group.placed == 2 || run.begin < runs.runs().front().begin;
  runs.add(run.begin, run.end);
  if (!lower) return;
  for (const int64_t block : edge_blocks(lifetimes_[k])) {
    if (block >= 0) mark_several(group_index, static_cast<size_t>(block), runs.runs().front());
  }
}

template <class Word>
void PlacedByTime<Word>::insert(size_t k, Run run) {
  insert_into_group(k, run);
  const auto [lo, hi] = lifetimes_[k];
  // Fully covered blocks: [first, end) after dropping the partly covered end blocks (those are
  // in edges_).
  const size_t first = block_of(lo) + (lo != block_first(block_of(lo)) ? 1 : 0);
  const size_t end = block_of(hi) + (hi == block_last(block_of(hi)) ? 1 : 0);
  for (size_t left = first + leaves_, right = end + leaves_; left < right; left /= 2, right /= 2) {
    if (left & 1) {
      ++cover_versions_[left];
      cover_[left++].add(run.begin, run.end);
    }
    if (right & 1) {
      ++cover_versions_[--right];
      cover_[right].add(run.begin, run.end);
    }
  }
  for (size_t node = block_of(lo) + leaves_; node >= 1; node /= 2) {
    if (rebuild_[node]) continue;
    std::vector<Run>& pending = pending_[node];
    pending.push_back(run);
    if (pending.size() > kMaxPendingRuns) {
      rebuild_[node] = 1;
      pending = {};
    }
  }
}

template <class Word>
template <class Out>
void PlacedByTime<Word>::collect_into(size_t k, Out& out) {
  const auto [lo, hi] = lifetimes_[k];
  // Step 1. Live at lo: the groups covering lo's whole block. Then from the block's edge list,
  // the groups live at some step of [lo, hi] in the block: live at lo, or starting in (lo, hi]
  // (a group starting after the block's first step covers the block only partly).
  const size_t block = block_of(lo);
  const size_t leaf = block + leaves_;
  const size_t top = leaf >> top_shift_;
  for (size_t node = leaf; node > top; node /= 2) out.append(cover_[node].runs());
  append_top(top, out);
  const int32_t lo_in_block = lo - block_first(block);
  const int32_t hi_in_block = std::min(hi, block_last(block)) - block_first(block);
  append_edges_if(block, EdgeFilter{lo_in_block, hi_in_block, 0}, 0, out);
  // Step 2. Starting after lo's block: in hi's block from its edge list, before it whole blocks
  // from the tree.
  const size_t last_block = block_of(hi);
  if (last_block == block) return;
  append_starting_in_last_block(last_block, hi, out);
  if (last_block == block + 1) return;
  for (size_t left = block + 1 + leaves_, right = last_block + leaves_; left < right;
       left /= 2, right /= 2) {
    // The lists stay valid: a node's lazy update touches only its own subtree, and the nodes
    // read here have disjoint subtrees.
    if (left & 1) out.append(fresh_starts(left++).runs());
    if (right & 1) out.append(fresh_starts(--right).runs());
  }
}

// The groups starting in [first step of `block`, hi]: those starting later than the first step
// cover the block partly, so its edge list (already in address order) holds them; those starting
// at the first step are read by first step.
template <class Word>
template <class Out>
void PlacedByTime<Word>::append_starting_in_last_block(size_t block, int32_t hi, Out& out) {
  const int32_t first = block_first(block);
  append_starting(first, first, out);
  const int32_t hi_in_block = hi - first;
  append_edges_if(block, EdgeFilter{0, hi_in_block, 1}, 1, out);
}

// Reads the lists in turns, each up to the window's end, until a whole turn moves the cursor no
// more and adds no list (see FirstFitCursor).
template <class Word>
Word PlacedByTime<Word>::first_fit(size_t k, Word bytes) {
  FirstFitLists& lists = first_fit_lists_;
  lists.clear();
  collect_into(k, lists);
  lists.merge_gathered();
  FirstFitCursor<Word> cursor(bytes);
  for (;;) {
    const Word start = cursor.offset();
    const size_t list_count = lists.sorted.size();
    for (auto& list : lists.sorted) list.next = cursor.pass_list(list.next, list.end);
    for (auto& edges : lists.edges) pass_edges(edges, cursor, lists);
    if (cursor.offset() == start && lists.sorted.size() == list_count) return cursor.offset();
  }
}

// Appends the union of cover_ over the path from the root to `node` (a node of the lowest
// merged top level). The top levels hold the long lifetimes and change rarely, while every query
// reads them: merged once, they are one list to read, not several to merge at each query. The
// merged union is rebuilt only when the path did not change since the previous read; a path that
// changes between most reads (long lifetimes everywhere) is read list by list instead.
template <class Word>
template <class Out>
void PlacedByTime<Word>::append_top(size_t node, Out& out) {
  uint64_t stamp = 0;
  for (size_t up = node; up >= 1; up /= 2) stamp += cover_versions_[up];
  const size_t index = node - (leaves_ >> top_shift_);
  TopUnion& top = top_unions_[index];
  if (top.built_at != stamp && top.read_at != stamp) {
    top.read_at = stamp;
    for (size_t up = node; up >= 1; up /= 2) out.append(cover_[up].runs());
    return;
  }
  if (top.built_at != stamp) {
    top.built_at = stamp;
    scratch_.clear();
    for (size_t up = node; up >= 1; up /= 2) scratch_.append(cover_[up].runs());
    top.runs.clear();
    scratch_.visit_sorted([&top](const Run& run) {
      top.runs.append_merging(run);
      return true;
    });
  }
  out.append(top.runs.runs());
}

template <class Word>
const AddressRuns<Word>& PlacedByTime<Word>::fresh_starts(size_t node) {
  AddressRuns<Word>& runs = starts_[node];
  if (rebuild_[node]) {
    rebuild_[node] = 0;
    rebuild_starts(node);
    return runs;
  }
  std::vector<Run>& pending = pending_[node];
  if (pending.empty()) return runs;
  if (pending.size() <= kMaxPendingAdds) {
    for (const Run& run : pending) runs.add(run.begin, run.end);
    pending.clear();
    return runs;
  }
  std::sort(pending.begin(), pending.end(),
            [](const Run& a, const Run& b) { return a.begin < b.begin; });
  merged_.assign_union(runs.runs(), pending);
  std::swap(runs, merged_);
  pending.clear();
  return runs;
}

// Recomputes starts_[node] from its children (a leaf: from its block's groups).
template <class Word>
void PlacedByTime<Word>::rebuild_starts(size_t node) {
  AddressRuns<Word>& runs = starts_[node];
  if (node < leaves_) {
    runs.assign_union(fresh_starts(2 * node).runs(), fresh_starts(2 * node + 1).runs());
    return;
  }
  const size_t block = node - leaves_;
  scratch_.clear();
  if (block_first(block) < static_cast<int32_t>(steps_)) {
    append_starting(block_first(block), block_last(block), scratch_);
  }
  runs.clear();
  scratch_.visit_sorted([&runs](const Run& run) {
    runs.append_merging(run);
    return true;
  });
}

// Lifetimes as indices among the distinct first/last steps, so the time index's size depends on
// the record count, not on step values.
struct CompressedLifetimes {
  std::vector<std::pair<int32_t, int32_t>> of_record;  // (lo, hi); (0, 0) for 0-byte records
  size_t steps = 0;
};

// Steps that span at most this many values per record are ranked with a table, not a sort.
constexpr uint64_t kDenseStepsPerRecord = 4;

CompressedLifetimes compress_lifetimes(std::span<const UsageRecord> records) {
  CompressedLifetimes result;
  result.of_record.assign(records.size(), {0, 0});
  int64_t min_step = std::numeric_limits<int64_t>::max();
  int64_t max_step = std::numeric_limits<int64_t>::min();
  for (const UsageRecord& record : records) {
    if (record.bytes == 0) continue;
    min_step = std::min(min_step, record.first);
    max_step = std::max(max_step, record.last);
  }
  if (min_step > max_step) return result;
  // Unsigned arithmetic: the span of two int64 steps may not fit in int64.
  const uint64_t span = static_cast<uint64_t>(max_step) - static_cast<uint64_t>(min_step);
  const auto offset_of = [min_step](int64_t step) {
    return static_cast<size_t>(static_cast<uint64_t>(step) - static_cast<uint64_t>(min_step));
  };
  if (span < kDenseStepsPerRecord * records.size()) {
    // Dense steps (the usual case: one or a few steps per record): rank by a prefix count.
    std::vector<int32_t> rank(static_cast<size_t>(span) + 1, 0);
    for (const UsageRecord& record : records) {
      if (record.bytes == 0) continue;
      rank[offset_of(record.first)] = 1;
      rank[offset_of(record.last)] = 1;
    }
    int32_t distinct = 0;
    for (int32_t& entry : rank) {
      const int32_t used = entry;
      entry = distinct;
      distinct += used;
    }
    result.steps = static_cast<size_t>(distinct);
    for (size_t i = 0; i < records.size(); ++i) {
      if (records[i].bytes == 0) continue;
      result.of_record[i] = {rank[offset_of(records[i].first)], rank[offset_of(records[i].last)]};
    }
    return result;
  }
  std::vector<int64_t> steps;
  steps.reserve(records.size() * 2);
  for (const UsageRecord& record : records) {
    if (record.bytes == 0) continue;
    steps.push_back(record.first);
    steps.push_back(record.last);
  }
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  const auto index_of = [&steps](int64_t step) {
    return static_cast<int32_t>(std::lower_bound(steps.begin(), steps.end(), step) - steps.begin());
  };
  // Looked up in record order: records usually come in step order, so the searches stay in cache.
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].bytes == 0) continue;
    result.of_record[i] = {index_of(records[i].first), index_of(records[i].last)};
  }
  result.steps = steps.size();
  return result;
}

// The unit addresses are counted in: the gcd of the sizes. Offsets are sums of sizes (a record
// goes at 0 or at the end of another), so every address is a whole number of units, and scaling
// every size and offset by the same factor changes no comparison of the best-fit search.
struct AddressUnits {
  size_t unit = 1;
  bool fits_32_bits = false;  // the sum of all sizes, in units, fits in uint32_t
};

AddressUnits address_units(std::span<const UsageRecord> records) {
  AddressUnits units;
  size_t divisor = 0;
  for (const UsageRecord& record : records) divisor = std::gcd(divisor, record.bytes);
  if (divisor == 0) return units;
  units.unit = divisor;
  // No address exceeds the sum of all sizes: each record ends at most that sum above 0.
  uint64_t total = 0;
  for (const UsageRecord& record : records) {
    total += record.bytes / divisor;
    if (total >= std::numeric_limits<uint32_t>::max()) return units;
  }
  units.fits_32_bits = true;
  return units;
}

// Best fit for record k: every run collected, merged and scanned.
template <class Word>
Word best_fit(PlacedByTime<Word>& placed, size_t k, Word bytes, RunCollector<Word>& runs) {
  runs.clear();
  placed.collect(k, runs);
  BestFitScan<Word> scan(bytes);
  runs.visit_sorted([&scan](const AddressRun<Word>& run) { return scan.visit(run); });
  return scan.offset();
}

// The placement loop in `Word` addresses of `unit` bytes each.
template <class Word, GapChoice kChoice>
Placement place_in_units(std::span<const UsageRecord> records, std::span<const int32_t> order,
                         const CompressedLifetimes& lifetimes, size_t unit) {
  // Step 1. Sizes and lifetimes gathered in placement order; one group per distinct lifetime.
  struct Next {
    int32_t index;
    Word units;
  };
  std::vector<Next> next;
  std::vector<std::pair<int32_t, int32_t>> ordered_lifetimes;
  next.reserve(order.size());
  ordered_lifetimes.reserve(order.size());
  for (int32_t index : order) {
    const size_t bytes = records[static_cast<size_t>(index)].bytes;
    if (bytes == 0) continue;
    next.push_back({index, static_cast<Word>(bytes / unit)});
    ordered_lifetimes.push_back(lifetimes.of_record[static_cast<size_t>(index)]);
  }
  PlacedByTime<Word> placed(ordered_lifetimes, lifetimes.steps);
  // Step 2. Place each record at the gap `kChoice` picks among the placed records it overlaps
  // in time.
  Placement placement;
  placement.offsets.assign(records.size(), 0);
  RunCollector<Word> runs;
  Word pool = 0;
  for (size_t k = 0; k < next.size(); ++k) {
    if (k + 1 < next.size()) placed.prefetch(k + 1);
    const Word offset = kChoice == GapChoice::kFirstFit ? placed.first_fit(k, next[k].units)
                                                        : best_fit(placed, k, next[k].units, runs);
    const Word end = offset + next[k].units;
    placement.offsets[static_cast<size_t>(next[k].index)] = static_cast<size_t>(offset) * unit;
    pool = std::max(pool, end);
    placed.insert(k, AddressRun<Word>{offset, end});
  }
  placement.pool_bytes = static_cast<size_t>(pool) * unit;
  return placement;
}

}  // namespace

Placement place_greedy_in_order(std::span<const UsageRecord> records,
                                std::span<const int32_t> order, GapChoice choice) {
  const CompressedLifetimes lifetimes = compress_lifetimes(records);
  const AddressUnits units = address_units(records);
  const size_t unit = units.unit;
  constexpr GapChoice kFirst = GapChoice::kFirstFit;
  constexpr GapChoice kBest = GapChoice::kBestFit;
  if (choice == kFirst) {
    return units.fits_32_bits ? place_in_units<uint32_t, kFirst>(records, order, lifetimes, unit)
                              : place_in_units<size_t, kFirst>(records, order, lifetimes, unit);
  }
  return units.fits_32_bits ? place_in_units<uint32_t, kBest>(records, order, lifetimes, unit)
                            : place_in_units<size_t, kBest>(records, order, lifetimes, unit);
}

}  // namespace onepool
