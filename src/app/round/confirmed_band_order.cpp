#include "app/round/confirmed_band_order.hpp"

#include <stdexcept>
#include <utility>

#include "core/minhash/band_confirmation.hpp"

namespace bloomshard::app {
namespace {

class ConfirmedBandOrder final : public KeyOrder {
 public:
  ConfirmedBandOrder(double threshold, std::uint32_t values, std::uint32_t bits)
      : confirmer_(threshold, values, bits) {}

  std::span<const core::KeyRef> keys_to_route(const RoundBatch& batch, InputFeed&) override {
    return batch.keys();
  }
  std::span<core::Verdict> route_verdicts(std::span<core::Verdict> batch_verdicts) override {
    return batch_verdicts;
  }
  void decide(core::TwoTierSet& set, std::span<const core::KeyRef> keys,
              std::span<core::Verdict> verdicts) override {
    confirmer_.decide(set, keys, verdicts);
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
};

}  // namespace

std::unique_ptr<KeyOrder> make_confirmed_band_order(double threshold, std::uint32_t values,
                                                    std::uint32_t bits) {
  return std::make_unique<ConfirmedBandOrder>(threshold, values, bits);
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
  if (loaded->threshold() != forms->threshold() || loaded->form_bytes() != forms->form_bytes()) {
    throw std::logic_error("the state's confirmation forms are not the job's (threshold or size)");
  }
  *forms = std::move(*loaded);
}

}  // namespace bloomshard::app
