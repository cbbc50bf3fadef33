#include "tuner/service/http_listener.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/clock.h"

namespace lathe::service {
namespace {

// A connected client socket; every read gives up after 10 s (a listener
// that never answers fails the test instead of hanging it).
class Client {
 public:
  explicit Client(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    timeval timeout{10, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address),
                         sizeof(address)) == 0;
  }
  ~Client() { close(fd_); }
  bool connected() const { return connected_; }

  void Send(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n =
          send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<size_t>(n);
    }
  }
  // Everything until the listener closes; "TIMEOUT" appended when it did
  // not close within 10 s.
  std::string ReadAll() {
    std::string all;
    char buffer[4096];
    while (true) {
      const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
      if (n == 0) return all;
      if (n < 0) return all + (errno == EAGAIN ? "TIMEOUT" : "RESET");
      all.append(buffer, static_cast<size_t>(n));
    }
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

std::string Exchange(int port, const std::string& request) {
  Client client(port);
  EXPECT_TRUE(client.connected());
  client.Send(request);
  return client.ReadAll();
}

std::string Get(int port, const std::string& path) {
  return Exchange(port, "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n");
}

class HttpListenerTest : public ::testing::Test {
 protected:
  std::unique_ptr<HttpListener> Listen(HttpListenerOptions options = {}) {
    HttpRoutes routes;
    routes["/metrics"] = [this] {
      ++calls_;
      return HttpResponse{"text/plain; version=0.0.4", "up 1\n"};
    };
    return HttpListener::Start("127.0.0.1:0", routes, options).value();
  }
  std::atomic<int> calls_{0};
};

TEST_F(HttpListenerTest, GetOfARouteAnswersItsBody) {
  auto listener = Listen();
  ASSERT_GT(listener->port(), 0);
  const std::string answer = Get(listener->port(), "/metrics");
  EXPECT_TRUE(absl::StartsWith(answer, "HTTP/1.1 200 OK\r\n")) << answer;
  EXPECT_TRUE(absl::StrContains(
      answer, "\r\nContent-Type: text/plain; version=0.0.4\r\n"))
      << answer;
  EXPECT_TRUE(absl::StrContains(answer, "\r\nContent-Length: 5\r\n")) << answer;
  EXPECT_TRUE(absl::StrContains(answer, "\r\nConnection: close\r\n")) << answer;
  EXPECT_TRUE(absl::EndsWith(answer, "\r\n\r\nup 1\n")) << answer;
  EXPECT_EQ(calls_.load(), 1);
  // The query is not part of the path; HTTP/1.0 and bare LF line ends are
  // heard too.
  EXPECT_TRUE(absl::StartsWith(Get(listener->port(), "/metrics?x=1&y"),
                               "HTTP/1.1 200 OK"));
  EXPECT_TRUE(
      absl::StartsWith(Exchange(listener->port(), "GET /metrics HTTP/1.0\n\n"),
                       "HTTP/1.1 200 OK"));
}

TEST_F(HttpListenerTest, HeadAnswersTheHeadersWithoutTheBody) {
  auto listener = Listen();
  const std::string answer =
      Exchange(listener->port(), "HEAD /metrics HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(absl::StartsWith(answer, "HTTP/1.1 200 OK\r\n")) << answer;
  EXPECT_TRUE(absl::StrContains(answer, "Content-Length: 5\r\n")) << answer;
  EXPECT_TRUE(absl::EndsWith(answer, "\r\n\r\n")) << answer;
}

TEST_F(HttpListenerTest, UnknownPathIs404AndOtherMethodsAre405) {
  auto listener = Listen();
  EXPECT_TRUE(absl::StartsWith(Get(listener->port(), "/"),
                               "HTTP/1.1 404 Not Found\r\n"));
  EXPECT_TRUE(absl::StartsWith(Get(listener->port(), "/metrics/x"),
                               "HTTP/1.1 404 Not Found\r\n"));
  const std::string post =
      Exchange(listener->port(),
               "POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc");
  EXPECT_TRUE(absl::StartsWith(post, "HTTP/1.1 405 Method Not Allowed\r\n"))
      << post;
  EXPECT_TRUE(absl::StrContains(post, "\r\nAllow: GET, HEAD\r\n")) << post;
  EXPECT_EQ(calls_.load(), 0);
}

TEST_F(HttpListenerTest, MalformedRequestsAre400AndTheListenerLivesOn) {
  auto listener = Listen();
  for (const std::string& request :
       {std::string("GARBAGE\r\n\r\n"), std::string("\r\n\r\n"),
        std::string("GET  /metrics HTTP/1.1\r\n\r\n"),
        std::string("GET metrics HTTP/1.1\r\n\r\n"),
        std::string("GET /metrics HTTP/1.1 extra\r\n\r\n"),
        std::string("G(T /metrics HTTP/1.1\r\n\r\n"),
        std::string("GET /metrics FTP/1.1\r\n\r\n"),
        std::string("\0\x01\xff\xfe /\r\n\r\n", 10)}) {
    const std::string answer = Exchange(listener->port(), request);
    EXPECT_TRUE(absl::StartsWith(answer, "HTTP/1.1 400 Bad Request\r\n"))
        << request << " -> " << answer;
  }
  EXPECT_TRUE(absl::StartsWith(
      Exchange(listener->port(), "GET /metrics HTTP/2.0\r\n\r\n"),
      "HTTP/1.1 505 "));
  EXPECT_EQ(calls_.load(), 0);
  EXPECT_TRUE(
      absl::StartsWith(Get(listener->port(), "/metrics"), "HTTP/1.1 200 OK"));
}

TEST_F(HttpListenerTest, OversizedRequestIs431) {
  HttpListenerOptions options;
  options.max_request_bytes = 1024;
  auto listener = Listen(options);
  // Headers that never end, and then some more: the answer comes once the
  // limit is passed, whatever follows.
  const std::string answer =
      Exchange(listener->port(), "GET /metrics HTTP/1.1\r\nX-Long: " +
                                     std::string(4000, 'a') + "\r\n\r\n");
  EXPECT_TRUE(absl::StartsWith(answer, "HTTP/1.1 431 ")) << answer;
  // Just within the limit is heard.
  const std::string head = "GET /metrics HTTP/1.1\r\nX-Pad: ";
  const std::string fits =
      head + std::string(1024 - head.size() - 4, 'b') + "\r\n\r\n";
  ASSERT_EQ(fits.size(), 1024u);
  EXPECT_TRUE(
      absl::StartsWith(Exchange(listener->port(), fits), "HTTP/1.1 200 OK"));
  EXPECT_EQ(calls_.load(), 1);
}

TEST_F(HttpListenerTest,
       StalledClientIsDroppedAtTheDeadlineWhileOthersAreServed) {
  HttpListenerOptions options;
  options.io_deadline = absl::Milliseconds(500);
  auto listener = Listen(options);
  const absl::Time start = absl::Now();
  Client stalled(listener->port());
  stalled.Send("GET /metr");  // and nothing more
  // Another scrape meanwhile is answered at once.
  EXPECT_TRUE(
      absl::StartsWith(Get(listener->port(), "/metrics"), "HTTP/1.1 200 OK"));
  // The stalled one is told 408 and closed at its deadline, not before.
  const std::string answer = stalled.ReadAll();
  EXPECT_TRUE(absl::StartsWith(answer, "HTTP/1.1 408 ")) << answer;
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(450));
  EXPECT_TRUE(
      absl::StartsWith(Get(listener->port(), "/metrics"), "HTTP/1.1 200 OK"));
}

TEST_F(HttpListenerTest, ConnectionsOverTheCapAreRefusedUntilOnesClose) {
  HttpListenerOptions options;
  options.max_connections = 2;
  options.io_deadline = absl::Milliseconds(300);
  auto listener = Listen(options);
  Client a(listener->port()), b(listener->port()), c(listener->port());
  a.Send("GET");
  b.Send("GET");
  // Accepted in order: the third is over the cap.
  EXPECT_TRUE(absl::StartsWith(c.ReadAll(), "HTTP/1.1 503 "));
  EXPECT_TRUE(absl::StartsWith(a.ReadAll(), "HTTP/1.1 408 "));
  EXPECT_TRUE(absl::StartsWith(b.ReadAll(), "HTTP/1.1 408 "));
  EXPECT_TRUE(
      absl::StartsWith(Get(listener->port(), "/metrics"), "HTTP/1.1 200 OK"));
}

TEST_F(HttpListenerTest, ShutdownClosesOpenConnections) {
  auto listener = Listen();  // a 10 s deadline
  Client stalled(listener->port());
  stalled.Send("GET /");
  // Served once the listener has it (an answered scrape comes after it).
  EXPECT_TRUE(
      absl::StartsWith(Get(listener->port(), "/metrics"), "HTTP/1.1 200 OK"));
  const absl::Time start = absl::Now();
  listener->Shutdown();
  listener->Shutdown();  // idempotent
  EXPECT_EQ(stalled.ReadAll(), "");
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  Client late(listener->port());
  EXPECT_FALSE(late.connected());
}

TEST(HttpListenerAddress, ParsesHostAndPortAndRefusesTheRest) {
  EXPECT_EQ(ParseListenAddress("0.0.0.0:9100").value(),
            std::make_pair(std::string("0.0.0.0"), 9100));
  EXPECT_EQ(ParseListenAddress("[::1]:0").value(),
            std::make_pair(std::string("::1"), 0));
  EXPECT_EQ(ParseListenAddress("localhost:65535").value().second, 65535);
  for (const char* bad :
       {"9100", "0.0.0.0", ":9100", "host:", "host:-1", "host:65536",
        "host:123456", "::1:9100", "[::1]", "host:9x"}) {
    absl::StatusOr<std::pair<std::string, int>> parsed =
        ParseListenAddress(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(parsed.status())) << bad;
    EXPECT_TRUE(absl::StrContains(parsed.status().message(), bad)) << bad;
  }
}

TEST(HttpListenerAddress, AnAddressInUseIsUnavailable) {
  auto first = HttpListener::Start("127.0.0.1:0", {}).value();
  const std::string taken = "127.0.0.1:" + std::to_string(first->port());
  absl::StatusOr<std::unique_ptr<HttpListener>> second =
      HttpListener::Start(taken, {});
  EXPECT_TRUE(absl::IsUnavailable(second.status())) << second.status();
  EXPECT_TRUE(absl::StrContains(second.status().message(), taken));
}

}  // namespace
}  // namespace lathe::service
