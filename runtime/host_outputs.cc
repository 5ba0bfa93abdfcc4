#include "runtime/host_outputs.h"

namespace onepool {

void keep_actual_shapes(const Session& session, std::vector<HostTensor>& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Shape actual = session.output_shape(i);
    if (actual == outputs[i].shape) continue;
    outputs[i].shape = actual;
    outputs[i].data.resize(static_cast<size_t>(actual.element_count()) *
                           dtype_size(outputs[i].dtype));
  }
}

}  // namespace onepool
