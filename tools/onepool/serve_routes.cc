#include "tools/onepool/serve_routes.h"

#include <httplib.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <regex>
#include <utility>
#include <vector>

#include "tools/onepool/serve_binary.h"
#include "tools/onepool/serve_codec.h"
#include "tools/onepool/serve_front.h"
#include "tools/onepool/serve_metrics.h"

namespace onepool::serve {

namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

// A path segment, then an optional /versions/{v}, then the rest of the route.
constexpr const char* kModelPrefix = R"(/v2/models/([^/]+)(?:/versions/([^/]+))?)";

uint64_t ns_since(Clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
}

// A request's duration counts from its first byte (the front's stamp), so that a slow upload
// or a request httplib rejects is recorded with the time it really took.
double request_seconds() {
  const Clock::time_point start = HttpFront::request_start();
  if (start == Clock::time_point{}) return 0.0;
  return static_cast<double>(ns_since(start)) * 1e-9;
}

HttpFrontOptions front_options(const ServeOptions& options, size_t sessions,
                               std::function<void(int, double)> on_front_response) {
  HttpFrontOptions front;
  front.header_timeout = std::min(options.header_timeout, options.read_timeout);
  front.read_timeout = options.read_timeout;
  front.write_timeout = options.write_timeout;
  front.keep_alive_timeout = options.keep_alive_timeout;
  front.max_body_bytes = options.max_body_bytes;
  // Room for four bodies of the maximum size at once (at least 256 MiB); more get 503.
  const size_t four_bodies =
      options.max_body_bytes > SIZE_MAX / 4 ? SIZE_MAX : 4 * options.max_body_bytes;
  front.max_buffered_bytes = std::max(size_t{256} << 20, four_bodies);
  front.max_connections = options.max_connections;
  front.post_threads =
      options.http_threads != 0 ? options.http_threads : std::max<size_t>(8, 2 * sessions);
  front.other_threads = 2;
  front.on_front_response = std::move(on_front_response);
  return front;
}

int http_status(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kResourceExhausted:
      return 503;
    default:
      return 500;
  }
}

void respond_json(httplib::Response& res, int status, const Json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, Json::error_handler_t::replace), "application/json");
}

void respond_error(httplib::Response& res, int status, const std::string& message) {
  respond_json(res, status, Json{{"error", message}});
}

std::string default_error_message(const httplib::Request& req, int status, size_t max_body) {
  if (status == 413) {
    return str_cat("request body of ", req.get_header_value("Content-Length"),
                   " bytes exceeds the limit of ", max_body, " bytes (--max-body-bytes)");
  }
  if (status == 404) return str_cat("no route for ", req.method, " ", req.path);
  return str_cat("HTTP ", status, " for ", req.method, " ", req.path);
}

}  // namespace

class InferenceServerImpl {
 public:
  InferenceServerImpl(std::unique_ptr<InferenceSlots> slots, ServeOptions options)
      : slots_(std::move(slots)),
        options_(std::move(options)),
        http_(front_options(options_, slots_->size(), [this](int status, double seconds) {
          metrics_.record_request(status, seconds);
        })) {}

  void configure();
  Expected<int> bind();
  Status serve();
  void stop() {
    http_.stop();
    http_.stop_connections();
  }
  bool is_running() const { return http_.is_running(); }

 private:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
  using BodyHandler =
      std::function<void(const httplib::Request&, const std::string&, httplib::Response&)>;
  struct Route {
    std::regex pattern;
    const char* method;
  };
  void route_get(const std::string& pattern, Handler handler);
  void route_post(const std::string& pattern, BodyHandler handler);
  Handler measured(Handler handler);
  // Before any body is read: 404 for a path no route matches, 405 (with Allow) for a path
  // routed for other methods only.
  httplib::Server::HandlerResponse check_route(const httplib::Request& req, httplib::Response& res);
  // Step 0 of every model route: 404 unless {m} (and {v}, if given) name the served model.
  bool check_model(const httplib::Request& req, httplib::Response& res) const;
  void handle_infer(const httplib::Request& req, const std::string& body, httplib::Response& res);
  Status infer(const httplib::Request& req, const std::string& body, httplib::Response& res,
               InferencePhases& phases);
  PoolGauges gauges() const { return {slots_->pool_bytes(), slots_->size(), slots_->busy()}; }

