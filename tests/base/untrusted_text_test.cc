#include "base/untrusted_text.h"

#include <string>

#include "gtest/gtest.h"

namespace lathe {
namespace {

TEST(EscapedPrefix, KeepsPrintableTextAndUtf8) {
  EXPECT_EQ(EscapedPrefix("matmul:M=64"), "matmul:M=64");
  EXPECT_EQ(EscapedPrefix("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
}

TEST(EscapedPrefix, EscapesControlBytesAndBackslashes) {
  EXPECT_EQ(EscapedPrefix("a\x1b[2Jb\nc\x7f"), "a\\x1b[2Jb\\x0ac\\x7f");
  EXPECT_EQ(EscapedPrefix("a\\x1b"), "a\\\\x1b");
  // A C1 control (CSI, U+009B) in UTF-8.
  EXPECT_EQ(EscapedPrefix("a\xc2\x9b"
                          "2J"),
            "a\\xc2\\x9b2J");
}

TEST(EscapedPrefix, EscapesBrokenUtf8) {
  EXPECT_EQ(EscapedPrefix("a\xc3"), "a\\xc3");                  // cut short
  EXPECT_EQ(EscapedPrefix("\xc0\xaf"), "\\xc0\\xaf");           // overlong
  EXPECT_EQ(EscapedPrefix("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // surrogate
  EXPECT_EQ(EscapedPrefix("\xff\xfe"), "\\xff\\xfe");
}

TEST(EscapedPrefix, BoundsLongTextWithoutCuttingACharacter) {
  const std::string long_text(150 << 20, 'x');
  const std::string shown = EscapedPrefix(long_text);
  EXPECT_EQ(shown, std::string(kMaxEchoedBytes, 'x') + "... (157286400 bytes)");
  // A two-byte character across the limit is left out whole.
  EXPECT_EQ(EscapedPrefix("ab\xc3\xa9", 3), "ab... (4 bytes)");
  EXPECT_EQ(EscapedPrefix("ab\xc3\xa9", 4), "ab\xc3\xa9");
}

}  // namespace
}  // namespace lathe
