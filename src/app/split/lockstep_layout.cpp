#include "app/split/lockstep_layout.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "app/round/key_order.hpp"
#include "io/errors.hpp"
#include "io/output/output_writer.hpp"

namespace bloomshard::app {

bool lockstep_layout_applies(const DedupConfig& config, bool all_uncompressed) {
  // Split ranges asked for by name are the tasks layout's.
  const auto given = [&config](std::string_view name) {
    return std::ranges::find(config.explicit_options, name) != config.explicit_options.end();
  };
  return config.annotate.mode == RunMode::kFilter && config.key.unit == core::KeyUnit::kRecord &&
         keeps_input_order(config) && !given("split-inputs") && !given("split-min-bytes") &&
         all_uncompressed;
}

bool lockstep_layout_applies(const DedupConfig& config, const RunManifest& m) {
  return lockstep_layout_applies(config, std::all_of(m.inputs.begin(), m.inputs.end(),
                                                     [](const InputProgress& p) {
                                                       return p.file.compression ==
                                                              io::Compression::kNone;
                                                     })) &&
         lockstep_resumable(m);
}

bool lockstep_resumable(const RunManifest& m) {
  if (m.input_order && (m.input_order->kept_rows != 0 || !m.input_order->kept.empty())) {
    return false;
  }
  // 0: inputs done, 1: the started one seen, 2: untouched ones only.
  int stage = 0;
  for (const InputProgress& p : m.inputs) {
    if (!p.ranges.empty()) return false;
    const bool untouched = !p.done && p.skipped.empty() && p.cursor.records == 0 &&
                           p.cursor.decompressed_offset == 0 && p.output_length == 0;
    if (p.done) {
      if (stage != 0) return false;
    } else if (untouched) {
      stage = 2;
    } else {
      if (stage != 0) return false;  // a second started input, or one after an untouched one
      stage = 1;
    }
  }
  return true;
}

std::vector<io::ByteRange> blocks_from(std::vector<io::ByteRange> whole, std::uint64_t start) {
  std::erase_if(whole, [start](const io::ByteRange& r) { return r.end <= start; });
  if (!whole.empty() && whole.front().begin < start) whole.front().begin = start;
  return whole;
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
        per_input.push_back(p.done ? std::vector<io::ByteRange>{}
                                   : blocks_from(io::line_aligned_blocks(p.file.absolute_path,
                                                                         p.file.size, block_bytes),
                                                 p.cursor.decompressed_offset));
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

void prepare_lockstep_outputs(const comm::Communicator& world, const RunManifest& m,
                              const std::filesystem::path& output_dir, bool durable) {
  if (world.rank() == 0) {
    for (const InputProgress& p : m.inputs) {
      if (p.done) continue;  // prepare_resumed_outputs cut it to its length
      const std::filesystem::path out = io::output_path_for(output_dir, p.file.relative_path);
      std::error_code ec;
      if (std::filesystem::exists(out, ec)) {
        std::filesystem::resize_file(out, p.output_length, ec);
        if (ec) {
          throw io::OutputError(out.string(), "cannot cut it to its committed " +
                                                  std::to_string(p.output_length) +
                                                  " bytes: " + ec.message());
        }
      } else if (p.output_length == 0) {
        // A new run's, or a new input's of an incremental run.
        io::OutputWriter::create(out, io::Compression::kNone, {.sync_entries = durable}).close();
      } else {
        throw io::OutputError(out.string(), "missing, but it has " +
                                                std::to_string(p.output_length) +
                                                " committed bytes in the checkpoint");
      }
    }
  }
  world.barrier();
}

LockstepOutputs::LockstepOutputs(std::vector<LockstepBlock> blocks, std::size_t inputs)
    : blocks_(std::move(blocks)),
      lengths_(inputs, 0),
      lines_(inputs, 0),
      done_before_(inputs, false),
      start_offset_(inputs, 0) {
  index_blocks();
}

LockstepOutputs::LockstepOutputs(std::vector<LockstepBlock> blocks, const RunManifest& m)
    : blocks_(std::move(blocks)) {
  for (const InputProgress& p : m.inputs) {
    lengths_.push_back(p.output_length);
    lines_.push_back(p.cursor.records);
    done_before_.push_back(p.done);
    start_offset_.push_back(p.cursor.decompressed_offset);
  }
  index_blocks();
}

void LockstepOutputs::index_blocks() {
  first_block_.assign(lengths_.size(), 0);
  end_block_.assign(lengths_.size(), 0);
  std::size_t b = 0;
  for (std::size_t i = 0; i < lengths_.size(); ++i) {
    first_block_[i] = b;
    while (b < blocks_.size() && blocks_[b].input == i) ++b;
    end_block_[i] = b;
  }
  if (b != blocks_.size()) throw std::logic_error("lockstep layout: blocks not in input order");
}

bool LockstepOutputs::can_cut() const {
  for (std::size_t i = 0; i < lengths_.size(); ++i) {
    if (!done_before_[i] && end_block_[i] > next_ && lines_[i] == kUnknownLines) return false;
  }
  return true;
}

std::optional<std::vector<FileState>> LockstepOutputs::cut_states() const {
  if (!can_cut()) return std::nullopt;
  std::vector<FileState> states;
  for (std::size_t i = 0; i < lengths_.size(); ++i) {
    if (done_before_[i]) continue;  // merge_cut keeps the manifest's entry
    const std::size_t placed_end = std::min(end_block_[i], next_);
    FileState s;
    s.index = i;
    s.done = end_block_[i] <= next_;
    // A done input's line count is not read again (its broken block's
    // skip, if any, is recorded by the job).
    s.cursor.records = lines_[i] == kUnknownLines ? 0 : lines_[i];
    s.cursor.decompressed_offset =
        placed_end > first_block_[i] ? blocks_[placed_end - 1].bytes.end : start_offset_[i];
    s.output_length = lengths_[i];
    states.push_back(s);
  }
  return states;
}

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
