// Weights repacked for a CPU kernel (a GEMM's panels of a convolution's filters, the strips of a
// MatMul's constant B), shared by every Session of one Model: the packing is done once, not
// once per Session (a SessionPool of N Sessions would hold N copies of every packed weight).
// Owned by the Model, so no global state.
//
// Thread-safe. Entries are held weakly, as in DeviceResourceCache: the packed copy goes away
// with the last Session using it, and the next Session packs it again.
//
// A key names the weight (its value in the Model's graph) and everything the layout depends on,
// so two nodes reading one weight the same way share one copy, and never a copy laid out for
// another kernel. Only kernels prepared on the Model's own graph may use the cache (value ids of
// a graph built for one node, e.g. a float32 shadow, mean nothing here).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

namespace onepool {

/// The layouts the CPU kernels repack weights into (PackedWeightKey::layout).
enum class PackedLayout : uint8_t {
  kConvPanels = 1,             // a convolution's filters as packed-A panels, per group
  kMatMulStrips = 2,           // a MatMul's or Gemm's constant B as strips of column tiles
                               // (parameter 1: a Gemm's B^T, transposed first)
  kWinogradPanels = 3,         // Winograd's U = G g G^T as packed-A panels, per transform position
  kConvChannelPanels = 4,      // a convolution's filters as 64-channel panels (sgemm_channels.h)
  kTransposeTapPanels = 5,     // a ConvTranspose's filters as one packed-A product per kernel row
  kWinogradChannelPanels = 6,  // Winograd's U as 64-channel panels (sgemm_channels.h)
};

/// How a weight was repacked: the kernel's layout, its instruction set's tile shape and one
/// layout parameter (a convolution's group count).
struct PackedWeightKey {
  int32_t weight = -1;  // ValueId of the weight in the Model's graph
  PackedLayout layout = PackedLayout::kConvPanels;
  uint8_t isa = 0;  // the micro-kernel whose tiles the layout follows
  int64_t parameter = 0;
  friend bool operator<(const PackedWeightKey& a, const PackedWeightKey& b) {
    return std::tie(a.weight, a.layout, a.isa, a.parameter) <
           std::tie(b.weight, b.layout, b.isa, b.parameter);
  }
};

class PackedWeightCache {
 public:
  using Floats = std::vector<float>;
  using Factory = std::function<std::shared_ptr<const Floats>()>;

  /// The live packed copy for `key`, or a new one from `pack` (called with the cache locked, so
  /// concurrent Sessions pack once).
  std::shared_ptr<const Floats> get_or_create(const PackedWeightKey& key, const Factory& pack) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::weak_ptr<const Floats>& entry = entries_[key];
    if (std::shared_ptr<const Floats> live = entry.lock()) return live;
    std::shared_ptr<const Floats> created = pack();
    entry = created;
    return created;
  }

  /// Packed copies alive now (for tests and memory reports).
  size_t live_count() const {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t count = 0;
    for (const auto& [key, entry] : entries_) count += entry.expired() ? 0 : 1;
    return count;
  }

 private:
  mutable std::mutex mutex_;
  std::map<PackedWeightKey, std::weak_ptr<const Floats>> entries_;
};

/// How a kernel's plan gets its packed weights: `share(pack)` returns pack()'s result or an equal
/// copy made before (NodeContext::packed_weight with the kernel's key); an empty one calls pack().
using PackedWeightSharing = std::function<std::shared_ptr<const PackedWeightCache::Floats>(
    const PackedWeightCache::Factory& pack)>;

}  // namespace onepool
