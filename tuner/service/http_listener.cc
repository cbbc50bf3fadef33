#include "tuner/service/http_listener.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace lathe::service {
namespace {

constexpr size_t kReadChunk = 4096;
// Bytes read and dropped after an answer, waiting for the client to close
// (a close with unread bytes would reset the connection, and the client
// could lose the answer).
constexpr size_t kMaxDrainBytes = 64 * 1024;
// How long accepting pauses when the process is out of file descriptors
// (else poll would report the waiting connection again at once).
constexpr absl::Duration kAcceptPause = absl::Milliseconds(100);

struct Connection {
  int fd = -1;
  std::string in;   // received, until the end of the headers
  std::string out;  // the answer, once the request is read
  size_t sent = 0;
  enum class Phase { kReading, kAnswering, kDraining } phase = Phase::kReading;
  size_t drained = 0;
  absl::Time deadline;
};

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
  }
  return "Error";
}

// A whole answer. `head_only`: the headers of `body` without it (HEAD).
std::string Answer(int status, const std::string& content_type,
                   const std::string& body, bool head_only = false,
                   const std::string& extra_headers = "") {
  return absl::StrCat("HTTP/1.1 ", status, " ", Reason(status),
                      "\r\nContent-Type: ", content_type,
                      "\r\nContent-Length: ", body.size(), "\r\n",
                      extra_headers, "Connection: close\r\n\r\n",
                      head_only ? "" : body);
}

std::string ErrorAnswer(int status, const std::string& extra_headers = "") {
  return Answer(status, "text/plain; charset=utf-8",
                absl::StrCat(status, " ", Reason(status), "\n"),
                /*head_only=*/false, extra_headers);
}

// The end of the request's headers in `in` (just past the blank line), or
// npos while it has not come. Bare LF line ends are accepted too.
size_t HeadersEnd(const std::string& in) {
  const size_t crlf = in.find("\r\n\r\n");
  const size_t lf = in.find("\n\n");
  if (crlf == std::string::npos && lf == std::string::npos)
    return std::string::npos;
  if (lf == std::string::npos || (crlf != std::string::npos && crlf < lf))
    return crlf + 4;
  return lf + 2;
}

bool IsToken(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(c) && !absl::StrContains("!#$%&'*+-.^_`|~", c))
      return false;
  }
  return true;
}

// The answer to a complete request (its headers end at `end`).
std::string Respond(const std::string& in, size_t end,
                    const HttpRoutes& routes) {
  const absl::string_view head = absl::string_view(in).substr(0, end);
  absl::string_view line = head.substr(0, head.find('\n'));
  if (absl::EndsWith(line, "\r")) line.remove_suffix(1);
  const std::vector<absl::string_view> parts = absl::StrSplit(line, ' ');
  if (parts.size() != 3 || !IsToken(parts[0]) || parts[1].empty())
    return ErrorAnswer(400);
  if (parts[2] != "HTTP/1.1" && parts[2] != "HTTP/1.0") {
    return absl::StartsWith(parts[2], "HTTP/") ? ErrorAnswer(505)
                                               : ErrorAnswer(400);
  }
  absl::string_view target = parts[1];
  // The absolute form (through a proxy): its path.
  for (absl::string_view scheme : {"http://", "https://"}) {
    if (absl::StartsWithIgnoreCase(target, scheme)) {
      target.remove_prefix(scheme.size());
      const size_t slash = target.find('/');
      target = slash == absl::string_view::npos ? "/" : target.substr(slash);
    }
  }
  if (target.front() != '/') return ErrorAnswer(400);
  const std::string path(target.substr(0, target.find_first_of("?#")));
  auto route = routes.find(path);
  if (route == routes.end()) return ErrorAnswer(404);
  const absl::string_view method = parts[0];
  if (method != "GET" && method != "HEAD")
    return ErrorAnswer(405, "Allow: GET, HEAD\r\n");
  const HttpResponse response = route->second();
  return Answer(200, response.content_type, response.body,
                /*head_only=*/method == "HEAD");
}

