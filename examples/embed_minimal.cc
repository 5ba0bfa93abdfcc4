// Minimal embedding: load a model, create a Session, run once, print the outputs' shapes.
#include <onepool/onepool.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) return std::fprintf(stderr, "usage: embed_minimal MODEL.onnx\n"), 2;
  onepool::LoadOptions load;  // load.input_shapes / load.dims bind symbolic dims
  auto model = onepool::Model::load(argv[1], load);
  if (!model) return std::fprintf(stderr, "%s\n", model.status().to_string().c_str()), 1;
  auto session = onepool::Session::create(*model, onepool::SessionOptions{});
  if (!session) return std::fprintf(stderr, "%s\n", session.status().to_string().c_str()), 1;

  std::vector<std::vector<std::byte>> buffers;  // caller-owned host memory, zero-filled
  std::vector<onepool::TensorView> inputs, outputs;
  auto add = [&](const onepool::TensorInfo& info, std::vector<onepool::TensorView>& views) {
    buffers.emplace_back(info.shape.element_count() * onepool::dtype_size(info.dtype));
    views.push_back({buffers.back().data(), info.dtype, info.shape, {}});
  };
  buffers.reserve((*model)->inputs().size() + (*model)->outputs().size());
  for (const auto& info : (*model)->inputs()) add(info, inputs);
  for (const auto& info : (*model)->outputs()) add(info, outputs);

  if (auto status = (*session)->run(inputs, outputs); !status.is_ok())
    return std::fprintf(stderr, "%s\n", status.to_string().c_str()), 1;
  for (size_t i = 0; i < outputs.size(); ++i)
    std::printf("%s %s\n", (*model)->outputs()[i].name.c_str(),
                outputs[i].shape.to_string().c_str());
  std::printf("pool %zu bytes, weights %zu bytes\n", (*session)->plan().pool_bytes,
              (*model)->weights_bytes());
}
