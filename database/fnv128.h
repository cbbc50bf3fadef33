// FNV-1a with 128 bits of state: a hash of bytes that is the same in every
// process and build (unlike std::hash or absl::Hash), for fingerprints of
// records (record_codec.h) and the content stamp of a database
// (Database::ContentStamp). Private to database/.
// Tests: tests/database/record_codec_test.cc (fingerprints),
// tests/database/database_test.cc (ContentStamp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace lathe::db {

class Fnv128 {
 public:
  void Bytes(const void* data, size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < size; ++i) {
      state_ ^= bytes[i];
      state_ *= kPrime;
    }
  }
  void Int(int64_t value) {
    Bytes(&value, sizeof value);
  }  // little-endian hosts only
  void Double(double value) { Bytes(&value, sizeof value); }
  // Length-prefixed, so ("ab", "c") and ("a", "bc") differ.
  void String(const std::string& value) {
    Int(static_cast<int64_t>(value.size()));
    Bytes(value.data(), value.size());
  }
  std::string Hex() const {
    static const char kDigits[] = "0123456789abcdef";
    std::string out(32, '0');
    unsigned __int128 v = state_;
    for (int i = 31; i >= 0; --i) {
      out[i] = kDigits[static_cast<int>(v & 0xf)];
      v >>= 4;
    }
    return out;
  }

 private:
  static constexpr unsigned __int128 kPrime =
      (static_cast<unsigned __int128>(1) << 88) + 0x13b;
  unsigned __int128 state_ =
      (static_cast<unsigned __int128>(0x6c62272e07bb0142ULL) << 64) |
      0x62b821756295c58dULL;
};

}  // namespace lathe::db
