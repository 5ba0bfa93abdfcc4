// Plan first, then bind: the pool's size from Plan::build, the pool and every input and output
// in the caller's own memory (external: no pool bytes, no copies), bound once and run many times.
//
//   embed_iobinding MODEL.onnx [DIM=VALUE ...]     e.g. embed_iobinding mlp.onnx batch=4
#include <onepool/onepool.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) return std::fprintf(stderr, "usage: embed_iobinding MODEL.onnx [DIM=N ...]\n"), 2;
  onepool::LoadOptions load;
  for (int i = 2; i < argc; ++i) {  // symbolic dims: batch=4
    const std::string dim = argv[i];
    const size_t equals = dim.find('=');
    if (equals == std::string::npos)
      return std::fprintf(stderr, "expected DIM=N: %s\n", argv[i]), 2;
    load.dims.emplace_back(dim.substr(0, equals), std::atoll(dim.c_str() + equals + 1));
  }
  auto model = onepool::Model::load(argv[1], load);
  if (!model) return std::fprintf(stderr, "%s\n", model.status().to_string().c_str()), 1;

  // 1. The plan, before any Session: every graph input and output stays out of the pool.
  onepool::SessionOptions options;
  options.plan.external_inputs = true;
  options.plan.external_outputs = true;
  auto plan = onepool::Plan::build(**model, options);
  if (!plan) return std::fprintf(stderr, "%s\n", plan.status().to_string().c_str()), 1;

  // 2. The caller's memory: the pool, exactly as planned, and one buffer per input and output.
  const size_t pool_bytes = std::max<size_t>(256, (plan->pool_bytes + 255) / 256 * 256);
  std::unique_ptr<void, decltype(&std::free)> pool(std::aligned_alloc(256, pool_bytes), &std::free);
  if (!pool) return std::fprintf(stderr, "cannot allocate %zu bytes\n", pool_bytes), 1;
  options.pool = pool.get();
  options.pool_capacity = plan->pool_bytes;
  auto session = onepool::Session::create(*model, options);
  if (!session) return std::fprintf(stderr, "%s\n", session.status().to_string().c_str()), 1;
  std::vector<std::vector<float>> buffers;  // float32 models; sized in floats, rounded up
  const auto bind = [&](const onepool::TensorInfo& info, bool input, size_t index) {
    const size_t bytes = info.shape.element_count() * onepool::dtype_size(info.dtype);
    buffers.emplace_back((bytes + sizeof(float) - 1) / sizeof(float), input ? 0.5f : 0.0f);
    const onepool::TensorView view{buffers.back().data(), info.dtype, info.shape, {}};
    return input ? (*session)->bind_input(index, view) : (*session)->bind_output(index, view);
  };
  buffers.reserve((*model)->inputs().size() + (*model)->outputs().size());
  for (size_t i = 0; i < (*model)->inputs().size(); ++i) {
    if (auto status = bind((*model)->inputs()[i], true, i); !status.is_ok())
      return std::fprintf(stderr, "%s\n", status.to_string().c_str()), 1;
  }
  for (size_t i = 0; i < (*model)->outputs().size(); ++i) {
    if (auto status = bind((*model)->outputs()[i], false, i); !status.is_ok())
      return std::fprintf(stderr, "%s\n", status.to_string().c_str()), 1;
  }

  // 3. Runs read the inputs and write the outputs where they lie.
  for (int run = 0; run < 3; ++run) {
    if (auto status = (*session)->run_bound(); !status.is_ok())
      return std::fprintf(stderr, "%s\n", status.to_string().c_str()), 1;
  }
  const size_t first_output = (*model)->inputs().size();
  std::printf("pool %zu bytes (caller-owned), %zu external tensors; %s[0] = %g\n", plan->pool_bytes,
              (*model)->inputs().size() + (*model)->outputs().size(),
              (*model)->outputs()[0].name.c_str(), buffers[first_output][0]);
}
