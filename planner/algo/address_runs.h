// Address runs: the union of some records' byte ranges, as sorted disjoint [begin, end) runs; a
// collector that merges several sorted run lists; the best-fit scan over merged runs; and the
// first-fit cursor, which reads sorted lists in turns without merging them.
// Internal to the best-fit engine. `Word` is the address type: uint32_t when every address fits
// in 32 bits (in units of a common divisor of the sizes), else size_t; see best_fit.cc.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace onepool {

template <class Word>
struct AddressRun {
  Word begin;
  Word end;
};

// Sorted, disjoint address runs with touching runs merged: the union of some records' bytes.
template <class Word>
class AddressRuns {
 public:
  using Run = AddressRun<Word>;

  bool empty() const { return runs_.empty(); }
  const std::vector<Run>& runs() const { return runs_; }
  void clear() { runs_.clear(); }

  void add(Word begin, Word end) {
    auto first = std::lower_bound(runs_.begin(), runs_.end(), begin,
                                  [](const Run& run, Word value) { return run.end < value; });
    auto last = first;
    while (last != runs_.end() && last->begin <= end) {
      begin = std::min(begin, last->begin);
      end = std::max(end, last->end);
      ++last;
    }
    if (first == last) {
      runs_.insert(first, Run{begin, end});
      return;
    }
    *first = Run{begin, end};
    runs_.erase(first + 1, last);
  }

  // Replaces the contents with the union of two sorted run lists.
  void assign_union(std::span<const Run> a, std::span<const Run> b) {
    runs_.clear();
    runs_.reserve(a.size() + b.size());
    size_t i = 0;
    size_t j = 0;
    while (i < a.size() || j < b.size()) {
      const bool take_a = j == b.size() || (i < a.size() && a[i].begin <= b[j].begin);
      append_merging(take_a ? a[i++] : b[j++]);
    }
  }

  // Appends a run that begins at or after the last run's begin.
  void append_merging(const Run& run) {
    if (!runs_.empty() && run.begin <= runs_.back().end) {
      runs_.back().end = std::max(runs_.back().end, run.end);
      return;
    }
    runs_.push_back(run);
  }

 private:
  std::vector<Run> runs_;
};

// `pick ? a : b` by masks: compilers turn the plain conditional into a branch, which mispredicts
// about half the time when the choice depends on the data (merging, scanning gaps).
template <class Word>
Word select(bool pick, Word a, Word b) {
  const Word mask = Word{0} - static_cast<Word>(pick);
  return (a & mask) | (b & ~mask);
}
template <class Word>
AddressRun<Word> select(bool pick, const AddressRun<Word>& a, const AddressRun<Word>& b) {
  return {select(pick, a.begin, b.begin), select(pick, a.end, b.end)};
}
// A 32-bit run fits in one register: one selection instead of two.
inline AddressRun<uint32_t> select(bool pick, const AddressRun<uint32_t>& a,
                                   const AddressRun<uint32_t>& b) {
  return std::bit_cast<AddressRun<uint32_t>>(
      select(pick, std::bit_cast<uint64_t>(a), std::bit_cast<uint64_t>(b)));
}

// Merges two lists sorted by begin (ties: `a` first), handing each run to `emit` until it
// returns false; returns false when it stopped early.
template <class Run, class Emit>
bool merge_runs(std::span<const Run> a, std::span<const Run> b, Emit&& emit) {
  const Run* next_a = a.data();
  const Run* next_b = b.data();
  const Run* const end_a = next_a + a.size();
  const Run* const end_b = next_b + b.size();
  while (next_a != end_a && next_b != end_b) {
    const bool take_b = next_b->begin < next_a->begin;
    const Run run = select(take_b, *next_b, *next_a);
    next_b += take_b;
    next_a += !take_b;
    if (!emit(run)) return false;
  }
  for (; next_a != end_a; ++next_a) {
    if (!emit(*next_a)) return false;
  }
  for (; next_b != end_b; ++next_b) {
    if (!emit(*next_b)) return false;
  }
  return true;
}