  std::unique_ptr<InferenceSlots> slots_;
  ServeOptions options_;
  ServeMetrics metrics_;
  std::vector<Route> routes_;
  HttpFront http_;  // last: its threads stop before the members they call into go
};

InferenceServerImpl::Handler InferenceServerImpl::measured(Handler handler) {
  return [this, handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
    try {
      handler(req, res);
    } catch (const std::exception& error) {
      respond_error(res, 500, str_cat("internal error: ", error.what()));
    } catch (...) {
      respond_error(res, 500, "internal error: unknown exception");
    }
    if (res.status == -1) res.status = 200;  // httplib's "not set yet"
    metrics_.record_request(res.status, request_seconds());
  };
}

void InferenceServerImpl::route_get(const std::string& pattern, Handler handler) {
  routes_.push_back({std::regex(pattern), "GET"});
  http_.Get(pattern, measured(std::move(handler)));
}

// POST handlers read the body themselves: httplib's own body reading parses a body without a
// Content-Type as a form and refuses one over 8 KiB with 413 (curl -d sends exactly that).
void InferenceServerImpl::route_post(const std::string& pattern, BodyHandler handler) {
  routes_.push_back({std::regex(pattern), "POST"});
  auto read_then_handle = [this, handler = std::move(handler)](
                              const httplib::Request& req, httplib::Response& res,
                              const httplib::ContentReader& reader) {
    measured([&](const httplib::Request& request, httplib::Response& response) {
      if (request.is_multipart_form_data()) {
        respond_error(response, 415,
                      "multipart/form-data bodies are not supported: send application/json or "
                      "application/octet-stream (binary tensor data)");
        return;
      }
      std::string body;
      const bool complete = reader([&](const char* data, size_t size) {
        body.append(data, size);
        return true;
      });
      if (!complete) {
        const int status = response.status >= 400 ? response.status : 400;
        respond_error(response, status,
                      default_error_message(request, status, options_.max_body_bytes));
        return;
      }
      handler(request, body, response);
    })(req, res);
  };
  http_.Post(pattern, httplib::Server::HandlerWithContentReader(std::move(read_then_handle)));
}

httplib::Server::HandlerResponse InferenceServerImpl::check_route(const httplib::Request& req,
                                                                  httplib::Response& res) {
  const std::string& method = req.method == "HEAD" ? std::string("GET") : req.method;
  std::string allowed;
  for (const Route& route : routes_) {
    if (!std::regex_match(req.path, route.pattern)) continue;
    if (method == route.method) return httplib::Server::HandlerResponse::Unhandled;
    if (allowed.find(route.method) != std::string::npos) continue;
    allowed += allowed.empty() ? "" : ", ";
    allowed += route.method == std::string("GET") ? "GET, HEAD" : route.method;
  }
  if (allowed.empty()) {
    respond_error(res, 404, default_error_message(req, 404, options_.max_body_bytes));
  } else {
    res.set_header("Allow", allowed);
    respond_error(
        res, 405,
        str_cat("method ", req.method, " not allowed for ", req.path, "; allowed: ", allowed));
  }
  metrics_.record_request(res.status, request_seconds());
  return httplib::Server::HandlerResponse::Handled;
}

bool InferenceServerImpl::check_model(const httplib::Request& req, httplib::Response& res) const {
  const std::string name = req.matches[1].str();
  if (name != options_.model_name) {
    respond_error(
        res, 404,
        str_cat("unknown model '", name, "'; this server serves '", options_.model_name, "'"));
    return false;
  }
  const std::string version = req.matches.size() > 2 ? req.matches[2].str() : "";
  if (!version.empty() && version != "1") {
    respond_error(
        res, 404,
        str_cat("model '", name, "': unknown version '", version, "'; expected version 1"));
    return false;
  }
  return true;
}

