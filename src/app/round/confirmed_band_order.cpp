#include "app/round/confirmed_band_order.hpp"

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

 private:
  core::BandConfirmer confirmer_;
};

}  // namespace

std::unique_ptr<KeyOrder> make_confirmed_band_order(double threshold, std::uint32_t values,
                                                    std::uint32_t bits) {
  return std::make_unique<ConfirmedBandOrder>(threshold, values, bits);
}

}  // namespace bloomshard::app