// Best effort, never blocking: for a connection about to be closed.
void SendNow(int fd, const std::string& bytes) {
  (void)send(fd, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
}

void Close(Connection& c) {
  close(c.fd);
  c.fd = -1;
}

int PollTimeoutMs(const std::vector<Connection>& connections, absl::Time now,
                  absl::Time accept_paused_until) {
  absl::Time next = absl::InfiniteFuture();
  for (const Connection& c : connections) next = std::min(next, c.deadline);
  if (accept_paused_until > now) next = std::min(next, accept_paused_until);
  if (next == absl::InfiniteFuture()) return -1;
  if (next <= now) return 0;
  // Rounded up: waking before the deadline would only poll again.
  return static_cast<int>(
      std::min<int64_t>(absl::ToInt64Milliseconds(next - now) + 1, 60000));
}

}  // namespace

absl::StatusOr<std::pair<std::string, int>> ParseListenAddress(
    const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "address \"", address, "\": no port (HOST:PORT, e.g. 0.0.0.0:9100)"));
  }
  std::string host = address.substr(0, colon);
  const std::string port = address.substr(colon + 1);
  if (absl::StartsWith(host, "[") && absl::EndsWith(host, "]")) {
    host = host.substr(1, host.size() - 2);
  } else if (absl::StrContains(host, ':') || absl::StrContains(host, '[') ||
             absl::StrContains(host, ']')) {
    return absl::InvalidArgumentError(
        absl::StrCat("address \"", address,
                     "\": an IPv6 host goes in brackets, e.g. [::1]:9100"));
  }
  if (host.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "address \"", address, "\": no host (HOST:PORT, e.g. 0.0.0.0:9100)"));
  }
  int value = 0;
  if (port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(port, &value) || value > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "address \"", address, "\": port \"", port, "\" is not in 0-65535"));
  }
  return std::make_pair(host, value);
}

absl::StatusOr<std::unique_ptr<HttpListener>> HttpListener::Start(
    const std::string& address, HttpRoutes routes,
    const HttpListenerOptions& options) {
  absl::StatusOr<std::pair<std::string, int>> parsed =
      ParseListenAddress(address);
  if (!parsed.ok()) return parsed.status();
  if (options.max_request_bytes < 16 || options.max_connections < 1 ||
      options.io_deadline <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "http listener: limits must be positive (request bytes at least 16)");
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(parsed->second);
  if (int err =
          getaddrinfo(parsed->first.c_str(), port.c_str(), &hints, &found);
      err != 0) {
    return absl::UnavailableError(absl::StrCat(
        "address \"", address, "\": cannot resolve: ", gai_strerror(err)));
  }
  int fd = -1;
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                a->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    const int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 64) == 0) break;
    why = std::strerror(errno);
    close(fd);
    fd = -1;
  }
  freeaddrinfo(found);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("address \"", address, "\": cannot listen: ", why));
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  int bound_port = 0;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) == 0) {
    bound_port = bound.ss_family == AF_INET6
                     ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                     : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  }
  std::unique_ptr<HttpListener> listener(
      new HttpListener(fd, bound_port, std::move(routes), options));
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    return absl::UnavailableError(
        absl::StrCat("http listener: pipe: ", std::strerror(errno)));
  }
  listener->wake_read_ = pipe_fds[0];
  listener->wake_write_ = pipe_fds[1];
  HttpListener* self = listener.get();
  listener->thread_ = std::thread([self] { self->Serve(); });
  return listener;
}

HttpListener::HttpListener(int listen_fd, int port, HttpRoutes routes,
                           const HttpListenerOptions& options)
    : routes_(std::move(routes)),
      options_(options),
      listen_fd_(listen_fd),
      port_(port) {}

HttpListener::~HttpListener() {
  Shutdown();
  for (int fd : {listen_fd_, wake_read_, wake_write_}) {
    if (fd >= 0) close(fd);
  }
}

void HttpListener::Shutdown() {
  if (stopped_.exchange(true)) return;
  if (wake_write_ >= 0) {
    const char byte = 0;
    (void)write(wake_write_, &byte, 1);
  }
  if (thread_.joinable()) thread_.join();
  // No longer listening: a client now is refused, not left waiting.
  if (listen_fd_ >= 0) close(listen_fd_);
  listen_fd_ = -1;
}

