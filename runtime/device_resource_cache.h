// Per-Model resources that live on a device and are shared by every Session of that Model on
// that device: the CUDA backend's weights are uploaded once per (Model, device), not once per
// Session (a SessionPool of N Sessions held N copies). Owned by the Model, so no global state.
//
// Thread-safe. Entries are held weakly: a resource goes away with the last Session using it, and
// the next Session on that device creates it again.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "onepool/status.h"

namespace onepool {

class DeviceResourceCache {
 public:
  using Factory = std::function<Expected<std::shared_ptr<const void>>()>;

  /// The live resource for `device`, or a new one from `create` (called with the cache locked,
  /// so concurrent Sessions create it once). A failed `create` caches nothing.
  Expected<std::shared_ptr<const void>> get_or_create(int device, const Factory& create) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [entry_device, resource] : entries_) {
      if (entry_device != device) continue;
      if (std::shared_ptr<const void> live = resource.lock()) return live;
    }
    ONEPOOL_ASSIGN_OR_RETURN(std::shared_ptr<const void> created, create());
    for (auto& [entry_device, resource] : entries_) {
      if (entry_device != device) continue;
      resource = created;
      return created;
    }
    entries_.emplace_back(device, created);
    return created;
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<int, std::weak_ptr<const void>>> entries_;
};

}  // namespace onepool
