#include "bench/baselines/ort_bfc_arena.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "bench/baselines/ort_reuse.h"

namespace onepool::bench {
namespace {

constexpr size_t kMinAllocationBytes = 256;
constexpr int kBinCount = 21;

size_t round_up(size_t value, size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

int bin_for(size_t bytes) {
  const size_t units = std::max(bytes, kMinAllocationBytes) / kMinAllocationBytes;
  return std::min(kBinCount - 1, static_cast<int>(std::bit_width(units)) - 1);
}

class BfcArena {
 public:
  BfcArena(const BfcArenaOptions& options, size_t alignment)
      : options_(options),
        granule_(std::max(kMinAllocationBytes, alignment)),
        next_region_bytes_(round_up(options.initial_region_bytes, granule_)) {}

  // Address of a chunk of at least `bytes`.
  size_t allocate(size_t bytes) {
    const size_t rounded = round_up(bytes, granule_);
    int32_t chunk = take_free_chunk(rounded);
    if (chunk < 0) {
      extend(rounded);
      chunk = take_free_chunk(rounded);
    }
    at(chunk).free = false;
    in_use_[at(chunk).address] = chunk;
    return at(chunk).address;
  }

  void free(size_t address) {
    const auto in_use = in_use_.find(address);
    int32_t chunk = in_use->second;
    in_use_.erase(in_use);
    at(chunk).free = true;
    const int32_t next = at(chunk).next;
    if (next >= 0 && at(next).free) merge_next(chunk);
    const int32_t prev = at(chunk).prev;
    if (prev >= 0 && at(prev).free) {
      merge_next(prev);
      chunk = prev;
    }
    insert_free(chunk);
  }

  size_t total_bytes() const { return total_bytes_; }

 private:
  struct Chunk {
    size_t address = 0;
    size_t bytes = 0;
    int32_t prev = -1;  // neighbours in the same region
    int32_t next = -1;
    bool free = true;
  };
  using BinKey = std::tuple<size_t, size_t, int32_t>;  // (bytes, address, chunk)

  Chunk& at(int32_t chunk) { return chunks_[static_cast<size_t>(chunk)]; }
  const Chunk& at(int32_t chunk) const { return chunks_[static_cast<size_t>(chunk)]; }

  BinKey key_of(int32_t chunk) const {
    const Chunk& c = at(chunk);
    return {c.bytes, c.address, chunk};
  }
  void insert_free(int32_t chunk) {
    bins_[static_cast<size_t>(bin_for(at(chunk).bytes))].insert(key_of(chunk));
  }
  void erase_free(int32_t chunk) {
    bins_[static_cast<size_t>(bin_for(at(chunk).bytes))].erase(key_of(chunk));
  }

  // Smallest free chunk >= rounded from the request's bin upwards, split when worth it.
  int32_t take_free_chunk(size_t rounded) {
    for (int bin = bin_for(rounded); bin < kBinCount; ++bin) {
      auto& free_chunks = bins_[static_cast<size_t>(bin)];
      const auto it = free_chunks.lower_bound({rounded, 0, -1});
      if (it == free_chunks.end()) continue;
      const int32_t chunk = std::get<2>(*it);
      free_chunks.erase(it);
      const size_t bytes = at(chunk).bytes;
      if (bytes >= 2 * rounded || bytes - rounded >= options_.max_dead_bytes_per_chunk) {
        split(chunk, rounded);
      }
      return chunk;
    }
    return -1;
  }

  void split(int32_t chunk, size_t rounded) {
    Chunk rest;
    rest.address = at(chunk).address + rounded;
    rest.bytes = at(chunk).bytes - rounded;
    rest.prev = chunk;
    rest.next = at(chunk).next;
    const auto rest_id = static_cast<int32_t>(chunks_.size());
    chunks_.push_back(rest);
    if (rest.next >= 0) at(rest.next).prev = rest_id;
    at(chunk).next = rest_id;
    at(chunk).bytes = rounded;
    insert_free(rest_id);
  }

  // Absorbs the free next neighbour of `chunk` into it (both leave the bins: their sizes change).
  void merge_next(int32_t chunk) {
    const int32_t next = at(chunk).next;
    erase_free(chunk);
    erase_free(next);
    Chunk& c = at(chunk);
    c.bytes += at(next).bytes;
    c.next = at(next).next;
    if (c.next >= 0) at(c.next).prev = chunk;
  }

  void extend(size_t rounded) {
    bool grew_for_request = false;
    while (rounded > next_region_bytes_) {
      next_region_bytes_ *= 2;
      grew_for_request = true;
    }
    Chunk region;
    region.address = total_bytes_;
    region.bytes = next_region_bytes_;
    total_bytes_ += next_region_bytes_;
    if (!grew_for_request) next_region_bytes_ *= 2;
    const auto id = static_cast<int32_t>(chunks_.size());
    chunks_.push_back(region);
    insert_free(id);
  }

  BfcArenaOptions options_;
  size_t granule_;
  size_t next_region_bytes_;
  size_t total_bytes_ = 0;
  std::vector<Chunk> chunks_;
  std::map<size_t, int32_t> in_use_;  // chunk by address, for the chunks handed out
  std::vector<std::set<BinKey>> bins_ = std::vector<std::set<BinKey>>(kBinCount);
};

}  // namespace

Expected<Placement> place_ort_bfc_arena(std::span<const UsageRecord> records,
                                        const AlgorithmOptions& options) {
  return place_ort_bfc_arena(records, options, BfcArenaOptions{});
}

Expected<Placement> place_ort_bfc_arena(std::span<const UsageRecord> records,
                                        const AlgorithmOptions& options,
                                        const BfcArenaOptions& arena_options) {
  const SharedBuffers shared = reuse_freed_exact_size(records);
  BfcArena arena(arena_options, options.alignment);
  std::vector<size_t> addresses(shared.buffers.size(), 0);
  for (const BufferEvent& event : execution_events(shared.buffers)) {
    const auto buffer = static_cast<size_t>(event.buffer);
    if (event.allocate) {
      addresses[buffer] = arena.allocate(shared.buffers[buffer].bytes);
    } else {
      arena.free(addresses[buffer]);
    }
  }
  return records_placement(shared, addresses, arena.total_bytes());
}

}  // namespace onepool::bench
