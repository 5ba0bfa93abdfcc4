#include "tools/onepool/serve_front.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

#include "onepool/status.h"

namespace onepool::serve {

using Clock = HttpFront::Clock;
using std::chrono::milliseconds;

struct HttpFront::Connection {
  int fd = -1;
  std::string in;            // received bytes not yet consumed by a request
  size_t scanned = 0;        // bytes of `in` already searched for the end of the headers
  size_t header_bytes = 0;   // 0 until the headers are complete
  size_t request_bytes = 0;  // headers + body, once the headers are complete
  size_t reserved = 0;       // body bytes reserved from max_buffered_bytes
  bool started = false;      // a byte of the current request arrived
  bool post = false;
  bool close_after = false;  // the peer half-closed: answer this request, then close
  bool draining = false;     // answered by the front; bytes are read and dropped until close
  bool over_limit = false;   // accepted beyond max_connections
  Clock::time_point start;   // first byte of the current request
  Clock::time_point deadline;
};

namespace {

// How long a connection the front answered keeps being read (and its bytes dropped) so that the
// client sees the response instead of a reset from unread data.
constexpr milliseconds kLinger{1000};
// Bytes read from one connection per readiness event, so that one fast sender cannot starve
// the others.
constexpr size_t kReadPerEvent = 1u << 20;

thread_local Clock::time_point t_request_start{};

double seconds_since(Clock::time_point start, Clock::time_point now) {
  return std::chrono::duration<double>(now - start).count();
}

long long count_ms(milliseconds duration) { return static_cast<long long>(duration.count()); }

const char* reason_phrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 408:
      return "Request Timeout";
    case 411:
      return "Length Required";
    case 413:
      return "Payload Too Large";
    case 431:
      return "Request Header Fields Too Large";
    default:
      return "Service Unavailable";
  }
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// What the front needs from the request head: the method, the body length, and where an
// `Expect: 100-continue` line is (the front answers it, so httplib must not answer it again).
struct Framing {
  std::string method;
  uint64_t content_length = 0;
  size_t expect_line = std::string::npos;  // offset of the line, CRLF included
  size_t expect_line_bytes = 0;
  int status = 0;  // non-zero: the front answers with this status and `error`
  std::string error;
};

Framing parse_framing(std::string_view head) {
  Framing framing;
  const size_t first_end = head.find("\r\n");
  framing.method = std::string(head.substr(0, std::min(head.find(' '), first_end)));
  bool has_length = false;
  for (size_t pos = first_end + 2; pos < head.size();) {
    const size_t end = head.find("\r\n", pos);
    if (end == std::string_view::npos || end == pos) break;
    const std::string_view line = head.substr(pos, end - pos);
    const size_t colon = line.find(':');
    const std::string_view name = trim(line.substr(0, colon));
    const std::string_view value =
        colon == std::string_view::npos ? std::string_view() : trim(line.substr(colon + 1));
    if (iequals(name, "Content-Length")) {
      // Digits only: strtoull would read "-1" as 2^64 - 1 and "12abc" as 12.
      const bool digits =
          !value.empty() && value.size() <= 18 &&
          std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
      const uint64_t length = digits ? std::stoull(std::string(value)) : 0;
      if (!digits || (has_length && length != framing.content_length)) {
        framing.status = 400;
        framing.error = str_cat("invalid Content-Length '", value,
                                "': expected one non-negative decimal number of bytes");
        return framing;
      }
      has_length = true;
      framing.content_length = length;
    } else if (iequals(name, "Transfer-Encoding")) {
      framing.status = 411;
      framing.error = str_cat("Transfer-Encoding '", value,
                              "' is not supported: send the body with a Content-Length");
      return framing;
    } else if (iequals(name, "Expect") && iequals(value, "100-continue")) {
      framing.expect_line = pos;
      framing.expect_line_bytes = end + 2 - pos;
    }
    pos = end + 2;
  }
  return framing;
}

// One request's bytes for httplib to read, the socket for its response. Writes wait for the
// socket (the front made it non-blocking) until one deadline for the whole response.
class RequestStream final : public httplib::Stream {
 public:
  RequestStream(int fd, std::string_view request, Clock::time_point write_deadline)
      : fd_(fd), request_(request), write_deadline_(write_deadline) {}

