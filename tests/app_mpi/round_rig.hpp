// Helpers of the round's MPI tests: line files, and a rig that wires one dedup segment's pieces
// (feed, filter, router, key order, layer growth) around a Round on real input files, without the
// job's lock, checkpoints or messages.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/feed/input_feed.hpp"
#include "app/options/dedup_options.hpp"
#include "app/round/key_order.hpp"
#include "app/round/layer_growth.hpp"
#include "app/round/round.hpp"
#include "app/run/checkpointer.hpp"
#include "app/run/run_manifest.hpp"
#include "bloomshard/core/two_tier.hpp"
#include "comm/communicator.hpp"
#include "comm/router.hpp"
#include "test_checkpoint_util.hpp"

namespace bloomshard::app::test {

/// The checkpoint store tests' shared temp dir (rank 0 makes it, every rank
/// gets its name, the collective destructor removes it).
using SharedDir = io::test::SharedTempDir;

/// Writes `lines`, each ended by '\n'.
void write_lines(const std::filesystem::path& file, const std::vector<std::string>& lines);
/// The lines of `file` without their '\n' (empty when it does not exist).
[[nodiscard]] std::vector<std::string> read_lines(const std::filesystem::path& file);

/// What one reader would keep: the first copy of each line, files in order.
[[nodiscard]] std::vector<std::vector<std::string>> first_copies(
    const std::vector<std::vector<std::string>>& files);

/// A filter of `slices` slices sized for `capacity` keys, this rank's share.
[[nodiscard]] std::unique_ptr<core::TwoTierSet> make_set(const comm::Communicator& world,
                                                         std::uint32_t slices,
                                                         std::uint64_t capacity);

/// One segment over the inputs under `in`, writing to `out` (created by
/// rank 0), in rounds of `batch_bytes` per rank.
class RoundRig {
 public:
  /// With a `state` dir, checkpoint() writes generations there.
  RoundRig(const comm::Communicator& world, const std::filesystem::path& in,
           const std::filesystem::path& out, std::uint64_t batch_bytes, bool split_inputs,
           const std::filesystem::path& state = {});

  /// Collective: one round, its agreement.
  RoundAgreement run_one();

  /// Collective: the next checkpoint generation, cut after the last round.
  void checkpoint();

  /// Collective: rounds until every rank's input is read (or one fails);
  /// the last agreement. Every round's agreement goes to `seen` if given.
  RoundAgreement run_to_end(std::vector<RoundAgreement>* seen = nullptr);

  /// Collective: joins the ranges of split inputs (range_join.hpp) and
  /// closes the outputs.
  void finish();

  [[nodiscard]] KeyOrder& order() { return *order_; }
  [[nodiscard]] const RunManifest& manifest() const { return manifest_; }
  [[nodiscard]] Round& round() { return *round_; }
  /// Kept copies this rank retracted as owner (file order).
  [[nodiscard]] std::size_t retracted() const { return feed_->retracted().size(); }

 private:
  comm::Communicator world_;
  DedupConfig config_;
  RunManifest manifest_;
  std::unique_ptr<core::TwoTierSet> set_;
  std::optional<InputFeed> feed_;
  std::optional<Checkpointer> checkpointer_;
  std::optional<comm::KeyRouter> router_;
  std::unique_ptr<KeyOrder> order_;
  std::optional<LayerGrowth> growth_;
  std::optional<Round> round_;
};

}  // namespace bloomshard::app::test
