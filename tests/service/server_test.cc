// The KServe v2 server in-process on 127.0.0.1 (any free port) with the generated mlp.onnx
// (x [1,784] float32 with batch=1): every endpoint, 8 concurrent clients (JSON and binary) that
// must get bit-for-bit the single-threaded Session's outputs, and every error code (400, 404,
// 413, 503) followed by a request that still succeeds.
#include <doctest/doctest.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "onepool/session_pool.h"
#include "service/server_harness.h"
#include "tools/onepool/serve_routes.h"

namespace onepool::serve {
namespace {

using Json = nlohmann::json;
using std::chrono::milliseconds;

constexpr const char* kInfer = "/v2/models/mlp/infer";

// A server over `sessions` Sessions of `model`; `pool` stays reachable for the busy test.
struct RunningServer {
  SessionPool* pool = nullptr;  // owned by the server; the busy test leases from it directly
  std::unique_ptr<ServerThread> serving;

  RunningServer(std::shared_ptr<const Model> model, size_t sessions, milliseconds queue_timeout) {
    auto created = SessionPool::create(std::move(model), SessionOptions{}, sessions);
    REQUIRE_MESSAGE(created.has_value(), created.status().to_string());
    pool = created->get();
    ServeOptions options;
    options.port = 0;
    options.model_name = "mlp";
    options.max_body_bytes = 1 << 20;
    options.queue_timeout = queue_timeout;
    serving = std::make_unique<ServerThread>(InferenceServer::create(std::move(*created), options));
  }
  httplib::Client client() const { return serving->client(); }
};

// Deterministic input number `seed`: 784 values in [-1, 1].
std::vector<float> make_input(int seed) {
  std::vector<float> x(784);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::sin(0.37f * static_cast<float>(seed) + 0.01f * static_cast<float>(i));
  return x;
}

// The single-threaded reference: every output of the model, run by a Session of its own.
std::vector<std::vector<float>> reference_outputs(const std::shared_ptr<const Model>& model,
                                                  std::vector<float> input) {
  auto session = Session::create(model, SessionOptions{});
  REQUIRE(session.has_value());
  std::vector<std::vector<float>> outputs;
  std::vector<TensorView> views;
  for (const TensorInfo& info : model->outputs()) {
    REQUIRE(info.dtype == DType::kFloat32);
    outputs.emplace_back(static_cast<size_t>(info.shape.element_count()));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    views.push_back({outputs[i].data(), DType::kFloat32, model->outputs()[i].shape, Device{}});
  }
  TensorView in{input.data(), DType::kFloat32, Shape{1, 784}, Device{}};
  const Status status = (*session)->run({&in, 1}, views);
  REQUIRE_MESSAGE(status.is_ok(), status.to_string());
  return outputs;
}

std::string json_request(const std::vector<float>& x, const std::string& id) {
  Json request = {
      {"id", id},
      {"inputs", {{{"name", "x"}, {"shape", {1, 784}}, {"datatype", "FP32"}, {"data", x}}}}};
  return request.dump();
}

// JSON header (input as binary, outputs requested as binary) + raw float bytes.
std::pair<std::string, size_t> binary_request(const std::vector<float>& x) {
  Json header = {{"inputs",
                  {{{"name", "x"},
                    {"shape", {1, 784}},
                    {"datatype", "FP32"},
                    {"parameters", {{"binary_data_size", x.size() * sizeof(float)}}}}}},
                 {"parameters", {{"binary_data_output", true}}}};
  std::string body = header.dump();
  const size_t json_bytes = body.size();
  body.append(reinterpret_cast<const char*>(x.data()), x.size() * sizeof(float));
  return {body, json_bytes};
}

// Outputs from a JSON response (floats parsed as double, then narrowed: exact for FP32).
std::vector<std::vector<float>> json_outputs(const std::string& body) {
  const Json response = Json::parse(body);
  std::vector<std::vector<float>> outputs;
  for (const Json& output : response.at("outputs")) {
    CHECK(output.at("datatype") == "FP32");
    std::vector<float> values;
    for (const Json& value : output.at("data"))
      values.push_back(static_cast<float>(value.get<double>()));
    outputs.push_back(std::move(values));
  }
  return outputs;
}

// Outputs from a binary response: JSON header of Inference-Header-Content-Length bytes, then data.
std::vector<std::vector<float>> binary_outputs(const httplib::Result& res) {
  const size_t json_bytes = std::stoul(res->get_header_value("Inference-Header-Content-Length"));
  const Json header = Json::parse(res->body.substr(0, json_bytes));
  size_t offset = json_bytes;
  std::vector<std::vector<float>> outputs;
  for (const Json& output : header.at("outputs")) {
    const size_t bytes = output.at("parameters").at("binary_data_size").get<size_t>();
    std::vector<float> values(bytes / sizeof(float));
    REQUIRE(offset + bytes <= res->body.size());
    std::memcpy(values.data(), res->body.data() + offset, bytes);
    offset += bytes;
    outputs.push_back(std::move(values));
  }
  CHECK(offset == res->body.size());
  return outputs;
}

bool same_bits(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size()) return false;
    if (std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) != 0) return false;
  }
  return true;
}

