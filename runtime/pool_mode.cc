// DynamicSession's pool modes by name (include/onepool/dynamic_session.h).
#include "onepool/dynamic_session.h"

namespace onepool {

std::string pool_mode_name(PoolMode mode) {
  return mode == PoolMode::kStatic ? "static" : "dynamic";
}

}  // namespace onepool
