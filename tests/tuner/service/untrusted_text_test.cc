#include "tuner/service/untrusted_text.h"

#include <gtest/gtest.h>

#include <string>

namespace lathe::service {
namespace {

TEST(UntrustedTextTest, PrintableTextIsKept) {
  EXPECT_EQ(EscapeUntrusted("worker did not start: exec failed", 100),
            "worker did not start: exec failed");
  EXPECT_EQ(EscapeUntrusted("Größe 2×2 — ok", 100), "Größe 2×2 — ok");
}

TEST(UntrustedTextTest, ControlBytesAndEscapeSequencesAreEscaped) {
  // A forged log line and a terminal escape (CSI, OSC, C1 CSI).
  EXPECT_EQ(EscapeUntrusted("oops\nlathe serve: job x done", 100),
            "oops\\x0alathe serve: job x done");
  EXPECT_EQ(EscapeUntrusted("\x1b[2J\x1b]0;t\x07", 100),
            "\\x1b[2J\\x1b]0;t\\x07");
  EXPECT_EQ(EscapeUntrusted("\xc2\x9b"
                            "2J",
                            100),
            "\\xc2\\x9b2J");
  EXPECT_EQ(EscapeUntrusted(std::string("a\0b\x7f", 4), 100), "a\\x00b\\x7f");
  EXPECT_EQ(EscapeUntrusted("back\\slash", 100), "back\\\\slash");
}

TEST(UntrustedTextTest, InvalidUtf8IsEscapedByteByByte) {
  EXPECT_EQ(EscapeUntrusted("\xff\xfe", 100), "\\xff\\xfe");
  EXPECT_EQ(EscapeUntrusted("half \xc3", 100), "half \\xc3");
  EXPECT_EQ(EscapeUntrusted("\xc0\xaf", 100), "\\xc0\\xaf");  // overlong
  EXPECT_EQ(EscapeUntrusted("\xed\xa0\x80", 100),
            "\\xed\\xa0\\x80");  // surrogate
}

TEST(UntrustedTextTest, LongTextIsCutBetweenCharactersAndSaysHowMuch) {
  EXPECT_EQ(EscapeUntrusted(std::string(5000, 'x'), 10),
            "xxxxxxxxxx [+4990 bytes]");
  // Never half of a character or of an escape.
  EXPECT_EQ(EscapeUntrusted("abé", 3), "ab [+2 bytes]");
  EXPECT_EQ(EscapeUntrusted("ab\n", 4), "ab [+1 bytes]");
  const std::string huge(16 << 20, '\x1b');
  EXPECT_LE(EscapeUntrusted(huge, kMaxLoggedTextBytes).size(),
            kMaxLoggedTextBytes + 32);
}

}  // namespace
}  // namespace lathe::service