void InferenceServerImpl::configure() {
  const std::string model = kModelPrefix;
  route_get("/v2/health/live", [](auto&, auto& res) { respond_json(res, 200, {{"live", true}}); });
  route_get("/v2/health/ready", [](auto&, auto& res) {
    respond_json(res, 200, {{"ready", true}});
  });
  route_get("/v2", [](auto&, auto& res) { respond_json(res, 200, server_metadata()); });
  route_get(model, [this](const auto& req, auto& res) {
    if (check_model(req, res))
      respond_json(res, 200, model_metadata(options_.model_name, slots_->served()));
  });
  route_get(model + "/ready", [this](const auto& req, auto& res) {
    if (check_model(req, res))
      respond_json(res, 200, {{"name", options_.model_name}, {"ready", true}});
  });
  route_get(model + "/config", [this](const auto& req, auto& res) {
    if (!check_model(req, res)) return;
    respond_json(
        res, 200,
        model_config(options_.model_name, slots_->served(), slots_->size(), slots_->device()));
  });
  route_get(model + "/stats", [this](const auto& req, auto& res) {
    if (check_model(req, res)) respond_json(res, 200, metrics_.triton_stats(options_.model_name));
  });
  route_get("/metrics", [this](auto&, auto& res) {
    res.set_content(metrics_.prometheus_text(gauges()), "text/plain; version=0.0.4");
  });
  route_post(model + "/infer", [this](const auto& req, const std::string& body, auto& res) {
    handle_infer(req, body, res);
  });
  http_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    return check_route(req, res);
  });

  // Requests no handler answered (unparsable HTTP) get a JSON error body here, recorded with
  // their real duration; handler errors already have a body and are recorded by measured().
  using HandlerResponse = httplib::Server::HandlerResponse;
  http_.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req,
                                                                      httplib::Response& res) {
    if (!res.body.empty()) return HandlerResponse::Unhandled;
    metrics_.record_request(res.status, request_seconds());
    respond_error(res, res.status, default_error_message(req, res.status, options_.max_body_bytes));
    return HandlerResponse::Handled;
  }));
  http_.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        respond_error(res, 500, "internal error");
      });
  http_.set_payload_max_length(options_.max_body_bytes);
  http_.set_tcp_nodelay(true);
  // Only the Keep-Alive response header uses these (the front keeps connections): say the truth.
  http_.set_keep_alive_max_count(1000000);
  http_.set_keep_alive_timeout(std::max<time_t>(1, options_.keep_alive_timeout.count() / 1000));
}

void InferenceServerImpl::handle_infer(const httplib::Request& req, const std::string& body,
                                       httplib::Response& res) {
  if (!check_model(req, res)) return;
  const auto start = Clock::now();
  InferencePhases phases;
  const Status status = infer(req, body, res, phases);
  if (!status.is_ok()) {
    metrics_.record_failure(ns_since(start));
    respond_error(res, http_status(status), status.message());
    return;
  }
  phases.total_ns = ns_since(start);
  metrics_.record_success(phases);
}

// Step 1. decode (no Session held), Step 2. run on a free slot, Step 3. encode.
Status InferenceServerImpl::infer(const httplib::Request& req, const std::string& body,
                                  httplib::Response& res, InferencePhases& phases) {
  auto start = Clock::now();
  ONEPOOL_ASSIGN_OR_RETURN(BodyParts parts,
                           split_body(body, req.get_header_value(kInferenceHeaderLength)));
  const ServedModel& model = slots_->served();
  ONEPOOL_ASSIGN_OR_RETURN(InferRequest request,
                           decode_infer_request(model, parts.json, parts.binary));
  phases.input_ns = ns_since(start);
  ONEPOOL_ASSIGN_OR_RETURN(std::vector<HostTensor> outputs,
                           slots_->run(request.inputs, options_.queue_timeout, phases));

  start = Clock::now();
  EncodedResponse encoded = encode_infer_response(options_.model_name, model, request, outputs);
  res.status = 200;
  if (encoded.has_binary) {
    res.set_header(kInferenceHeaderLength, std::to_string(encoded.json_bytes));
    res.set_content(std::move(encoded.body), kBinaryContentType);
  } else {
    res.set_content(std::move(encoded.body), "application/json");
  }
  phases.output_ns = ns_since(start);
  return Status::ok();
}