// Merges two lists sorted by begin (ties: `a` first) into `out`. The first min(|a|, |b|) runs
// are taken from the front and as many from the back in the same loop: two independent chains
// of loads and comparisons, where one chain waits on each load. No read passes a list's end:
// after i steps each side has taken at most i runs of each list.
template <class Run>
void merge_runs_into(std::span<const Run> a, std::span<const Run> b, Run* out) {
  // Signed indices: a back index ends at -1 once its list is used up.
  std::ptrdiff_t front_a = 0;
  std::ptrdiff_t front_b = 0;
  std::ptrdiff_t back_a = std::ssize(a) - 1;
  std::ptrdiff_t back_b = std::ssize(b) - 1;
  Run* front_out = out;
  Run* back_out = out + a.size() + b.size();
  for (size_t steps = std::min(a.size(), b.size()); steps > 0; --steps) {
    const Run& next_a = a[static_cast<size_t>(front_a)];
    const Run& next_b = b[static_cast<size_t>(front_b)];
    const bool front_takes_b = next_b.begin < next_a.begin;
    *front_out++ = select(front_takes_b, next_b, next_a);
    front_b += front_takes_b;
    front_a += !front_takes_b;
    const Run& last_a = a[static_cast<size_t>(back_a)];
    const Run& last_b = b[static_cast<size_t>(back_b)];
    const bool back_takes_a = last_a.begin > last_b.begin;
    *--back_out = select(back_takes_a, last_a, last_b);
    back_a -= back_takes_a;
    back_b -= !back_takes_a;
  }
  const auto rest = [](std::span<const Run> list, std::ptrdiff_t front, std::ptrdiff_t back) {
    return list.subspan(static_cast<size_t>(front), static_cast<size_t>(back + 1 - front));
  };
  merge_runs(rest(a, front_a, back_a), rest(b, front_b, back_b), [&front_out](const Run& run) {
    *front_out++ = run;
    return true;
  });
}

// Runs gathered from several lists, each sorted by begin, read in place (the lists must stay
// unchanged until the runs are visited). The lists are merged smallest first (two at a time,
// from both ends) into one of two buffers, and the last merge feeds the visitor directly: the
// longest list is read once, and the merged runs are never stored whole.
template <class Word>
class RunCollector {
 public:
  using Run = AddressRun<Word>;

  void clear() {
    lists_.clear();
    singles_.clear();
    for (Singles& ordered : ordered_singles_) ordered.clear();
  }
  // Single runs (most lists hold one) wait apart and are sorted as one more list. The run is
  // written either way and kept only if `keep`: callers filter without a branch (see select()).
  void append_one_if(bool keep, const Run& run) { singles_.append_if(keep, run); }
  void append_one(const Run& run) { singles_.append_if(true, run); }
  // The same for single runs that come in order of begin: they form one more list as they are
  // (two such lists, told apart by `list`).
  void append_ordered_one_if(bool keep, const Run& run, size_t list = 0) {
    ordered_singles_[list].append_if(keep, run);
  }
  // Bulk form of append_ordered_one_if for a hot loop: room for `count` more runs on ordered
  // list `list`, written at the returned pointer; then ordered_written() with how many to keep
  // (the first ones written). The count stays in the caller's register, not in memory.
  Run* ordered_room(size_t list, size_t count) { return ordered_singles_[list].room(count); }
  void ordered_written(size_t list, size_t count) { ordered_singles_[list].grow(count); }
  void append(std::span<const Run> list) {
    if (!list.empty()) lists_.push_back(list);
  }

  // Calls visit(run) for every run appended so far, in order of begin, until it returns false.
  template <class Visit>
  void visit_sorted(Visit&& visit) {
    const auto [merged, longest] = merge_all_but_longest();
    merge_runs(merged, longest, visit);
  }

  // The runs appended so far as two lists sorted by begin: every list but the longest merged
  // into one, and the longest as it is (empty when there is none). Both stay valid until the
  // next clear() or merge.
  std::array<std::span<const Run>, 2> merge_all_but_longest() {
    if (!singles_.empty()) {
      const std::span<Run> singles = singles_.runs();
      std::sort(singles.begin(), singles.end(),
                [](const Run& a, const Run& b) { return a.begin < b.begin; });
      lists_.emplace_back(singles);
    }
    for (Singles& ordered : ordered_singles_) {
      if (!ordered.empty()) lists_.emplace_back(ordered.runs());
    }
    if (lists_.empty()) return {};
    if (lists_.size() == 1) return {lists_[0], {}};
    std::sort(lists_.begin(), lists_.end(),
              [](std::span<const Run> a, std::span<const Run> b) { return a.size() < b.size(); });
    size_t total = 0;
    for (std::span<const Run> list : lists_) total += list.size();
    if (merged_.size() < total) {
      merged_.resize(total);
      spare_.resize(total);
    }
    std::span<const Run> sorted = lists_[0];
    for (size_t k = 1; k + 1 < lists_.size(); ++k) {
      merge_runs_into(sorted, lists_[k], spare_.data());
      sorted = std::span<const Run>(spare_.data(), sorted.size() + lists_[k].size());
      std::swap(merged_, spare_);
    }
    return {sorted, lists_.back()};
  }