  bool is_readable() const override { return offset_ < request_.size(); }
  bool is_writable() const override { return wait_writable(); }

  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, request_.size() - offset_);
    std::memcpy(ptr, request_.data() + offset_, n);
    offset_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    for (;;) {
      const ssize_t sent = ::send(fd_, ptr, size, MSG_NOSIGNAL);
      if (sent >= 0) return sent;
      if (errno == EINTR) continue;
      if ((errno == EAGAIN || errno == EWOULDBLOCK) && wait_writable()) continue;
      failed_ = true;
      return -1;
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    address(::getpeername, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    address(::getsockname, ip, port);
  }
  socket_t socket() const override { return fd_; }
  bool failed() const { return failed_; }

 private:
  bool wait_writable() const {
    const auto left =
        std::chrono::duration_cast<milliseconds>(write_deadline_ - Clock::now()).count();
    if (left <= 0) return false;
    pollfd entry{fd_, POLLOUT, 0};
    return ::poll(&entry, 1, static_cast<int>(std::min<long long>(left, 1 << 30))) > 0 &&
           (entry.revents & POLLOUT) != 0;
  }

  template <typename GetName>
  void address(GetName get_name, std::string& ip, int& port) const {
    sockaddr_storage storage{};
    socklen_t length = sizeof(storage);
    if (get_name(fd_, reinterpret_cast<sockaddr*>(&storage), &length) != 0) return;
    std::array<char, INET6_ADDRSTRLEN> text{};
    if (storage.ss_family == AF_INET) {
      const auto* v4 = reinterpret_cast<const sockaddr_in*>(&storage);
      ::inet_ntop(AF_INET, &v4->sin_addr, text.data(), text.size());
      port = ntohs(v4->sin_port);
    } else if (storage.ss_family == AF_INET6) {
      const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&storage);
      ::inet_ntop(AF_INET6, &v6->sin6_addr, text.data(), text.size());
      port = ntohs(v6->sin6_port);
    }
    ip = text.data();
  }

  int fd_;
  std::string_view request_;
  size_t offset_ = 0;
  Clock::time_point write_deadline_;
  bool failed_ = false;
};

// httplib hands each accepted socket to its task queue; this one runs the hand-off (a push to
// the front) at once on the accept thread.
class InlineTaskQueue final : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

}  // namespace

// A fixed set of worker threads over a FIFO of connections holding a whole request.
class HttpFront::Lane {
 public:
  Lane(size_t threads, std::function<void(std::unique_ptr<Connection>)> run)
      : run_(std::move(run)) {
    for (size_t i = 0; i < std::max<size_t>(threads, 1); ++i) {
      threads_.emplace_back([this] { work(); });
    }
  }
  ~Lane() { stop(); }

  void push(std::unique_ptr<Connection> connection) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(connection));
    }
    ready_.notify_one();
  }

  // Joins the workers (each finishes its request) and returns the connections still queued.
  std::deque<std::unique_ptr<Connection>> stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_all();
    for (std::thread& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
    std::lock_guard lock(mutex_);
    return std::move(queue_);
  }

 private:
  void work() {
    for (;;) {
      std::unique_ptr<Connection> connection;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (stopping_) return;
        connection = std::move(queue_.front());
        queue_.pop_front();
      }
      run_(std::move(connection));
    }
  }

  std::function<void(std::unique_ptr<Connection>)> run_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::unique_ptr<Connection>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

HttpFront::HttpFront(HttpFrontOptions options) : options_(std::move(options)) {
  new_task_queue = [] { return new InlineTaskQueue; };
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = wake_fd_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &event);
  auto run = [this](std::unique_ptr<Connection> connection) { run_request(std::move(connection)); };
  post_lane_ = std::make_unique<Lane>(options_.post_threads, run);
  other_lane_ = std::make_unique<Lane>(options_.other_threads, run);
  front_ = std::thread([this] { front_loop(); });
}

HttpFront::~HttpFront() { stop_connections(); }

bool HttpFront::raise_backlog() {
  const socket_t sock = svr_sock_;
  return sock != INVALID_SOCKET && ::listen(sock, SOMAXCONN) == 0;
}

Clock::time_point HttpFront::request_start() { return t_request_start; }

void HttpFront::stop_connections() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake();
  if (front_.joinable()) front_.join();
  for (Lane* lane : {post_lane_.get(), other_lane_.get()}) {
    for (auto& connection : lane->stop()) ::close(connection->fd);
  }
  std::lock_guard lock(mutex_);
  for (auto& connection : incoming_) ::close(connection->fd);
  incoming_.clear();
  ::close(epoll_fd_);
  ::close(wake_fd_);
}

bool HttpFront::process_and_close_socket(socket_t sock) {
  ::fcntl(sock, F_SETFL, ::fcntl(sock, F_GETFL) | O_NONBLOCK);
  auto connection = std::make_unique<Connection>();
  connection->fd = sock;
  connection->deadline = Clock::now() + options_.header_timeout;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) {
      ::close(sock);
      return false;
    }
    connection->over_limit = open_connections_ >= options_.max_connections;
    ++open_connections_;
    incoming_.push_back(std::move(connection));
    wake();  // under the lock: stop_connections() closes the eventfd under it
  }
  return true;
}

