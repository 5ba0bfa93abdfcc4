// The version the library was built as (see include/onepool/library.h).
#include "onepool/library.h"
#include "onepool/version.h"

namespace onepool {

const char* library_version() { return ONEPOOL_VERSION_STRING; }

}  // namespace onepool