 private:
  // Runs appended one by one, each written unconditionally and kept only if asked.
  class Singles {
   public:
    bool empty() const { return count_ == 0; }
    void clear() { count_ = 0; }
    std::span<Run> runs() { return {runs_.data(), count_}; }
    void append_if(bool keep, const Run& run) {
      if (count_ == runs_.size()) runs_.resize(2 * runs_.size() + 16);
      runs_[count_] = run;
      count_ += static_cast<size_t>(keep);
    }
    Run* room(size_t count) {
      if (count_ + count > runs_.size()) runs_.resize(2 * (count_ + count) + 16);
      return runs_.data() + count_;
    }
    void grow(size_t count) { count_ += count; }

   private:
    std::vector<Run> runs_;  // the first count_ are kept
    size_t count_ = 0;
  };

  std::vector<std::span<const Run>> lists_;
  Singles singles_;
  std::array<Singles, 2> ordered_singles_;
  std::vector<Run> merged_;  // the last merge's output
  std::vector<Run> spare_;   // the next merge's output
};

// The best-fit scan: fed runs in order of begin (runs may overlap), finds the smallest gap of at
// least `bytes` (lowest offset on ties), or else the end of the highest run. Branch-free (see
// select()); visit() returns false at a perfect fit (no smaller gap exists, and later equal
// gaps lose the tie).
template <class Word>
class BestFitScan {
 public:
  explicit BestFitScan(Word bytes) : bytes_(bytes) {}

  bool visit(const AddressRun<Word>& run) {
    const Word gap = select(run.begin > cursor_, run.begin - cursor_, Word{0});
    const bool better = (gap >= bytes_) & (gap < best_gap_);
    best_gap_ = select(better, gap, best_gap_);
    best_offset_ = select(better, cursor_, best_offset_);
    cursor_ = select(run.end > cursor_, run.end, cursor_);
    return best_gap_ != bytes_;
  }
  Word offset() const { return best_gap_ != kNoGap ? best_offset_ : cursor_; }

 private:
  static constexpr Word kNoGap = std::numeric_limits<Word>::max();
  Word bytes_;
  Word cursor_ = 0;
  Word best_offset_ = 0;
  Word best_gap_ = kNoGap;
};

// First fit as a rising cursor: the lowest offset whose `bytes` overlap no run is the least
// fixpoint of "move the cursor to the end of a run that overlaps [cursor, cursor + bytes)", since
// no offset the cursor passes is free (each overlaps the run that moved it). So the runs need no
// merging: any number of lists sorted by begin can each be read up to the window's end, in turns,
// until a turn moves the cursor no more, and every run beginning above the final window is never
// read. The result is the gap's start when one fits, else the end of the highest run.
template <class Word>
class FirstFitCursor {
 public:
  explicit FirstFitCursor(Word bytes) : bytes_(bytes) {}

  Word offset() const { return cursor_; }
  // Where the window [offset, offset + bytes) ends: runs beginning there or above do not
  // overlap it (no overflow: both are at most the sum of all sizes).
  Word window_end() const { return cursor_ + bytes_; }
  // Moves past runs that begin before the window's end and end at most at `end`.
  void pass_to(Word end) { cursor_ = end > cursor_ ? end : cursor_; }
  // Moves past a run that begins before the window's end (`overlaps` false: one to ignore).
  void pass_if(bool overlaps, const AddressRun<Word>& run) {
    pass_to(select(overlaps, run.end, Word{0}));
  }
  // Moves past the runs of a list sorted by begin that begin before the window's end; returns the
  // first run left unread.
  const AddressRun<Word>* pass_list(const AddressRun<Word>* next, const AddressRun<Word>* end) {
    for (; next != end && next->begin < window_end(); ++next) pass_if(true, *next);
    return next;
  }

 private:
  Word bytes_;
  Word cursor_ = 0;
};

}  // namespace onepool
