#include "rpc/exposure_warnings.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "tests/support/temp_folder.h"

namespace lathe::rpc {
namespace {

TEST(ExposureWarningsTest, LoopbackAddressesAreToldApart) {
  for (const char* address : {"127.0.0.1:7770", "127.1.2.3:0", "localhost:1",
                              "[::1]:7770", "unix:/tmp/s"}) {
    EXPECT_TRUE(IsLoopbackAddress(address)) << address;
  }
  for (const char* address : {"0.0.0.0:7770", "[::]:7770", "10.0.0.1:7770",
                              "127.0.0.1.evil.com:1", "host:7770", ":7770"}) {
    EXPECT_FALSE(IsLoopbackAddress(address)) << address;
  }
}

TEST(ExposureWarningsTest, SecretsReadableByOthersAndPlainNetworkListenWarn) {
  test_support::TempFolder dir;
  const std::string token = dir.path() + "/token";
  const std::string key = dir.path() + "/key.pem";
  std::ofstream(token) << "secret\n";
  std::ofstream(key) << "key\n";
  chmod(token.c_str(), 0600);
  chmod(key.c_str(), 0600);
  EXPECT_TRUE(ExposureWarnings("127.0.0.1:7770", token, "").empty());
  EXPECT_TRUE(ExposureWarnings("0.0.0.0:7770", token, key).empty());

  chmod(token.c_str(), 0644);
  chmod(key.c_str(), 0640);
  std::vector<std::string> warnings =
      ExposureWarnings("127.0.0.1:7770", token, key);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("--token-file " + token +
                             " is readable by every user (mode 0644)"),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[1].find("is readable by its group (mode 0640)"),
            std::string::npos)
      << warnings[1];

  chmod(token.c_str(), 0600);
  warnings = ExposureWarnings("0.0.0.0:7770", token, "");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("--listen 0.0.0.0:7770"), std::string::npos);
  EXPECT_NE(warnings[0].find("not encrypted"), std::string::npos);
}

}  // namespace
}  // namespace lathe::rpc
