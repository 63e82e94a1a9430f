#include "app/round/retracted_copies.hpp"

#include <algorithm>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "app/round/retracted_annotations.hpp"
#include "app/round/retracted_line_cut.hpp"
#include "app/round/retracted_line_place.hpp"
#include "app/round/retracted_paragraphs.hpp"
#include "io/durable/durable_file.hpp"
#include "io/output/output_writer.hpp"
#include "io/output/stored_output.hpp"
#include "io/records/record_reader.hpp"

namespace bloomshard::app {
namespace {

using HashPair = std::pair<std::uint64_t, std::uint64_t>;

// Collective: the inputs that any rank holds a retraction for or wrote
// stored (`deferred`), ascending (the same on every rank; one allgather of
// input indexes, not of the retractions).
std::vector<std::size_t> inputs_to_rewrite(const comm::Communicator& world,
                                           std::span<const core::CrossInputRetraction> mine,
                                           std::span<const std::size_t> deferred) {
  std::vector<std::uint64_t> own(deferred.begin(), deferred.end());
  own.reserve(own.size() + mine.size());
  for (const core::CrossInputRetraction& r : mine) own.push_back(core::order_input(r.tag));
  std::sort(own.begin(), own.end());
  own.erase(std::unique(own.begin(), own.end()), own.end());
  std::vector<std::uint64_t> all = world.allgather(own);
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return {all.begin(), all.end()};
}

// Collective: each retraction sent to the rank that cuts its input
// (`rank_of`), so a rank holds only the retractions of the outputs it cuts
// (about 1/P of them, not the whole list); grouped by input, each input's
// sorted by input offset and unique.
std::map<std::size_t, std::vector<RetractedLine>> route_to_cutting_ranks(
    const comm::Communicator& world, std::span<const core::CrossInputRetraction> mine,
    const std::map<std::size_t, std::size_t>& rank_of) {
  std::vector<std::vector<std::uint64_t>> to(world.usize());
  for (const core::CrossInputRetraction& r : mine) {
    const std::size_t input = static_cast<std::size_t>(core::order_input(r.tag));
    to[rank_of.at(input)].insert(to[rank_of.at(input)].end(), {r.tag, r.hash.hi, r.hash.lo});
  }
  const std::vector<std::uint64_t> all = world.alltoallv(to);
  std::map<std::size_t, std::vector<RetractedLine>> by_input;
  for (std::size_t j = 0; j + 2 < all.size(); j += 3) {
    by_input[static_cast<std::size_t>(core::order_input(all[j]))].push_back(
        {core::order_offset(all[j]), {all[j + 1], all[j + 2]}});
  }
  const auto before = [](const RetractedLine& a, const RetractedLine& b) {
    return std::tie(a.input_offset, a.hash.hi, a.hash.lo) <
           std::tie(b.input_offset, b.hash.hi, b.hash.lo);
  };
  for (auto& [input, lines] : by_input) {
    std::sort(lines.begin(), lines.end(), before);
    lines.erase(std::unique(lines.begin(), lines.end(),
                            [](const RetractedLine& a, const RetractedLine& b) {
                              return a.input_offset == b.input_offset && a.hash == b.hash;
                            }),
                lines.end());
  }
  return by_input;
}

// Lines and bytes left out of one output, and its cut length.
struct CutFigures {
  std::uint64_t lines = 0;
  std::uint64_t bytes = 0;
  std::uint64_t length = 0;
  bool by_map = false;  // placed by the output's offset map, not the walk
};

// Cuts the retracted lines out of an uncompressed output by byte ranges
// into its temporary file: placed by the output's offset map where this
// rank's feed kept one and every check holds (retracted_line_place.hpp),
// else by walking the input beside the output (retracted_line_cut.hpp).
CutFigures cut_output(const io::InputFile& input, std::size_t index,
                      const std::filesystem::path& out, const std::vector<RetractedLine>& retracted,
                      InputFeed& feed, bool durable) {
  const std::uint64_t output_length = std::filesystem::file_size(out);
  const LineKeyHash hash_of = [&](std::string_view line) {
    return feed.key_hash_of(input.format, line);
  };
  std::optional<PartWithoutRetracted> plan;
  const core::OutputOffsetMap* map = feed.offset_map(index);
  if (map) plan = plan_cut_by_offset_map(out, output_length, *map, retracted, hash_of);
  const bool by_map = plan.has_value();
  if (!plan) {
    plan = plan_output_without_retracted(input.absolute_path, input.size, out, output_length,
                                         retracted, hash_of);
  }
  const std::uint64_t length = write_cut_output(out, *plan, durable);
  return {plan->removed_lines, plan->removed_bytes, length, by_map};
}

// What an output of `input` is compressed again with: the run's level, so
// that its bytes are those of a run that wrote it once (a 1-rank run).
io::OutputOptions rewrite_options(const io::InputFile& input, const EndPassOptions& how) {
  const int level = input.compression == io::Compression::kGzip   ? how.gzip_level
                    : input.compression == io::Compression::kZstd ? how.zstd_level
                                                                  : 0;
  return {.level = level == 0 ? std::nullopt : std::optional<int>(level)};
}

// Writes one attribute file with the retracted copies' lines flagged a
// duplicate into its temporary file (retracted_annotations.hpp).
CutFigures flag_output(const io::InputFile& input, const std::filesystem::path& out,
                       const std::vector<RetractedLine>& retracted, InputFeed& feed,
                       const EndPassOptions& how) {
  const FlaggedLines flagged = flag_retracted_annotations(
      input, out, retracted,
      [&](std::string_view line) { return feed.key_hash_of(input.format, line); }, *how.annotate,
      how.max_line_bytes, rewrite_options(input, how), how.durable);
  feed.count_flagged(flagged.lines, flagged.growth);
  return {flagged.lines, 0, flagged.length};
}

// Cuts the retracted paragraphs out of their records' lines of one output
// (retracted_paragraphs.hpp) into its temporary file.
CutFigures recut_output(const io::InputFile& input, const std::filesystem::path& out,
                        const std::vector<RetractedLine>& retracted, InputFeed& feed,
                        const EndPassOptions& how) {
  const auto text_of = [&](std::string_view line) {
    return feed.paragraph_text_of(input.format, line);
  };
  const ParagraphRecut recut =
      how.annotate
          ? flag_retracted_paragraphs(input, out, retracted, text_of, *how.paragraphs,
                                      how.hash_seed, *how.annotate, how.max_line_bytes,
                                      rewrite_options(input, how), how.durable)
          : cut_retracted_paragraphs(input, out, retracted, text_of, *how.paragraphs, how.hash_seed,
                                     how.max_line_bytes, rewrite_options(input, how), how.durable);
  feed.count_recut_paragraphs(recut);
  return {recut.lines_changed, recut.bytes_removed, recut.length};
}

// Rewrites one compressed output without the lines of `retracted` keys
// (decompressed, each line's key parsed and hashed, compressed again) into
// its temporary file. Throws std::runtime_error naming the output.
CutFigures rewrite_output(const io::InputFile& input, const std::filesystem::path& out,
                          const std::vector<HashPair>& retracted, InputFeed& feed,
                          const EndPassOptions& how) {
  io::InputFile written = input;  // the output read as an input of the same kind
  written.absolute_path = out;
  written.size = std::filesystem::file_size(out);
  io::RecordReader reader(
      {.max_line_bytes = static_cast<std::size_t>(how.max_line_bytes), .prefix_digest = false});
  reader.open(written);
  const std::filesystem::path tmp = cut_output_temp_path(out);
  io::OutputWriter writer =
      io::OutputWriter::create(tmp, input.compression, rewrite_options(input, how));
  std::uint64_t lines = 0;
  std::uint64_t bytes = 0;
  io::Record record;
  while (reader.next(record)) {
    if (record.too_long) {
      throw std::runtime_error("output '" + out.string() + "' line " +
                               std::to_string(record.line_number) + " is longer than allowed");
    }
    if (retracted.empty()) {  // a stored output compressed, every line kept
      writer.write(record.line, record.terminator);
      continue;
    }
    const std::optional<core::KeyHash> h = feed.key_hash_of(input.format, record.line);
    if (h && std::binary_search(retracted.begin(), retracted.end(), HashPair{h->hi, h->lo})) {
      ++lines;
      bytes += record.line.size() + record.terminator.size();
      continue;
    }
    writer.write(record.line, record.terminator);
  }
  if (how.durable) writer.flush_and_sync();
  writer.close();
  if (lines != retracted.size()) {
    std::filesystem::remove(tmp);
    throw std::runtime_error("output '" + out.string() + "' holds " + std::to_string(lines) +
                             " of its " + std::to_string(retracted.size()) +
                             " retracted copies: it does not match this run");
  }
  return {lines, bytes, std::filesystem::file_size(tmp)};
}

// Throws on every rank if `error` is set on any (this rank's said first).
// Each rank's share of the pass ends at its own time (an output's deflate
// takes seconds): an early rank waits asleep, and the late one's
// compression thread has the core.
void agree_no_error(const comm::Communicator& world, const std::string& error, const char* step) {
  if (!error.empty()) {
    std::cerr << "bloomshard dedup: rank " << world.rank() << ": " << step << ": " << error << '\n';
  }
  if (!world.all_resting(error.empty())) {
    throw std::runtime_error(std::string(step) + " failed" +
                             (error.empty() ? std::string(" on another rank") : ": " + error));
  }
}

// Collective: this rank's share (input index mod ranks) of the compressed
// outputs that begin stored (io::output_starts_stored): the rounds wrote
// them so for this pass to compress once (InputFeed::defer_compression), in
// this attempt or an earlier one on any rank count. One header read each.
std::vector<std::size_t> stored_outputs(const comm::Communicator& world, const RunManifest& m,
                                        const std::filesystem::path& output_dir,
                                        const EndPassOptions& how) {
  std::vector<std::size_t> stored;
  std::string error;
  if (!how.annotate) {
    try {
      for (std::size_t i = static_cast<std::size_t>(world.rank()); i < m.inputs.size();
           i += world.usize()) {
        const io::InputFile& file = m.inputs[i].file;
        if (file.compression == io::Compression::kNone) continue;
        const std::filesystem::path out = io::output_path_for(output_dir, file.relative_path);
        if (std::filesystem::exists(out) && io::output_starts_stored(out, file.compression)) {
          stored.push_back(i);
        }
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  agree_no_error(world, error, "finding the outputs written stored");
  return stored;
}

// Collective: which rank cuts each of `inputs`: the rank whose feed kept
// the output's offset map (the writer, InputFeed::offset_map()), else the
// rank (input mod ranks). The same on every rank (one allgather of the
// mapped inputs' indexes).
std::map<std::size_t, std::size_t> cutting_ranks(const comm::Communicator& world,
                                                 std::span<const std::size_t> inputs,
                                                 const InputFeed& feed) {
  std::vector<std::uint64_t> mapped;
  for (const std::size_t input : inputs) {
    if (feed.offset_map(input) != nullptr) mapped.push_back(input);
  }
  const std::vector<std::uint64_t> counts =
      world.allgather(std::vector<std::uint64_t>{mapped.size()});
  const std::vector<std::uint64_t> all = world.allgather(mapped);
  std::map<std::size_t, std::size_t> rank_of;
  for (const std::size_t input : inputs) rank_of[input] = input % world.usize();
  std::size_t j = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    for (std::uint64_t n = 0; n < counts[r]; ++n, ++j) {
      rank_of[static_cast<std::size_t>(all[j])] = r;
    }
  }
  return rank_of;
}

}  // namespace

RetractedCopiesPass cut_retracted_copies(const comm::Communicator& world, const RunManifest& m,
                                         std::span<const core::CrossInputRetraction> mine,
                                         InputFeed& feed, const std::filesystem::path& output_dir,
                                         const EndPassOptions& how) {
  // Only a filter mode's uncompressed outputs are placed by a map; the
  // feed keeps none for the others.
  const std::vector<std::size_t> stored = stored_outputs(world, m, output_dir, how);
  const std::vector<std::size_t> inputs = inputs_to_rewrite(world, mine, stored);
  const std::map<std::size_t, std::size_t> rank_of = cutting_ranks(world, inputs, feed);
  // This rank's outputs to cut, each with every rank's retractions of it;
  // an output written stored without any is compressed all the same.
  std::map<std::size_t, std::vector<RetractedLine>> by_input =
      route_to_cutting_ranks(world, mine, rank_of);
  for (const std::size_t input : inputs) {
    if (rank_of.at(input) == static_cast<std::size_t>(world.rank())) by_input[input];
  }
  RetractedCopiesPass done;
  done.deferred = world.allreduce_sum(std::uint64_t{stored.size()});
  std::vector<std::uint64_t> cut;  // (input, length) pairs of this rank
  std::string error;
  for (const auto& [input, retracted] : by_input) {
    try {
      const io::InputFile& file = m.inputs.at(input).file;
      const std::filesystem::path out = io::output_path_for(output_dir, file.relative_path);
      CutFigures left_out;
      if (how.paragraphs) {
        left_out = recut_output(file, out, retracted, feed, how);
      } else if (how.annotate) {
        left_out = flag_output(file, out, retracted, feed, how);
      } else if (file.compression == io::Compression::kNone) {
        left_out = cut_output(file, input, out, retracted, feed, how.durable);
        if (left_out.by_map) ++done.by_map;
        feed.count_left_out(left_out.lines, left_out.bytes);
      } else {
        std::vector<HashPair> hashes;
        hashes.reserve(retracted.size());
        for (const RetractedLine& r : retracted) hashes.emplace_back(r.hash.hi, r.hash.lo);
        std::sort(hashes.begin(), hashes.end());
        hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
        left_out = rewrite_output(file, out, hashes, feed, how);
        feed.count_left_out(left_out.lines, left_out.bytes);
      }
      ++done.outputs;
      done.lines += left_out.lines;
      cut.insert(cut.end(), {input, left_out.length});
    } catch (const std::exception& e) {
      error = e.what();
      break;
    }
  }
  agree_no_error(world, error, "leaving retracted copies out of the outputs");
  done.outputs = world.allreduce_sum(done.outputs);
  done.lines = world.allreduce_sum(done.lines);
  done.by_map = world.allreduce_sum(done.by_map);
  const std::vector<std::uint64_t> all = world.allgather(cut);
  for (std::size_t j = 0; j + 1 < all.size(); j += 2) {
    done.cut.push_back({static_cast<std::size_t>(all[j]), all[j + 1]});
  }
  std::sort(done.cut.begin(), done.cut.end(),
            [](const CutOutput& a, const CutOutput& b) { return a.input < b.input; });
  return done;
}

void commit_cut_outputs(const comm::Communicator& world, const RunManifest& m,
                        std::span<const CutOutput> cuts, const std::filesystem::path& output_dir,
                        bool durable) {
  // Every rank checks its outputs first, and only when all agree does any
  // rename: a changed output is refused before any other is touched, so a
  // refused resume leaves the end pass exactly where it found it.
  std::vector<std::filesystem::path> to_rename;  // outputs whose cut is still pending
  std::string error;
  for (const CutOutput& c : cuts) {
    if (c.input % world.usize() != static_cast<std::size_t>(world.rank())) continue;
    try {
      const std::filesystem::path out =
          io::output_path_for(output_dir, m.inputs.at(c.input).file.relative_path);
      const std::filesystem::path tmp = cut_output_temp_path(out);
      const bool pending = std::filesystem::exists(tmp);
      const std::filesystem::path& have = pending ? tmp : out;
      if (const std::uint64_t size = std::filesystem::file_size(have); size != c.length) {
        throw std::runtime_error("'" + have.string() + "' is " + std::to_string(size) +
                                 " bytes, but the end pass cut the output to " +
                                 std::to_string(c.length) + ": it was changed since");
      }
      if (pending) to_rename.push_back(out);
    } catch (const std::exception& e) {
      error = e.what();
      break;
    }
  }
  agree_no_error(world, error, "renaming the outputs cut of their retracted copies");
  try {
    for (const std::filesystem::path& out : to_rename) commit_cut_output(out, durable);
  } catch (const std::exception& e) {
    error = e.what();
  }
  agree_no_error(world, error, "renaming the outputs cut of their retracted copies");
}

RetractedCopiesPass leave_out_retracted_copies(const comm::Communicator& world,
                                               const RunManifest& m,
                                               std::span<const core::CrossInputRetraction> mine,
                                               InputFeed& feed,
                                               const std::filesystem::path& output_dir,
                                               const EndPassOptions& how) {
  RetractedCopiesPass done = cut_retracted_copies(world, m, mine, feed, output_dir, how);
  commit_cut_outputs(world, m, done.cut, output_dir, how.durable);
  return done;
}

}  // namespace bloomshard::app
