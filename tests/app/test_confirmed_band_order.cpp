// The confirming key order's forms (app/round/confirmed_band_order.hpp): the
// checkpoint writer finds them through band_confirmer_of, and the forms a
// state's slices held (io::load_checkpoint) replace them before the first
// round only when threshold and form size are the job's.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "app/round/confirmed_band_order.hpp"
#include "core/minhash/band_confirmation.hpp"

namespace bloomshard::app {
namespace {

constexpr std::uint32_t kValues = 14 * 8;

std::unique_ptr<core::BandConfirmer> loaded_forms(double threshold, std::uint32_t values,
                                                  std::size_t keys) {
  auto forms = std::make_unique<core::BandConfirmer>(threshold, values, 4);
  for (std::size_t i = 0; i < keys; ++i) {
    core::BandKey k{};
    k[0] = static_cast<std::uint8_t>(i);
    k[1] = static_cast<std::uint8_t>(i >> 8);
    const std::vector<std::uint8_t> form(forms->form_bytes(), static_cast<std::uint8_t>(i));
    EXPECT_TRUE(forms->adopt_form(k, form));
  }
  return forms;
}

TEST(ConfirmedBandOrder, OnlyTheConfirmingOrderHasForms) {
  EXPECT_EQ(band_confirmer_of(*make_batch_order()), nullptr);
  const std::unique_ptr<KeyOrder> order = make_confirmed_band_order(0.8, kValues, 4);
  core::BandConfirmer* forms = band_confirmer_of(*order);
  ASSERT_NE(forms, nullptr);
  EXPECT_EQ(forms->threshold(), 0.8);
  EXPECT_EQ(forms->form_bytes(), 56U);
  EXPECT_EQ(forms->forms(), 0U);
}

TEST(ConfirmedBandOrder, LoadedFormsReplaceTheOrdersWhenTheyMatch) {
  const std::unique_ptr<KeyOrder> order = make_confirmed_band_order(0.8, kValues, 4);
  adopt_loaded_forms(*order, loaded_forms(0.8, kValues, 300));
  EXPECT_EQ(band_confirmer_of(*order)->forms(), 300U);
  core::BandKey k{};
  k[0] = 7;
  const std::span<const std::uint8_t> form = band_confirmer_of(*order)->find_form(k);
  ASSERT_EQ(form.size(), 56U);
  EXPECT_EQ(form[0], 7);
}

TEST(ConfirmedBandOrder, MismatchedLoadedFormsAreRefused) {
  const std::unique_ptr<KeyOrder> order = make_confirmed_band_order(0.8, kValues, 4);
  EXPECT_THROW(adopt_loaded_forms(*order, loaded_forms(0.7, kValues, 3)), std::logic_error);
  EXPECT_THROW(adopt_loaded_forms(*order, loaded_forms(0.8, 20 * 13, 3)), std::logic_error);
  EXPECT_THROW(adopt_loaded_forms(*make_batch_order(), loaded_forms(0.8, kValues, 3)),
               std::logic_error);
  EXPECT_EQ(band_confirmer_of(*order)->forms(), 0U);  // untouched
}

}  // namespace
}  // namespace bloomshard::app
