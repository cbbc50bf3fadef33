// A minimal HTTP/1.1 server for the daemon's metrics (`lathe serve
// --metrics-listen`, docs/service.md "Metrics"): plain HTTP, one request
// per connection, a fixed table of paths each answered by a function.
//
// It faces the network, so everything a client sends is bounded:
// - a request (request line and headers) over max_request_bytes is
//   answered 431 and closed; a body is never read;
// - a connection has io_deadline to send its whole request, and again to
//   receive its answer; a client that stalls (half a request, or never
//   reading) is dropped then (408 when it had not finished its request);
// - at most max_connections are open; one more is answered 503 and closed;
// - a request line that is not "METHOD TARGET HTTP/1.x" is answered 400.
// GET and HEAD of a path in the table are answered 200 with the function's
// body; any other method on such a path 405 (with Allow: GET, HEAD); a path
// not in the table 404 (the query string is ignored). Every answer closes
// its connection.
//
// One thread serves every connection (poll), so a slow client never holds
// up another; a path's function runs on that thread and must be quick.
// Shutdown (or the destructor) stops it and closes every connection.
// Tests: tests/tuner/service/http_listener_test.cc.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace lathe::service {

struct HttpResponse {
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// Path ("/metrics") to the function that answers its GET.
using HttpRoutes = std::map<std::string, std::function<HttpResponse()>>;

struct HttpListenerOptions {
  size_t max_request_bytes = 8192;
  absl::Duration io_deadline = absl::Seconds(10);
  int max_connections = 16;
};

// HOST:PORT (HOST a name, an IPv4 address or an IPv6 address in brackets;
// PORT 0-65535, 0: any free one) split in two. InvalidArgument naming the
// address otherwise.
absl::StatusOr<std::pair<std::string, int>> ParseListenAddress(
    const std::string& address);

class HttpListener {
 public:
  // Listens on `address` (ParseListenAddress). Unavailable, naming the
  // address, when it cannot be bound.
  static absl::StatusOr<std::unique_ptr<HttpListener>> Start(
      const std::string& address, HttpRoutes routes,
      const HttpListenerOptions& options = {});
  ~HttpListener();
  HttpListener(const HttpListener&) = delete;
  HttpListener& operator=(const HttpListener&) = delete;

  int port() const { return port_; }
  // Stops serving and closes every connection. Idempotent.
  void Shutdown();

 private:
  HttpListener(int listen_fd, int port, HttpRoutes routes,
               const HttpListenerOptions& options);
  void Serve();

  const HttpRoutes routes_;
  const HttpListenerOptions options_;
  int listen_fd_ = -1;
  int wake_read_ = -1, wake_write_ = -1;  // a byte written: stop
  int port_ = 0;
  std::atomic<bool> stopped_{false};
  std::thread thread_;
};

}  // namespace lathe::service