void HttpFront::wake() const {
  const uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof(one));
}

void HttpFront::front_loop() {
  std::array<epoll_event, 64> events{};
  Clock::time_point next_expiry = Clock::now();
  for (;;) {
    const int ready = ::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), 50);
    const Clock::time_point now = Clock::now();
    std::vector<std::unique_ptr<Connection>> incoming;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) break;
      incoming.swap(incoming_);
    }
    for (auto& connection : incoming) adopt(std::move(connection), now);
    for (int i = 0; i < ready; ++i) {
      const int fd = events[static_cast<size_t>(i)].data.fd;
      if (fd == wake_fd_) {
        uint64_t count = 0;
        (void)!::read(wake_fd_, &count, sizeof(count));
        continue;
      }
      const auto it = connections_.find(fd);
      if (it != connections_.end()) read_ready(*it->second, now);
    }
    if (now >= next_expiry) {
      expire(now);
      next_expiry = now + milliseconds(50);
    }
  }
  for (auto& [fd, connection] : connections_) ::close(fd);
  connections_.clear();
}

void HttpFront::adopt(std::unique_ptr<Connection> connection, Clock::time_point now) {
  const int fd = connection->fd;
  epoll_event event{};
  event.events = EPOLLIN | EPOLLRDHUP;
  event.data.fd = fd;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
    ::close(fd);
    std::lock_guard lock(mutex_);
    --open_connections_;
    return;
  }
  Connection& adopted = *connection;
  connections_[fd] = std::move(connection);
  if (adopted.over_limit) {
    reject(adopted, 503, str_cat("server busy: ", options_.max_connections, " connections open"),
           now);
    return;
  }
  // Bytes of a pipelined next request may have come with the previous one.
  if (!adopted.in.empty()) {
    adopted.started = true;
    adopted.start = now;
    adopted.deadline = now + options_.header_timeout;
    advance(adopted, now);
  }
}