Expected<int> InferenceServerImpl::bind() {
  if (options_.port == 0) {
    const int port = http_.bind_to_any_port(options_.host);
    if (port <= 0)
      return make_status(StatusCode::kFailedPrecondition, "cannot bind ", options_.host, ":0");
    if (!http_.raise_backlog())
      return make_status(StatusCode::kFailedPrecondition, "cannot listen on ", options_.host);
    return port;
  }
  if (!http_.bind_to_port(options_.host, options_.port)) {
    return make_status(StatusCode::kFailedPrecondition, "cannot bind ", options_.host, ":",
                       options_.port, " (in use, or not a local address)");
  }
  if (!http_.raise_backlog())
    return make_status(StatusCode::kFailedPrecondition, "cannot listen on ", options_.host);
  return options_.port;
}

Status InferenceServerImpl::serve() {
  if (!http_.listen_after_bind()) {
    return make_status(StatusCode::kFailedPrecondition, "serving on ", options_.host,
                       " stopped with an error (was bind() called?)");
  }
  return Status::ok();
}

Expected<std::unique_ptr<InferenceServer>> InferenceServer::create(
    std::unique_ptr<SessionPool> pool, const ServeOptions& options) {
  if (!pool) return Status(StatusCode::kInvalidArgument, "serve: no session pool");
  return create(make_session_slots(std::move(pool)), options);
}

Expected<std::unique_ptr<InferenceServer>> InferenceServer::create(
    std::unique_ptr<InferenceSlots> slots, const ServeOptions& options) {
  if (!slots) return Status(StatusCode::kInvalidArgument, "serve: no sessions");
  if (options.model_name.empty())
    return Status(StatusCode::kInvalidArgument, "serve: empty model name");
  if (options.max_body_bytes == 0) {
    return Status(StatusCode::kInvalidArgument, "serve: --max-body-bytes must be > 0");
  }
  // httplib stores the port in 16 bits: 70000 would silently listen on 4464.
  if (options.port < 0 || options.port > 65535) {
    return make_status(StatusCode::kInvalidArgument, "serve: --port ", options.port,
                       " is outside 0..65535 (0 = any free port)");
  }
  using std::chrono::milliseconds;
  for (const auto& [name, value] : {std::pair{"--header-timeout-ms", options.header_timeout},
                                    std::pair{"--read-timeout-ms", options.read_timeout},
                                    std::pair{"write time-out", options.write_timeout},
                                    std::pair{"keep-alive time-out", options.keep_alive_timeout}}) {
    if (value <= milliseconds(0)) {
      return make_status(StatusCode::kInvalidArgument, "serve: ", name, " must be > 0, got ",
                         value.count());
    }
  }
  if (options.max_connections == 0) {
    return Status(StatusCode::kInvalidArgument, "serve: --max-connections must be > 0");
  }
  auto impl = std::make_unique<InferenceServerImpl>(std::move(slots), options);
  impl->configure();
  return std::unique_ptr<InferenceServer>(new InferenceServer(std::move(impl)));
}

InferenceServer::InferenceServer(std::unique_ptr<InferenceServerImpl> impl)
    : impl_(std::move(impl)) {}
InferenceServer::~InferenceServer() { impl_->stop(); }
Expected<int> InferenceServer::bind() { return impl_->bind(); }
Status InferenceServer::serve() { return impl_->serve(); }
void InferenceServer::stop() { impl_->stop(); }
bool InferenceServer::is_running() const { return impl_->is_running(); }

}  // namespace onepool::serve