// Error status and body: {"error": "..."} containing `needle`.
void check_error(const httplib::Result& res, int status, const std::string& needle) {
  REQUIRE(res);
  CHECK(res->status == status);
  const Json body = Json::parse(res->body, nullptr, false);
  REQUIRE_MESSAGE(body.is_object(), res->body);
  INFO("error: " << body.value("error", std::string("(none)")));
  CHECK(body.at("error").get<std::string>().find(needle) != std::string::npos);
}

// Health, server / model metadata, config, stats and metrics; inference of input 0 matches the
// reference bit for bit with JSON and with binary tensors, and the id is echoed.
TEST_CASE("serve: endpoints and one inference") {
  auto model = load_mlp_batch1();
  if (!model) return;
  RunningServer running(model, 2, milliseconds(5000));
  httplib::Client client = running.client();

  for (const char* path : {"/v2/health/live", "/v2/health/ready", "/v2/models/mlp/ready",
                           "/v2/models/mlp/versions/1/ready"}) {
    auto res = client.Get(path);
    REQUIRE(res);
    CHECK_MESSAGE(res->status == 200, path);
  }
  auto server = client.Get("/v2");
  REQUIRE(server);
  const Json server_json = Json::parse(server->body);
  CHECK(server_json.at("name") == "onepool");
  const auto& extensions = server_json.at("extensions");
  CHECK(std::find(extensions.begin(), extensions.end(), "binary_tensor_data") != extensions.end());

  auto metadata = client.Get("/v2/models/mlp");
  REQUIRE(metadata);
  const Json meta = Json::parse(metadata->body);
  CHECK(meta.at("name") == "mlp");
  CHECK(meta.at("platform") == "onnx");
  CHECK(meta.at("inputs")[0].at("name") == "x");
  CHECK(meta.at("inputs")[0].at("datatype") == "FP32");
  CHECK(meta.at("inputs")[0].at("shape") == Json({1, 784}));
  CHECK(meta.at("outputs")[0].at("name") == model->outputs()[0].name);

  auto config = client.Get("/v2/models/mlp/config");
  REQUIRE(config);
  const Json config_json = Json::parse(config->body);
  CHECK(config_json.at("max_batch_size") == 0);
  CHECK(config_json.at("input")[0].at("data_type") == "TYPE_FP32");
  CHECK(config_json.at("input")[0].at("dims") == Json({1, 784}));

  const auto expected = reference_outputs(model, make_input(0));
  auto json_res = client.Post(kInfer, json_request(make_input(0), "req-0"), "application/json");
  REQUIRE(json_res);
  REQUIRE_MESSAGE(json_res->status == 200, json_res->body);
  CHECK(Json::parse(json_res->body).at("id") == "req-0");
  CHECK(Json::parse(json_res->body).at("model_name") == "mlp");
  CHECK(same_bits(json_outputs(json_res->body), expected));

  auto [body, json_bytes] = binary_request(make_input(0));
  httplib::Headers headers = {{"Inference-Header-Content-Length", std::to_string(json_bytes)}};
  auto bin_res = client.Post(kInfer, headers, body, "application/octet-stream");
  REQUIRE(bin_res);
  REQUIRE_MESSAGE(bin_res->status == 200, bin_res->body);
  CHECK(same_bits(binary_outputs(bin_res), expected));

  // 2 successful inferences so far.
  auto stats = client.Get("/v2/models/mlp/stats");
  REQUIRE(stats);
  const Json inference = Json::parse(stats->body).at("model_stats")[0].at("inference_stats");
  CHECK(inference.at("success").at("count") == 2);
  CHECK(inference.at("fail").at("count") == 0);
  CHECK(inference.at("compute_infer").at("count") == 2);
  CHECK(inference.at("queue").at("count") == 2);

  auto metrics = client.Get("/metrics");
  REQUIRE(metrics);
  CHECK(metrics->status == 200);
  const std::string& text = metrics->body;
  CHECK(text.find("onepool_requests_total{status=\"200\"}") != std::string::npos);
  CHECK(text.find("onepool_request_duration_seconds_bucket{le=\"+Inf\"}") != std::string::npos);
  CHECK(text.find("onepool_sessions 2\n") != std::string::npos);
  CHECK(text.find("onepool_sessions_busy 0\n") != std::string::npos);
  CHECK(text.find(str_cat("onepool_pool_bytes ", running.pool->pool_bytes(), "\n")) !=
        std::string::npos);
}

