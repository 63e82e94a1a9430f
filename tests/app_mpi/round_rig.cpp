#include "round_rig.hpp"

#include <fstream>
#include <limits>
#include <set>

#include "app/guard/output_guard.hpp"
#include "app/run/checkpointer.hpp"
#include "app/run/job_start.hpp"
#include "app/split/range_join.hpp"
#include "app/split/rank_tasks.hpp"
#include "app/split/split_inputs.hpp"
#include "bloomshard/core/slice_map.hpp"
#include "io/records/input_file.hpp"

namespace bloomshard::app::test {

namespace fs = std::filesystem;

void write_lines(const fs::path& file, const std::vector<std::string>& lines) {
  fs::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::trunc);
  for (const std::string& l : lines) out << l << '\n';
}

std::vector<std::string> read_lines(const fs::path& file) {
  std::vector<std::string> lines;
  std::ifstream in(file);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

std::vector<std::vector<std::string>> first_copies(
    const std::vector<std::vector<std::string>>& files) {
  std::set<std::string> seen;
  std::vector<std::vector<std::string>> kept(files.size());
  for (std::size_t f = 0; f < files.size(); ++f) {
    for (const std::string& l : files[f]) {
      if (seen.insert(l).second) kept[f].push_back(l);
    }
  }
  return kept;
}

std::unique_ptr<core::TwoTierSet> make_set(const comm::Communicator& world, std::uint32_t slices,
                                           std::uint64_t capacity) {
  core::ScalableBloomParams params;
  params.initial_capacity = capacity;
  params.fpr_target = 0.01;
  params.num_slices = slices;
  auto set = std::make_unique<core::TwoTierSet>(
      params, core::slices_of_rank(world.urank(), world.usize(), slices));
  set->bloom().set_auto_grow(false);  // layers open collectively (LayerGrowth)
  return set;
}

RoundRig::RoundRig(const comm::Communicator& world, const fs::path& in, const fs::path& out,
                   std::uint64_t batch_bytes, bool split_inputs, const fs::path& state)
    : world_(world) {
  config_.state_dir = state.string();
  config_.inputs = {in.string()};
  config_.output_dir = out.string();
  config_.batch_bytes = batch_bytes;
  config_.split_inputs = split_inputs;
  config_.split_min_bytes = 256;
  if (world.rank() == 0) {
    fs::create_directories(out / kRejectsDirName);
    if (!state.empty()) fs::create_directories(state);
  }
  world.barrier();
  const std::vector<fs::path> args{in};
  for (const io::InputFile& f : io::discover_inputs(args)) {
    manifest_.inputs.push_back({f, {}, false, 0, {}, {}, {}});
  }
  split_at_first_start(world, config_, manifest_);
  std::uint64_t total_bytes = 0;
  feed_.emplace(config_, tasks_of_rank(manifest_, world.rank(), world.size(), total_bytes),
                out / kRejectsDirName / reject_file_name(world.rank(), 0), !state.empty());
  // A small first layer: the rounds open more, through LayerGrowth.
  set_ = make_set(world, 48, 64);
  if (!state.empty()) checkpointer_.emplace(world, config_, manifest_, 0, 1);
  router_.emplace(world, 48);
  order_ = make_key_order(config_, manifest_, world.usize(), *feed_);
  growth_.emplace(world.usize(), world.allreduce_sum(set_->bloom().newest_layer_inserted()));
  round_.emplace(
      RoundParts{world_, *router_, *set_, *feed_, *order_, *growth_, config_.max_exchange_bytes});
}

RoundAgreement RoundRig::run_one() {
  round_->read();
  round_->route();
  round_->write([] {});
  return round_->agree(false, std::numeric_limits<std::uint64_t>::max());
}

void RoundRig::checkpoint() {
  checkpointer_->write(*feed_, *set_, router_->stats(), round_->number(), false, false);
}

RoundAgreement RoundRig::run_to_end(std::vector<RoundAgreement>* seen) {
  for (;;) {
    const RoundAgreement g = run_one();
    if (seen != nullptr) seen->push_back(g);
    if (g.input_errors != 0 || g.finished()) return g;
  }
}

void RoundRig::finish() {
  if (has_split_inputs(manifest_)) {
    RunManifest cut = merge_cut(world_, manifest_, feed_->commit(), feed_->retracted());
    (void)join_split_inputs(world_, cut, *feed_, config_.output_dir, false);
    feed_->finish();
    if (world_.rank() == 0) remove_joined_parts(cut, config_.output_dir);
  } else {
    feed_->finish();
  }
  world_.barrier();
}

}  // namespace bloomshard::app::test