void HttpFront::read_ready(Connection& connection, Clock::time_point now) {
  std::array<char, 64u << 10> buffer;
  bool closed = false;
  for (size_t total = 0; total < kReadPerEvent;) {
    const ssize_t got = ::recv(connection.fd, buffer.data(), buffer.size(), 0);
    if (got > 0) {
      total += static_cast<size_t>(got);
      if (connection.draining) continue;
      connection.in.append(buffer.data(), static_cast<size_t>(got));
      // Stop at what the request can use, so a sender cannot make the buffer grow: the head
      // (parsed and limited by advance()) or the announced body.
      const size_t enough =
          connection.header_bytes == 0 ? options_.max_header_bytes : connection.request_bytes - 1;
      if (connection.in.size() > enough) break;
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    closed = got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
    break;
  }
  const int fd = connection.fd;
  if (!connection.draining && !connection.in.empty() && !connection.started) {
    connection.started = true;
    connection.start = now;
    connection.deadline = now + options_.header_timeout;
  }
  if (closed) connection.close_after = true;
  advance(connection, now);
  // A peer that closed before completing its request gets nothing more; a complete request was
  // dispatched (and leaves the map) and is answered before the close.
  if (closed && connections_.count(fd) != 0) close_connection(fd);
}

void HttpFront::advance(Connection& connection, Clock::time_point now) {
  if (connection.draining) return;
  std::string& in = connection.in;
  if (connection.header_bytes == 0) {
    // RFC 9112 2.2: ignore empty lines before a request line.
    while (in.size() >= 2 && in[0] == '\r' && in[1] == '\n') in.erase(0, 2);
    const size_t from = connection.scanned >= 3 ? connection.scanned - 3 : 0;
    const size_t end = in.find("\r\n\r\n", from);
    if (end == std::string::npos || end + 4 > options_.max_header_bytes) {
      connection.scanned = in.size();
      if (in.size() > options_.max_header_bytes) {
        reject(connection, 431,
               str_cat("request headers exceed ", options_.max_header_bytes, " bytes"), now);
      }
      return;
    }
    connection.header_bytes = end + 4;
    Framing framing = parse_framing(std::string_view(in.data(), connection.header_bytes));
    if (framing.status != 0) {
      reject(connection, framing.status, framing.error, now);
      return;
    }
    if (framing.content_length > options_.max_body_bytes) {
      reject(connection, 413,
             str_cat("request body of ", framing.content_length, " bytes exceeds the limit of ",
                     options_.max_body_bytes, " bytes (--max-body-bytes)"),
             now);
      return;
    }
    const auto length = static_cast<size_t>(framing.content_length);
    size_t buffered = 0;
    {
      std::lock_guard lock(mutex_);
      buffered = buffered_bytes_;
      if (buffered + length <= options_.max_buffered_bytes) buffered_bytes_ += length;
    }
    if (buffered + length > options_.max_buffered_bytes) {
      reject(connection, 503,
             str_cat("server busy: ", buffered, " bytes of request bodies buffered, limit ",
                     options_.max_buffered_bytes),
             now);
      return;
    }
    connection.reserved = length;
    connection.post = framing.method == "POST";
    if (framing.expect_line != std::string::npos) {
      in.erase(framing.expect_line, framing.expect_line_bytes);
      connection.header_bytes -= framing.expect_line_bytes;
      if (in.size() < connection.header_bytes + length) {
        static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
        (void)!::send(connection.fd, kContinue.data(), kContinue.size(),
                      MSG_NOSIGNAL | MSG_DONTWAIT);
      }
    }
    connection.request_bytes = connection.header_bytes + length;
    connection.deadline = connection.start + options_.read_timeout;
  }
  if (in.size() >= connection.request_bytes) dispatch(connection.fd);
}

void HttpFront::reject(Connection& connection, int status, const std::string& message,
                       Clock::time_point now) {
  const std::string body = nlohmann::json{{"error", message}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::string response =
      str_cat("HTTP/1.1 ", status, " ", reason_phrase(status),
              "\r\nContent-Type: application/json\r\nContent-Length: ", body.size(),
              "\r\nConnection: close\r\n\r\n", body);
  (void)!::send(connection.fd, response.data(), response.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::shutdown(connection.fd, SHUT_WR);
  if (connection.reserved != 0) {
    std::lock_guard lock(mutex_);
    buffered_bytes_ -= connection.reserved;
    connection.reserved = 0;
  }
  if (options_.on_front_response) {
    options_.on_front_response(status,
                               seconds_since(connection.started ? connection.start : now, now));
  }
  connection.draining = true;
  connection.in = std::string();
  connection.deadline = now + kLinger;
}

void HttpFront::expire(Clock::time_point now) {
  std::vector<Connection*> expired;
  for (auto& [fd, connection] : connections_) {
    if (connection->deadline <= now) expired.push_back(connection.get());
  }
  for (Connection* connection : expired) {
    if (connection->draining || !connection->started) {
      close_connection(connection->fd);  // answered, or idle: nothing to say
    } else if (connection->header_bytes == 0) {
      reject(*connection, 408,
             str_cat("request headers not complete within ", count_ms(options_.header_timeout),
                     " ms (got ", connection->in.size(), " bytes)"),
             now);
    } else {
      reject(*connection, 408,
             str_cat("request body not complete within ", count_ms(options_.read_timeout),
                     " ms (got ", connection->in.size() - connection->header_bytes, " of ",
                     connection->request_bytes - connection->header_bytes, " bytes)"),
             now);
    }
  }
}

void HttpFront::dispatch(int fd) {
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  const auto it = connections_.find(fd);
  std::unique_ptr<Connection> connection = std::move(it->second);
  connections_.erase(it);
  Lane& lane = connection->post ? *post_lane_ : *other_lane_;
  lane.push(std::move(connection));
}

void HttpFront::close_connection(int fd) {
  const auto it = connections_.find(fd);
  if (it == connections_.end()) return;
  const size_t reserved = it->second->reserved;
  connections_.erase(it);
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  ::close(fd);
  std::lock_guard lock(mutex_);
  buffered_bytes_ -= reserved;
  --open_connections_;
}

// Step 3, on a worker: httplib parses the buffered request, routes it and writes the response.
void HttpFront::run_request(std::unique_ptr<Connection> connection) {
  t_request_start = connection->start;
  RequestStream stream(connection->fd,
                       std::string_view(connection->in.data(), connection->request_bytes),
                       Clock::now() + options_.write_timeout);
  bool connection_closed = false;
  const bool written =
      process_request(stream, connection->close_after, connection_closed, [](httplib::Request&) {});
  t_request_start = Clock::time_point{};
  const bool keep = written && !connection_closed && !connection->close_after && !stream.failed();
  std::lock_guard lock(mutex_);
  buffered_bytes_ -= connection->reserved;
  connection->reserved = 0;
  if (!keep || stopping_) {
    ::close(connection->fd);
    --open_connections_;
    return;
  }
  // Keep-alive: the connection waits in the front again, with any pipelined bytes.
  connection->in.erase(0, connection->request_bytes);
  connection->scanned = 0;
  connection->header_bytes = 0;
  connection->request_bytes = 0;
  connection->started = false;
  connection->post = false;
  connection->deadline = Clock::now() + options_.keep_alive_timeout;
  incoming_.push_back(std::move(connection));
  wake();
}

}  // namespace onepool::serve