// 8 threads × 6 requests, alternating JSON and binary, each thread its own inputs: every
// response equals the single-threaded reference bit for bit.
TEST_CASE("serve: 8 concurrent clients get the single-threaded result") {
  auto model = load_mlp_batch1();
  if (!model) return;
  RunningServer running(model, 2, milliseconds(30000));
  constexpr int kThreads = 8;
  constexpr int kRequests = 6;
  std::vector<std::vector<std::vector<float>>> expected;
  for (int t = 0; t < kThreads; ++t)
    expected.push_back(reference_outputs(model, make_input(t + 1)));
  std::vector<int> matches(kThreads, 0);
  std::vector<std::string> problems(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      httplib::Client client = running.client();
      const std::vector<float> x = make_input(t + 1);
      for (int r = 0; r < kRequests; ++r) {
        std::vector<std::vector<float>> got;
        if (r % 2 == 0) {
          auto res = client.Post(kInfer, json_request(x, std::to_string(t)), "application/json");
          if (!res || res->status != 200) {
            problems[t] = res ? res->body : "no response";
            return;
          }
          got = json_outputs(res->body);
        } else {
          auto [body, json_bytes] = binary_request(x);
          httplib::Headers headers = {
              {"Inference-Header-Content-Length", std::to_string(json_bytes)}};
          auto res = client.Post(kInfer, headers, body, "application/octet-stream");
          if (!res || res->status != 200) {
            problems[t] = res ? res->body : "no response";
            return;
          }
          got = binary_outputs(res);
        }
        if (same_bits(got, expected[static_cast<size_t>(t)])) ++matches[static_cast<size_t>(t)];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    INFO("thread " << t << ": " << problems[static_cast<size_t>(t)]);
    CHECK(matches[static_cast<size_t>(t)] == kRequests);
  }
}

// Each bad request gets its code and a message naming the tensor and expected vs actual; the
// server answers a good request afterwards.
TEST_CASE("serve: bad requests get 4xx and the server keeps serving") {
  auto model = load_mlp_batch1();
  if (!model) return;
  RunningServer running(model, 1, milliseconds(5000));
  httplib::Client client = running.client();
  const std::vector<float> x = make_input(3);
  auto post = [&](const Json& body) {
    return client.Post(kInfer, body.dump(), "application/json");
  };
  auto input = [&](const std::string& name, Json shape, const std::string& dtype, Json data) {
    return Json{
        {"inputs", {{{"name", name}, {"shape", shape}, {"datatype", dtype}, {"data", data}}}}};
  };

  check_error(client.Post(kInfer, "{\"inputs\": [", "application/json"), 400, "malformed JSON");
  check_error(client.Post(kInfer, "[1, 2]", "application/json"), 400, "JSON object");
  check_error(post(input("y", {1, 784}, "FP32", x)), 400, "unknown input 'y'");
  check_error(post(Json{{"inputs", Json::array()}}), 400, "missing input 'x'");
  check_error(post(input("x", {2, 784}, "FP32", x)), 400,
              "input 'x': expected shape [1,784], got [2,784]; axis 0 differs");
  check_error(post(input("x", {1, 784}, "INT64", x)), 400,
              "input 'x': expected datatype FP32, got INT64");
  check_error(post(input("x", {1, 784}, "FP32", std::vector<float>(783, 0.f))), 400,
              "input 'x': expected 784 values for shape [1,784], got 783");
  check_error(post(input("x", {1, 784}, "FP32", Json::array({"a"}))), 400, "input 'x': element 0");
  check_error(post(Json{{"inputs", {{{"name", "x"}, {"shape", {1, 784}}}}}}), 400,
              "input 'x': missing 'datatype'");
  Json numeric_output = Json::parse(json_request(x, "1"));
  numeric_output["outputs"] = {{{"name", 5}}};
  check_error(post(numeric_output), 400, "malformed request");
  Json bad_output = Json::parse(json_request(x, "1"));
  bad_output["outputs"] = {{{"name", "nope"}}};
  check_error(post(bad_output), 400, "unknown output 'nope'");

  auto [body, json_bytes] = binary_request(x);
  httplib::Headers short_header = {{"Inference-Header-Content-Length", std::to_string(json_bytes)}};
  check_error(client.Post(kInfer, short_header, body.substr(0, body.size() - 4),
                          "application/octet-stream"),
              400, "input 'x': binary_data_size 3136 bytes, but only 3132");
  httplib::Headers bad_header = {{"Inference-Header-Content-Length", "abc"}};
  check_error(client.Post(kInfer, bad_header, body, "application/octet-stream"), 400,
              "Inference-Header-Content-Length");

  check_error(client.Post("/v2/models/other/infer", json_request(x, "1"), "application/json"), 404,
              "unknown model 'other'");
  check_error(client.Get("/v2/models/other"), 404, "unknown model 'other'");
  check_error(client.Get("/v2/nowhere"), 404, "no route");
  check_error(client.Post(kInfer, std::string((1 << 20) + 1, ' '), "application/json"), 413,
              "exceeds the limit of 1048576 bytes");

  auto ready = client.Get("/v2/health/ready");
  REQUIRE(ready);
  CHECK(ready->status == 200);
  auto good = client.Post(kInfer, json_request(x, "after"), "application/json");
  REQUIRE(good);
  CHECK(good->status == 200);
  CHECK(same_bits(json_outputs(good->body), reference_outputs(model, x)));
  auto metrics = client.Get("/metrics");
  REQUIRE(metrics);
  CHECK(metrics->body.find("onepool_requests_total{status=\"400\"} 13\n") != std::string::npos);
  CHECK(metrics->body.find("onepool_requests_total{status=\"413\"} 1\n") != std::string::npos);
}

// Statuses the HTTP layer used to get wrong: a known path with another method is 405 with an
// Allow header (not 404); rank 100 is the client's error (400, not 500); a 560 KB body sent as
// a form (curl -d's Content-Type) is inferred, not refused with 413 by a form-size limit; a
// port outside 0..65535 is refused by create() instead of wrapping (70000 would be 4464).
TEST_CASE("serve: 405 with Allow, rank 100 is 400, form-encoded bodies, port range") {
  auto model = load_mlp_batch1();
  if (!model) return;
  RunningServer running(model, 1, milliseconds(5000));
  httplib::Client client = running.client();

  auto put = client.Put(kInfer, "{}", "application/json");
  check_error(put, 405, "method PUT not allowed for /v2/models/mlp/infer; allowed: POST");
  CHECK(put->get_header_value("Allow") == "POST");
  auto del = client.Delete("/v2/health/live");
  check_error(del, 405, "method DELETE not allowed");
  CHECK(del->get_header_value("Allow") == "GET, HEAD");
  check_error(client.Get(kInfer), 405, "allowed: POST");
  check_error(client.Get("/v2/models/mlp/nothing"), 404, "no route for GET");

  const Json rank_100 = {{"inputs",
                          {{{"name", "x"},
                            {"shape", std::vector<int>(100, 1)},
                            {"datatype", "FP32"},
                            {"data", {1.0}}}}}};
  check_error(client.Post(kInfer, rank_100.dump(), "application/json"), 400,
              "input 'x': rank 100 exceeds the maximum rank 8");

  const std::vector<float> x = make_input(9);
  const std::string padded = json_request(x, "form") + std::string(560000, ' ');
  auto form = client.Post(kInfer, padded, "application/x-www-form-urlencoded");
  REQUIRE(form);
  CHECK_MESSAGE(form->status == 200, form->body.substr(0, 300));
  CHECK(same_bits(json_outputs(form->body), reference_outputs(model, x)));

  auto pool = SessionPool::create(model, SessionOptions{}, 1);
  REQUIRE(pool.has_value());
  ServeOptions options;
  options.model_name = "mlp";
  options.port = 70000;
  auto refused = InferenceServer::create(std::move(*pool), options);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.status().message().find("--port 70000 is outside 0..65535") != std::string::npos);
}

