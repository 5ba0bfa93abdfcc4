// Uses an installed OnePool: load a model, run it once on zeros, print outputs and memory.
#include <onepool/library.h>
#include <onepool/onepool.h>
#include <onepool/session_pool.h>
#include <onepool/version.h>

#include <chrono>
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2)
    return std::fprintf(stderr, "usage: onepool_consumer MODEL.onnx (symbolic dim batch = 1)\n"), 2;
  onepool::LoadOptions load;
  load.dims.push_back({"batch", 1});
  auto model = onepool::Model::load(argv[1], load);
  if (!model) return std::fprintf(stderr, "%s\n", model.status().to_string().c_str()), 1;
  auto pool = onepool::SessionPool::create(*model, onepool::SessionOptions{}, 1);
  if (!pool) return std::fprintf(stderr, "%s\n", pool.status().to_string().c_str()), 1;
  auto lease = (*pool)->acquire(std::chrono::milliseconds(100));
  if (!lease) return std::fprintf(stderr, "%s\n", lease.status().to_string().c_str()), 1;

  std::vector<std::vector<std::byte>> buffers;  // zero-filled host tensors
  std::vector<onepool::TensorView> inputs, outputs;
  buffers.reserve((*model)->inputs().size() + (*model)->outputs().size());
  for (auto* infos : {&(*model)->inputs(), &(*model)->outputs()}) {
    for (const auto& info : *infos) {
      buffers.emplace_back(info.shape.element_count() * onepool::dtype_size(info.dtype));
      (infos == &(*model)->inputs() ? inputs : outputs)
          .push_back({buffers.back().data(), info.dtype, info.shape, {}});
    }
  }
  if (auto status = lease->session().run(inputs, outputs); !status.is_ok())
    return std::fprintf(stderr, "%s\n", status.to_string().c_str()), 1;
  for (size_t i = 0; i < outputs.size(); ++i)
    std::printf("%s %s\n", (*model)->outputs()[i].name.c_str(),
                outputs[i].shape.to_string().c_str());
  std::printf("onepool %s (library %s): pool %zu bytes, weights %zu bytes\n",
              ONEPOOL_VERSION_STRING, onepool::library_version(), (*pool)->pool_bytes(),
              (*model)->weights_bytes());
}
