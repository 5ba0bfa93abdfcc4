// Address runs: the union of some records' byte ranges, as sorted disjoint [begin, end) runs,
// and a collector that merges several sorted run lists. Internal to the best-fit engine.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace onepool {

struct AddressRun {
  size_t begin;
  size_t end;
};

// Sorted, disjoint address runs with touching runs merged: the union of some records' bytes.
class AddressRuns {
 public:
  bool empty() const { return runs_.empty(); }
  const std::vector<AddressRun>& runs() const { return runs_; }
  void clear() { runs_.clear(); }

  void add(size_t begin, size_t end) {
    auto first =
        std::lower_bound(runs_.begin(), runs_.end(), begin,
                         [](const AddressRun& run, size_t value) { return run.end < value; });
    auto last = first;
    while (last != runs_.end() && last->begin <= end) {
      begin = std::min(begin, last->begin);
      end = std::max(end, last->end);
      ++last;
    }
    if (first == last) {
      runs_.insert(first, AddressRun{begin, end});
      return;
    }
    *first = AddressRun{begin, end};
    runs_.erase(first + 1, last);
  }

  // Replaces the contents with the union of two sorted run lists.
  void assign_union(const std::vector<AddressRun>& a, const std::vector<AddressRun>& b) {
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
  void append_merging(const AddressRun& run) {
    if (!runs_.empty() && run.begin <= runs_.back().end) {
      runs_.back().end = std::max(runs_.back().end, run.end);
      return;
    }
    runs_.push_back(run);
  }

 private:
  std::vector<AddressRun> runs_;
};

// Runs gathered from several lists, each sorted by begin. Merging the lists pairwise costs
// O(n log lists), much less than sorting when a few long sorted lists dominate.
class RunCollector {
 public:
  void clear() {
    runs_.clear();
    ends_.clear();
    singles_.clear();
  }
  // Single runs (most lists hold one) wait apart and are sorted as one more list.
  void append_one(const AddressRun& run) { singles_.push_back(run); }
  void append(const std::vector<AddressRun>& list) {
    if (list.empty()) return;
    runs_.insert(runs_.end(), list.begin(), list.end());
    ends_.push_back(runs_.size());
  }
  // Every run appended so far, sorted by begin.
  const std::vector<AddressRun>& sorted() {
    const auto by_begin = [](const AddressRun& a, const AddressRun& b) {
      return a.begin < b.begin;
    };
    if (!singles_.empty()) {
      std::sort(singles_.begin(), singles_.end(), by_begin);
      append(singles_);
      singles_.clear();
    }
    while (ends_.size() > 1) {
      scratch_.resize(runs_.size());
      size_t merged = 0;
      size_t begin = 0;
      for (size_t i = 0; i < ends_.size(); i += 2) {
        const size_t middle = ends_[i];
        const size_t end = i + 1 < ends_.size() ? ends_[i + 1] : middle;
        std::merge(runs_.begin() + static_cast<std::ptrdiff_t>(begin),
                   runs_.begin() + static_cast<std::ptrdiff_t>(middle),
                   runs_.begin() + static_cast<std::ptrdiff_t>(middle),
                   runs_.begin() + static_cast<std::ptrdiff_t>(end),
                   scratch_.begin() + static_cast<std::ptrdiff_t>(begin), by_begin);
        ends_[merged++] = end;
        begin = end;
      }
      ends_.resize(merged);
      runs_.swap(scratch_);
    }
    return runs_;
  }

 private:
  std::vector<AddressRun> runs_;
  std::vector<size_t> ends_;  // one past the last run of each list
  std::vector<AddressRun> singles_;
  std::vector<AddressRun> scratch_;
};

}  // namespace onepool