void HttpListener::Serve() {
  std::vector<Connection> connections;
  absl::Time accept_paused_until = absl::InfinitePast();
  std::vector<pollfd> fds;
  while (true) {
    absl::Time now = absl::Now();
    fds.clear();
    fds.push_back({wake_read_, POLLIN, 0});
    const bool accepting = accept_paused_until <= now;
    fds.push_back({accepting ? listen_fd_ : -1, POLLIN, 0});
    for (const Connection& c : connections) {
      fds.push_back({c.fd,
                     static_cast<short>(c.phase == Connection::Phase::kAnswering
                                            ? POLLOUT
                                            : POLLIN),
                     0});
    }
    const int ready =
        poll(fds.data(), fds.size(),
             PollTimeoutMs(connections, now, accept_paused_until));
    if (ready < 0 && errno != EINTR) break;  // cannot happen with valid fds
    if (fds[0].revents != 0) break;          // Shutdown
    now = absl::Now();

    for (size_t i = 0; i < connections.size(); ++i) {
      Connection& c = connections[i];
      const short revents = ready > 0 ? fds[i + 2].revents : 0;
      using Phase = Connection::Phase;
      if (c.phase == Phase::kReading &&
          (revents & (POLLIN | POLLHUP | POLLERR))) {
        // Up to one byte past the limit: enough to know it is over.
        char buffer[kReadChunk];
        const size_t room = options_.max_request_bytes + 1 - c.in.size();
        const ssize_t n = recv(c.fd, buffer, std::min(room, sizeof(buffer)), 0);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
          Close(c);  // gone before its request was whole
          continue;
        }
        if (n > 0) c.in.append(buffer, static_cast<size_t>(n));
        const size_t end = HeadersEnd(c.in);
        if (end != std::string::npos && end <= options_.max_request_bytes) {
          c.out = Respond(c.in, end, routes_);
        } else if (c.in.size() > options_.max_request_bytes) {
          c.out = ErrorAnswer(431);
        }
        if (!c.out.empty()) {
          c.phase = Phase::kAnswering;
          c.in.clear();
          c.deadline = now + options_.io_deadline;
        }
      } else if (c.phase == Phase::kAnswering &&
                 (revents & (POLLOUT | POLLHUP | POLLERR))) {
        const ssize_t n = send(c.fd, c.out.data() + c.sent,
                               c.out.size() - c.sent, MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN && errno != EINTR) {
          Close(c);
          continue;
        }
        if (n > 0) c.sent += static_cast<size_t>(n);
        if (c.sent == c.out.size()) {
          // Answered: the client closes once it has read it.
          shutdown(c.fd, SHUT_WR);
          c.phase = Phase::kDraining;
          c.out.clear();
        }
      } else if (c.phase == Phase::kDraining &&
                 (revents & (POLLIN | POLLHUP | POLLERR))) {
        char buffer[kReadChunk];
        const ssize_t n = recv(c.fd, buffer, sizeof(buffer), 0);
        if (n > 0) c.drained += static_cast<size_t>(n);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) ||
            c.drained > kMaxDrainBytes) {
          Close(c);
          continue;
        }
      }
      if (now >= c.deadline) {
        if (c.phase == Phase::kReading) SendNow(c.fd, ErrorAnswer(408));
        Close(c);
      }
    }
    connections.erase(
        std::remove_if(connections.begin(), connections.end(),
                       [](const Connection& c) { return c.fd < 0; }),
        connections.end());

    if (accepting && ready > 0 && (fds[1].revents & POLLIN)) {
      while (true) {
        const int fd =
            accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
          if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
              errno == ENOMEM) {
            accept_paused_until = now + kAcceptPause;
          }
          break;  // EAGAIN: none left; others (ECONNABORTED): next time
        }
        if (static_cast<int>(connections.size()) >= options_.max_connections) {
          SendNow(fd, ErrorAnswer(503));
          shutdown(fd, SHUT_WR);
          close(fd);
          continue;
        }
        Connection c;
        c.fd = fd;
        c.deadline = now + options_.io_deadline;
        connections.push_back(std::move(c));
      }
    }
  }
  for (Connection& c : connections) Close(c);
}

}  // namespace lathe::service
