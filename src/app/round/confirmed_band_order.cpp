#include "app/round/confirmed_band_order.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/minhash/band_confirmation.hpp"

namespace bloomshard::app {
namespace {

class ConfirmedBandOrder final : public KeyOrder {
 public:
  ConfirmedBandOrder(double threshold, std::uint32_t values, std::uint32_t bits, bool positions)
      : confirmer_(threshold, values, bits, positions) {}

  std::span<const core::KeyRef> keys_to_route(const RoundBatch& batch, InputFeed&) override {
    return batch.keys();
  }
  std::span<core::Verdict> route_verdicts(std::span<core::Verdict> batch_verdicts) override {
    return batch_verdicts;
  }
  void decide(core::TwoTierSet& set, std::span<const core::KeyRef> keys,
              std::span<core::Verdict> verdicts) override {
    if (!confirmer_.keeps_positions()) {
      confirmer_.decide(set, keys, verdicts);
      return;
    }
    answers_.resize(keys.size() * core::kBandMatchBytes);
    confirmer_.decide(set, keys, verdicts, answers_);
  }
  std::size_t answer_bytes() const noexcept override {
    return confirmer_.keeps_positions() ? core::kBandMatchBytes : 0;
  }
  void take_answers(std::span<std::uint8_t> out) override {
    if (out.size() != answers_.size()) {
      throw std::logic_error("confirm: " + std::to_string(out.size()) + " answer bytes asked, " +
                             std::to_string(answers_.size()) + " decided");
    }
    std::copy(answers_.begin(), answers_.end(), out.begin());
  }
  void settle(std::span<core::Verdict>, InputFeed&) override {}
  std::uint64_t remember_committed(comm::KeyRouter&, const RunManifest&, InputFeed&,
                                   const std::filesystem::path&, std::uint64_t) override {
    return 0;
  }
  bool in_file_order() const noexcept override { return false; }

  core::BandConfirmer& confirmer() noexcept { return confirmer_; }

 private:
  core::BandConfirmer confirmer_;
  std::vector<std::uint8_t> answers_;  // the last decide()'s, with positions
};

}  // namespace

std::unique_ptr<KeyOrder> make_confirmed_band_order(double threshold, std::uint32_t values,
                                                    std::uint32_t bits, bool positions) {
  return std::make_unique<ConfirmedBandOrder>(threshold, values, bits, positions);
}

core::BandConfirmer* band_confirmer_of(KeyOrder& order) noexcept {
  auto* confirming = dynamic_cast<ConfirmedBandOrder*>(&order);
  return confirming != nullptr ? &confirming->confirmer() : nullptr;
}

void adopt_loaded_forms(KeyOrder& order, std::unique_ptr<core::BandConfirmer> loaded) {
  core::BandConfirmer* forms = band_confirmer_of(order);
  if (forms == nullptr || loaded == nullptr) {
    throw std::logic_error("confirmation forms loaded for a run that does not confirm");
  }
  if (loaded->threshold() != forms->threshold() || loaded->form_bytes() != forms->form_bytes() ||
      loaded->keeps_positions() != forms->keeps_positions()) {
    throw std::logic_error(
        "the state's confirmation forms are not the job's (threshold, size or origins)");
  }
  *forms = std::move(*loaded);
}

}  // namespace bloomshard::app
