// libFuzzer entry point: arbitrary bytes as a serialized ModelProto. The importer must return a
// Status for anything it cannot use, and never crash, hang, or read outside the input (with an
// empty model_dir every external-data reference is refused, so no file is touched).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "planner/import/onnx_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  onepool::ImportOptions options;
  options.dims = {{"batch", 1}};
  auto graph = onepool::import_onnx_bytes(bytes, "", options);
  (void)graph.has_value();
  return 0;
}