// A keep-alive client reuses its connection through the front for 20 requests, each answered.
TEST_CASE("serve: keep-alive connections serve many requests") {
  auto model = load_mlp_batch1();
  if (!model) return;
  RunningServer running(model, 1, milliseconds(5000));
  httplib::Client client = running.client();
  client.set_keep_alive(true);
  int ok = 0;
  for (int i = 0; i < 10; ++i) {
    auto ready = client.Get("/v2/health/ready");
    auto infer = client.Post(kInfer, json_request(make_input(i), "k"), "application/json");
    ok += (ready && ready->status == 200) + (infer && infer->status == 200);
  }
  CHECK(ok == 20);
}

// With its only Session leased by the test, an infer waits the 100 ms queue timeout and gets
// 503 "busy: all 1 sessions in use for 100 ms"; once the lease is back, the same request works.
TEST_CASE("serve: busy pool answers 503") {
  auto model = load_mlp_batch1();
  if (!model) return;
  RunningServer running(model, 1, milliseconds(100));
  httplib::Client client = running.client();
  const std::string request = json_request(make_input(5), "busy");
  {
    auto lease = running.pool->acquire(milliseconds(1000));
    REQUIRE(lease.has_value());
    check_error(client.Post(kInfer, request, "application/json"), 503,
                "busy: all 1 sessions in use for 100 ms");
  }
  auto res = client.Post(kInfer, request, "application/json");
  REQUIRE(res);
  CHECK(res->status == 200);
}

}  // namespace
}  // namespace onepool::serve
