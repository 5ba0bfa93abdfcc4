// onepool serve: a KServe v2 HTTP server over a SessionPool (routes in serve_routes.h).
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "onepool/session_pool.h"
#include "onepool/thread_pool.h"
#include "tools/onepool/cli_common.h"
#include "tools/onepool/commands.h"
#include "tools/onepool/host_info.h"
#include "tools/onepool/memory_report.h"
#include "tools/onepool/serve_routes.h"
#include "tools/onepool/shape_ranges.h"

namespace onepool::cli {

namespace {

struct ServeFlags {
  ModelFlags model;
  serve::ServeOptions server;
  size_t sessions = 1;
  int64_t queue_timeout_ms = 1000;
  int64_t header_timeout_ms = 5000;
  int64_t read_timeout_ms = 30000;
  std::string mode = "static";  // with --shapes ranges: DynamicSession pool mode
  size_t cache = 8;             // with --shapes ranges: specializations kept per Session
};

using serve::InferenceSlots;

// Who runs the Sessions' CPU work: one shared pool, or a pool of its own per Session (then up to
// sessions x threads threads busy at once, more than the cores unless --threads says otherwise).
void print_thread_use(const SessionOptions& options, size_t sessions) {
  if (options.thread_pool) {
    std::printf("threads:   one shared pool of %d threads for the %zu Sessions\n",
                options.thread_pool->threads(), sessions);
    return;
  }
  const int each = resolve_threads(options.threads);
  std::printf("threads:   %d per Session, up to %zu busy at once on %d logical cores%s\n", each,
              static_cast<size_t>(each) * sessions, logical_cores(),
              static_cast<size_t>(each) * sessions > static_cast<size_t>(logical_cores())
                  ? " (--shared-threads shares one pool)"
                  : "");
}

// Fixed shapes: one Model (weights shared) and a SessionPool over it.
Expected<std::unique_ptr<InferenceSlots>> make_session_slots(const ServeFlags& flags) {
  ONEPOOL_ASSIGN_OR_RETURN(LoadOptions load_options, make_load_options(flags.model));
  ONEPOOL_ASSIGN_OR_RETURN(SessionOptions options, make_session_options(flags.model));
  const auto start = std::chrono::steady_clock::now();
  ONEPOOL_ASSIGN_OR_RETURN(auto model, Model::load(flags.model.model_path, load_options));
  for (const std::string& warning : model->warnings()) {
    std::fprintf(stderr, "warning: %s\n", warning.c_str());
  }
  Plan saved_plan;
  if (!flags.model.load_plan.empty()) {
    ONEPOOL_ASSIGN_OR_RETURN(saved_plan, read_plan_file(flags.model.load_plan));
    ONEPOOL_RETURN_IF_ERROR(check_saved_plan(saved_plan, flags.model, *model));
    options.plan_override = &saved_plan;
  }
  ONEPOOL_ASSIGN_OR_RETURN(auto pool, SessionPool::create(model, options, flags.sessions));
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("loaded:    %.1f ms | weights %s (shared)\n", ms,
              format_bytes(model->weights_bytes()).c_str());
  std::printf("sessions:  %zu x pool %s = %s\n", pool->size(),
              format_bytes(pool->plan().pool_bytes).c_str(),
              format_bytes(pool->pool_bytes()).c_str());
  if (options.device.kind == DeviceKind::kCpu) print_thread_use(options, pool->size());
  std::printf("%s\n", peak_rss_text(peak_rss_bytes(), pool->pool_bytes(), model->weights_bytes(),
                                    options.device.kind == DeviceKind::kCpu)
                          .c_str());
  return serve::make_session_slots(std::move(pool));
}

// Shape ranges: one DynamicSession per slot, each taking any shape inside the profile.
Expected<std::unique_ptr<InferenceSlots>> make_range_slots(const ServeFlags& flags) {
  if (!flags.model.load_plan.empty() || !flags.model.save_plan.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  "--load-plan / --save-plan need fixed --shapes: with ranges each shape is "
                  "planned when it first arrives");
  }
  ONEPOOL_ASSIGN_OR_RETURN(DynamicSessionOptions options,
                           make_dynamic_session_options(flags.model, flags.mode, flags.cache));
  if (options.session.device.kind != DeviceKind::kCpu) {
    return make_status(StatusCode::kUnsupported, "--shapes with ranges serves on the CPU only (",
                       flags.model.device, " asked): give fixed --shapes for CUDA");
  }
  const auto start = std::chrono::steady_clock::now();
  ONEPOOL_ASSIGN_OR_RETURN(
      auto slots, serve::make_dynamic_slots(flags.model.model_path, options, flags.sessions));
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("profile:   %s (%s mode, %zu shapes cached per Session)\n",
              options.profile.to_string().c_str(), flags.mode.c_str(), flags.cache);
  std::printf("loaded:    %.1f ms | %zu DynamicSessions, pools %s together now\n", ms,
              slots->size(), format_bytes(slots->pool_bytes()).c_str());
  if (const std::string note = slots->note(); !note.empty()) {
    std::printf("mode:      %s\n", note.c_str());
  }
  print_thread_use(options.session, slots->size());
  std::printf("%s\n", peak_rss_text(peak_rss_bytes(), slots->pool_bytes(), 0, true).c_str());
  return slots;
}

Status run_serve(ServeFlags flags) {
  if (flags.server.model_name.empty()) {
    flags.server.model_name = std::filesystem::path(flags.model.model_path).stem().string();
  }
  if (flags.queue_timeout_ms < 0) {
    return make_status(StatusCode::kInvalidArgument, "--queue-timeout-ms: expected >= 0, got ",
                       flags.queue_timeout_ms);
  }
  flags.server.queue_timeout = std::chrono::milliseconds(flags.queue_timeout_ms);
  flags.server.header_timeout = std::chrono::milliseconds(flags.header_timeout_ms);
  flags.server.read_timeout = std::chrono::milliseconds(flags.read_timeout_ms);
  std::printf("model:     %s (served as '%s')\n", flags.model.model_path.c_str(),
              flags.server.model_name.c_str());
  std::printf("device:    %s   sessions: %zu   queue timeout: %lld ms   max body: %zu B\n",
              flags.model.device.c_str(), flags.sessions,
              static_cast<long long>(flags.queue_timeout_ms), flags.server.max_body_bytes);
  ONEPOOL_ASSIGN_OR_RETURN(auto slots, has_shape_ranges(flags.model.shapes)
                                           ? make_range_slots(flags)
                                           : make_session_slots(flags));
  ONEPOOL_ASSIGN_OR_RETURN(auto server,
                           serve::InferenceServer::create(std::move(slots), flags.server));
  ONEPOOL_ASSIGN_OR_RETURN(int port, server->bind());
  std::printf("serving:   http://%s:%d/v2/models/%s/infer\n", flags.server.host.c_str(), port,
              flags.server.model_name.c_str());
  std::fflush(stdout);
  return server->serve();
}

}  // namespace

