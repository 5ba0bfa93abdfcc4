// The KServe v2 server over shape ranges: the generated mlp.onnx (x [batch,784] float32) served by
// DynamicSessions with the profile x:[1..8]x784. Metadata shows the varying axes as -1; requests
// of different batch sizes, one after another and from 4 clients at once, each get the outputs a
// Session loaded at that batch gives, bit for bit; shapes outside the range get 400 naming it,
// and the server keeps serving.
#include <doctest/doctest.h>
#include <httplib.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "onepool/dynamic_session.h"
#include "service/server_harness.h"
#include "tools/onepool/serve_routes.h"

namespace onepool::serve {
namespace {

using Json = nlohmann::json;
using std::chrono::milliseconds;

constexpr const char* kInfer = "/v2/models/mlp/infer";
constexpr int64_t kFeatures = 784;

std::string mlp_path() {
  const char* dir = std::getenv("ONEPOOL_MODELS_DIR");
  const std::string path = str_cat(dir ? dir : "", "/mlp.onnx");
  if (dir == nullptr || !std::filesystem::exists(path)) return "";
  return path;
}

// A server over `sessions` DynamicSessions of the profile x:[1..8]x784.
struct RangeServer {
  std::unique_ptr<ServerThread> serving;

  RangeServer(const std::string& path, size_t sessions, PoolMode mode) {
    DynamicSessionOptions options;
    auto profile = ShapeProfile::parse("x:[1..8]x784");
    REQUIRE(profile.has_value());
    options.profile = *profile;
    options.mode = mode;
    options.session.threads = 1;
    auto slots = make_dynamic_slots(path, options, sessions);
    REQUIRE_MESSAGE(slots.has_value(), slots.status().to_string());
    ServeOptions serve_options;
    serve_options.port = 0;
    serve_options.model_name = "mlp";
    serve_options.queue_timeout = milliseconds(30000);
    serving =
        std::make_unique<ServerThread>(InferenceServer::create(std::move(*slots), serve_options));
  }
  httplib::Client client() const { return serving->client(); }
};

std::vector<float> make_input(int64_t batch, int seed) {
  std::vector<float> x(static_cast<size_t>(batch * kFeatures));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::sin(0.37f * static_cast<float>(seed) + 0.01f * static_cast<float>(i));
  return x;
}

struct Outputs {
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::vector<float>> values;
};

// What a Session of the model loaded at this batch gives.
Outputs reference_outputs(const std::string& path, int64_t batch, std::vector<float> input) {
  LoadOptions load;
  load.dims.push_back({"batch", batch});
  auto model = Model::load(path, load);
  REQUIRE_MESSAGE(model.has_value(), model.status().to_string());
  SessionOptions options;
  options.threads = 1;  // as the served DynamicSessions
  auto session = Session::create(*model, options);
  REQUIRE(session.has_value());
  Outputs outputs;
  std::vector<TensorView> views;
  for (const TensorInfo& info : (*model)->outputs()) {
    REQUIRE(info.dtype == DType::kFloat32);
    outputs.shapes.emplace_back(info.shape.begin(), info.shape.end());
    outputs.values.emplace_back(static_cast<size_t>(info.shape.element_count()));
  }
  for (size_t i = 0; i < outputs.values.size(); ++i) {
    views.push_back(
        {outputs.values[i].data(), DType::kFloat32, (*model)->outputs()[i].shape, Device{}});
  }
  TensorView in{input.data(), DType::kFloat32, Shape{batch, kFeatures}, Device{}};
  const Status status = (*session)->run({&in, 1}, views);
  REQUIRE_MESSAGE(status.is_ok(), status.to_string());
  return outputs;
}

std::string json_request(const std::vector<int64_t>& shape, const std::vector<float>& x) {
  Json request = {
      {"inputs", {{{"name", "x"}, {"shape", shape}, {"datatype", "FP32"}, {"data", x}}}}};
  return request.dump();
}

Outputs json_outputs(const std::string& body) {
  const Json response = Json::parse(body);
  Outputs outputs;
  for (const Json& output : response.at("outputs")) {
    outputs.shapes.push_back(output.at("shape").get<std::vector<int64_t>>());
    std::vector<float> values;
    for (const Json& value : output.at("data"))
      values.push_back(static_cast<float>(value.get<double>()));
    outputs.values.push_back(std::move(values));
  }
  return outputs;
}

bool same(const Outputs& a, const Outputs& b) {
  if (a.shapes != b.shapes || a.values.size() != b.values.size()) return false;
  for (size_t i = 0; i < a.values.size(); ++i) {
    if (a.values[i].size() != b.values[i].size()) return false;
    if (std::memcmp(a.values[i].data(), b.values[i].data(), a.values[i].size() * sizeof(float)))
      return false;
  }
  return true;
}

// Posts batch `batch` (seed `seed`) and checks the response against the reference.
void check_batch(httplib::Client& client, const std::string& path, int64_t batch, int seed) {
  const std::vector<float> x = make_input(batch, seed);
  auto res = client.Post(kInfer, json_request({batch, kFeatures}, x), "application/json");
  REQUIRE(res);
  REQUIRE_MESSAGE(res->status == 200, res->body);
  const Outputs got = json_outputs(res->body);
  REQUIRE(!got.shapes.empty());
  CHECK(got.shapes[0][0] == batch);
  CHECK(same(got, reference_outputs(path, batch, x)));
}

void check_error(const httplib::Result& res, int status, const std::string& needle) {
  REQUIRE(res);
  CHECK(res->status == status);
  const Json body = Json::parse(res->body, nullptr, false);
  REQUIRE_MESSAGE(body.is_object(), res->body);
  INFO("error: " << body.value("error", std::string("(none)")));
  CHECK(body.at("error").get<std::string>().find(needle) != std::string::npos);
}

TEST_CASE("serve ranges: metadata shows -1 where shapes vary; each batch gets its own result") {
  const std::string path = mlp_path();
  if (path.empty()) {
    MESSAGE("skipped: mlp.onnx not found (set ONEPOOL_MODELS_DIR)");
    return;
  }
  for (PoolMode mode : {PoolMode::kStatic, PoolMode::kDynamic}) {
    CAPTURE(pool_mode_name(mode));
    RangeServer running(path, 2, mode);
    httplib::Client client = running.client();

    auto metadata = client.Get("/v2/models/mlp");
    REQUIRE(metadata);
    const Json meta = Json::parse(metadata->body);
    CHECK(meta.at("inputs")[0].at("shape") == Json({-1, kFeatures}));
    CHECK(meta.at("outputs")[0].at("shape")[0] == -1);
    auto config = client.Get("/v2/models/mlp/config");
    REQUIRE(config);
    CHECK(Json::parse(config->body).at("input")[0].at("dims") == Json({-1, kFeatures}));

    for (int64_t batch : {3, 8, 1, 5, 3}) check_batch(client, path, batch, static_cast<int>(batch));

    const std::vector<float> nine = make_input(9, 0);
    check_error(client.Post(kInfer, json_request({9, kFeatures}, nine), "application/json"), 400,
                "outside the declared range [1..8]");
    const std::vector<float> flat = make_input(1, 0);
    check_error(client.Post(kInfer, json_request({kFeatures}, flat), "application/json"), 400,
                "expected rank 2");
    check_error(client.Post(kInfer, json_request({2, 100}, make_input(2, 0)), "application/json"),
                400, "axis 1");
    check_batch(client, path, 2, 7);  // still serving

    auto metrics = client.Get("/metrics");
    REQUIRE(metrics);
    CHECK(metrics->body.find("onepool_sessions 2\n") != std::string::npos);
    CHECK(metrics->body.find("onepool_pool_bytes 0\n") == std::string::npos);
  }
}

TEST_CASE("serve ranges: 4 clients at different batch sizes get the single-threaded result") {
  const std::string path = mlp_path();
  if (path.empty()) {
    MESSAGE("skipped: mlp.onnx not found (set ONEPOOL_MODELS_DIR)");
    return;
  }
  RangeServer running(path, 2, PoolMode::kStatic);
  std::vector<std::vector<float>> inputs;
  std::vector<Outputs> expected;
  std::vector<std::string> responses(8);
  for (int i = 0; i < 8; ++i) {
    inputs.push_back(make_input(1 + i, i));
    expected.push_back(reference_outputs(path, 1 + i, inputs.back()));
  }
  std::vector<std::thread> clients;
  for (int t = 0; t < 4; ++t) {
    clients.emplace_back([&, t] {
      httplib::Client client = running.client();
      for (int i = t; i < 8; i += 4) {
        auto res =
            client.Post(kInfer, json_request({1 + i, kFeatures}, inputs[static_cast<size_t>(i)]),
                        "application/json");
        if (res && res->status == 200) responses[static_cast<size_t>(i)] = res->body;
      }
    });
  }
  for (std::thread& client : clients) client.join();
  for (size_t i = 0; i < responses.size(); ++i) {
    CAPTURE(i);
    REQUIRE(!responses[i].empty());
    CHECK(same(json_outputs(responses[i]), expected[i]));
  }
}

}  // namespace
}  // namespace onepool::serve
