#include "app/split/lockstep_layout.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "app/round/key_order.hpp"
#include "io/output/output_writer.hpp"

namespace bloomshard::app {

bool lockstep_layout_applies(const DedupConfig& config, bool all_uncompressed) {
  // Split ranges asked for by name are the tasks layout's.
  const auto given = [&config](std::string_view name) {
    return std::ranges::find(config.explicit_options, name) != config.explicit_options.end();
  };
  return config.annotate.mode == RunMode::kFilter && config.key.unit == core::KeyUnit::kRecord &&
         keeps_input_order(config) && config.state_dir.empty() && !given("split-inputs") &&
         !given("split-min-bytes") && all_uncompressed;
}

bool lockstep_layout_applies(const DedupConfig& config, std::span<const InputProgress> inputs) {
  return lockstep_layout_applies(
      config, std::all_of(inputs.begin(), inputs.end(), [](const InputProgress& p) {
        return p.file.compression == io::Compression::kNone;
      }));
}

std::vector<LockstepBlock> number_blocks(std::span<const std::vector<io::ByteRange>> per_input) {
  std::vector<LockstepBlock> blocks;
  for (std::size_t i = 0; i < per_input.size(); ++i) {
    for (const io::ByteRange& r : per_input[i]) blocks.push_back({i, r});
  }
  return blocks;
}

std::vector<LockstepBlock> agree_on_blocks(const comm::Communicator& world, const RunManifest& m,
                                           std::uint64_t block_bytes) {
  // Rank 0 reads near each cut (a few KiB a block) and sends "input begin
  // end" lines, or "!" and why not: the ranks never cut a file that changes
  // meanwhile two ways.
  std::string text;
  if (world.rank() == 0) {
    try {
      std::vector<std::vector<io::ByteRange>> per_input;
      for (const InputProgress& p : m.inputs) {
        per_input.push_back(
            io::line_aligned_blocks(p.file.absolute_path, p.file.size, block_bytes));
      }
      std::ostringstream out;
      for (const LockstepBlock& b : number_blocks(per_input)) {
        out << b.input << ' ' << b.bytes.begin << ' ' << b.bytes.end << '\n';
      }
      text = out.str();
    } catch (const std::exception& e) {
      text = std::string("!") + e.what();
    }
  }
  text = world.broadcast(text);
  if (text.starts_with('!')) {
    throw std::runtime_error("cannot cut the inputs into blocks: " + text.substr(1));
  }
  std::vector<LockstepBlock> blocks;
  std::istringstream in(text);
  LockstepBlock b;
  while (in >> b.input >> b.bytes.begin >> b.bytes.end) blocks.push_back(b);
  return blocks;
}

std::vector<FileTask> lockstep_tasks_of_rank(std::span<const LockstepBlock> blocks,
                                             const RunManifest& m, int rank, int ranks,
                                             std::uint64_t& total_bytes) {
  total_bytes = 0;
  for (const InputProgress& p : m.inputs) total_bytes += p.file.size;
  std::vector<FileTask> tasks;
  for (auto b = static_cast<std::size_t>(rank); b < blocks.size();
       b += static_cast<std::size_t>(ranks)) {
    const LockstepBlock& block = blocks[b];
    FileTask t;
    t.file = m.inputs.at(block.input).file;
    t.index = block.input;
    t.cursor = {0, block.bytes.begin};
    t.bytes = block.bytes;
    t.block = b;
    tasks.push_back(std::move(t));
  }
  return tasks;
}

void create_lockstep_outputs(const comm::Communicator& world, const RunManifest& m,
                             const std::filesystem::path& output_dir) {
  if (world.rank() == 0) {
    for (const InputProgress& p : m.inputs) {
      // create() truncates a file left by an earlier run (--overwrite).
      io::OutputWriter::create(io::output_path_for(output_dir, p.file.relative_path),
                               io::Compression::kNone, {})
          .close();
    }
  }
  world.barrier();
}

LockstepOutputs::LockstepOutputs(std::vector<LockstepBlock> blocks, std::size_t inputs)
    : blocks_(std::move(blocks)), lengths_(inputs, 0), lines_(inputs, 0) {}

std::vector<BlockPlace> LockstepOutputs::place_all(std::span<const StagedBlock> staged) {
  std::vector<BlockPlace> places(staged.size());
  bool none_seen = false;
  for (std::size_t r = 0; r < places.size(); ++r) {
    if (!staged[r].block) {
      none_seen = true;
      continue;
    }
    const std::size_t block = *staged[r].block;
    // Round i holds blocks iP .. iP + P - 1 on ranks 0 .. P - 1; a rank
    // without one is past the last block, and so is every rank after it.
    if (none_seen || block != next_ || block >= blocks_.size()) {
      throw std::logic_error("lockstep layout: rank " + std::to_string(r) + " wrote block " +
                             std::to_string(block) + " where block " + std::to_string(next_) +
                             " of " + std::to_string(blocks_.size()) + " was due");
    }
    const std::size_t input = blocks_[block].input;
    places[r] = {lengths_[input], lines_[input]};
    lengths_[input] += staged[r].bytes;
    // Lines a broken block skipped are not known: nor is any later line
    // number of its input.
    lines_[input] = lines_[input] == kUnknownLines || staged[r].lines == kUnknownLines
                        ? kUnknownLines
                        : lines_[input] + staged[r].lines;
    ++next_;
  }
  return places;
}

BlockPlace LockstepOutputs::place(const comm::Communicator& world, const StagedBlock& mine) {
  constexpr std::uint64_t kNone = ~std::uint64_t{0};
  const std::uint64_t numbers[3] = {mine.block ? static_cast<std::uint64_t>(*mine.block) : kNone,
                                    mine.bytes, mine.lines};
  const std::vector<std::uint64_t> all = world.allgather(numbers);
  std::vector<StagedBlock> staged(all.size() / 3);
  for (std::size_t r = 0; r < staged.size(); ++r) {
    if (all[3 * r] != kNone) staged[r].block = static_cast<std::size_t>(all[3 * r]);
    staged[r].bytes = all[3 * r + 1];
    staged[r].lines = all[3 * r + 2];
  }
  return place_all(staged).at(static_cast<std::size_t>(world.rank()));
}

}  // namespace bloomshard::app