void register_serve_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ServeFlags>();
  CLI::App* serve = app.add_subcommand("serve", "serve a model over HTTP (KServe v2 protocol)");
  add_model_flags(*serve, flags->model);
  serve->add_option("--port", flags->server.port, "TCP port, 0..65535 (0 = any free port)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  serve->add_option("--host", flags->server.host, "address to listen on")->capture_default_str();
  serve->add_option("--sessions", flags->sessions, "concurrent Sessions (one pool each)")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{1024}));
  serve->add_flag("--shared-threads", flags->model.shared_threads,
                  "the Sessions share one pool of --threads CPU threads (0 = all cores) "
                  "instead of each starting its own");
  serve
      ->add_option("--mode", flags->mode,
                   "with --shapes ranges: static (one pool sized for the top of the ranges) or "
                   "dynamic (a pool that grows to the largest shape seen)")
      ->capture_default_str()
      ->check(CLI::IsMember({"static", "dynamic"}));
  serve
      ->add_option("--cache", flags->cache,
                   "with --shapes ranges: shapes kept planned per Session (least recently used "
                   "out)")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{1024}));
  serve->add_option("--name", flags->server.model_name,
                    "model name in the URLs (default: file stem)");
  serve->add_option("--max-body-bytes", flags->server.max_body_bytes, "larger requests get 413")
      ->capture_default_str();
  serve
      ->add_option("--queue-timeout-ms", flags->queue_timeout_ms,
                   "wait this long for a free Session, then answer 503")
      ->capture_default_str();
  serve
      ->add_option("--http-threads", flags->server.http_threads,
                   "worker threads for inference requests (0 = max(8, 2 x sessions)); two more "
                   "serve health, metadata and metrics")
      ->capture_default_str();
  serve
      ->add_option("--header-timeout-ms", flags->header_timeout_ms,
                   "a request's line and headers must arrive within this, else 408")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{3600000}));
  serve
      ->add_option("--read-timeout-ms", flags->read_timeout_ms,
                   "a whole request (body included) must arrive within this, else 408")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{3600000}));
  serve
      ->add_option("--max-connections", flags->server.max_connections,
                   "open connections at once; more get 503")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{100000}));
  serve->callback([flags, &exit_code] {
    const Status status = run_serve(*flags);
    exit_code = status.is_ok() ? 0 : report_error(status);
  });
}

}  // namespace onepool::cli
