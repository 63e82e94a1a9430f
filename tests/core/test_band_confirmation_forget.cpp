// BandConfirmer::forget_forms, what a windowed confirming run does when a
// key's last slot expires: the forgotten keys lose their forms, the others
// keep theirs byte for byte, and a key remembered later (a new key, or a
// forgotten one inserted again) takes its own form without overwriting any.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "core/minhash/band_confirmation.hpp"

// Its own namespace: its helpers share names with test_band_confirmation.cpp (unity
// batches, cmake/check_unity_names.py).
namespace bloomshard::core::band_confirmation_forget_tests {
namespace {

constexpr std::uint32_t kValues = 16;
constexpr std::uint32_t kBits = 4;  // 8 bytes a form

BandKey key_of(std::uint8_t tag) {
  BandKey k{};
  k.fill(tag);
  return k;
}

std::vector<std::uint8_t> form_of(std::uint8_t tag) { return std::vector<std::uint8_t>(8, tag); }

bool holds(const BandConfirmer& c, std::uint8_t key, std::uint8_t form) {
  const std::span<const std::uint8_t> got = c.find_form(key_of(key));
  const std::vector<std::uint8_t> want = form_of(form);
  return std::equal(got.begin(), got.end(), want.begin(), want.end());
}

TEST(BandConfirmationForget, ForgottenKeysLoseTheirFormsOthersKeepThem) {
  BandConfirmer c(0.5, kValues, kBits);
  for (std::uint8_t t = 1; t <= 5; ++t) ASSERT_TRUE(c.adopt_form(key_of(t), form_of(t)));
  const std::vector<BandKey> gone{key_of(1), key_of(3), key_of(9)};  // 9: never held
  EXPECT_EQ(c.forget_forms(gone), 2U);
  EXPECT_EQ(c.forms(), 3U);
  EXPECT_TRUE(c.find_form(key_of(1)).empty());
  EXPECT_TRUE(c.find_form(key_of(3)).empty());
  for (const std::uint8_t t : std::vector<std::uint8_t>{2, 4, 5})
    EXPECT_TRUE(holds(c, t, t)) << int{t};
  // Remembered again (its next first record) and new keys: each its own
  // form, none overwriting another's.
  EXPECT_TRUE(c.adopt_form(key_of(3), form_of(33)));
  EXPECT_TRUE(c.adopt_form(key_of(6), form_of(6)));
  EXPECT_EQ(c.forms(), 5U);
  EXPECT_TRUE(holds(c, 3, 33));
  for (const std::uint8_t t : std::vector<std::uint8_t>{2, 4, 5, 6})
    EXPECT_TRUE(holds(c, t, t)) << int{t};
  EXPECT_EQ(c.forget_forms(std::vector<BandKey>{key_of(9)}), 0U);
  EXPECT_EQ(c.forms(), 5U);
}

}  // namespace
}  // namespace bloomshard::core::band_confirmation_forget_tests
