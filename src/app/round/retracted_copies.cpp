#include "app/round/retracted_copies.hpp"

#include <algorithm>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "io/durable/durable_file.hpp"
#include "io/output/output_writer.hpp"
#include "io/records/record_reader.hpp"

namespace bloomshard::app {
namespace {

using HashPair = std::pair<std::uint64_t, std::uint64_t>;

// Every rank's retractions, grouped by input: each input's key hashes,
// sorted and unique.
std::map<std::size_t, std::vector<HashPair>> gather_by_input(
    const comm::Communicator& world, std::span<const core::CrossInputRetraction> mine) {
  std::vector<std::uint64_t> flat;
  flat.reserve(mine.size() * 3);
  for (const core::CrossInputRetraction& r : mine) {
    flat.insert(flat.end(), {core::order_input(r.tag), r.hash.hi, r.hash.lo});
  }
  const std::vector<std::uint64_t> all = world.allgather(flat);
  std::map<std::size_t, std::vector<HashPair>> by_input;
  for (std::size_t j = 0; j + 2 < all.size(); j += 3) {
    by_input[static_cast<std::size_t>(all[j])].emplace_back(all[j + 1], all[j + 2]);
  }
  for (auto& [input, hashes] : by_input) {
    std::sort(hashes.begin(), hashes.end());
    hashes.erase(std::unique(hashes.begin(), hashes.end()), hashes.end());
  }
  return by_input;
}

// Rewrites one output without the lines of `retracted` keys; returns the
// lines and bytes left out. Throws std::runtime_error naming the output.
std::pair<std::uint64_t, std::uint64_t> rewrite_output(const io::InputFile& input,
                                                       const std::filesystem::path& out,
                                                       const std::vector<HashPair>& retracted,
                                                       InputFeed& feed,
                                                       std::uint64_t max_line_bytes, bool durable) {
  io::InputFile written = input;  // the output read as an input of the same kind
  written.absolute_path = out;
  written.size = std::filesystem::file_size(out);
  io::RecordReader reader(
      {.max_line_bytes = static_cast<std::size_t>(max_line_bytes), .prefix_digest = false});
  reader.open(written);
  const std::filesystem::path tmp = out.string() + ".retracted-tmp";
  io::OutputWriter writer = io::OutputWriter::create(tmp, input.compression, {});
  std::uint64_t lines = 0;
  std::uint64_t bytes = 0;
  io::Record record;
  while (reader.next(record)) {
    if (record.too_long) {
      throw std::runtime_error("output '" + out.string() + "' line " +
                               std::to_string(record.line_number) + " is longer than allowed");
    }
    const std::optional<core::KeyHash> h = feed.key_hash_of(input.format, record.line);
    if (h && std::binary_search(retracted.begin(), retracted.end(), HashPair{h->hi, h->lo})) {
      ++lines;
      bytes += record.line.size() + record.terminator.size();
      continue;
    }
    writer.write(record.line, record.terminator);
  }
  if (durable) writer.flush_and_sync();
  writer.close();
  if (lines != retracted.size()) {
    std::filesystem::remove(tmp);
    throw std::runtime_error("output '" + out.string() + "' holds " + std::to_string(lines) +
                             " of its " + std::to_string(retracted.size()) +
                             " retracted copies: it does not match this run");
  }
  std::filesystem::rename(tmp, out);
  if (durable) io::fsync_path(out.parent_path());
  return {lines, bytes};
}

}  // namespace

RetractedCopiesPass leave_out_retracted_copies(const comm::Communicator& world,
                                               const RunManifest& m,
                                               std::span<const core::CrossInputRetraction> mine,
                                               InputFeed& feed,
                                               const std::filesystem::path& output_dir,
                                               std::uint64_t max_line_bytes, bool durable) {
  const std::map<std::size_t, std::vector<HashPair>> by_input = gather_by_input(world, mine);
  RetractedCopiesPass done;
  std::string error;
  for (const auto& [input, hashes] : by_input) {
    if (input % world.usize() != static_cast<std::size_t>(world.rank())) continue;
    try {
      const io::InputFile& file = m.inputs.at(input).file;
      const auto [lines, bytes] =
          rewrite_output(file, io::output_path_for(output_dir, file.relative_path), hashes, feed,
                         max_line_bytes, durable);
      feed.count_left_out(lines, bytes);
      ++done.outputs;
      done.lines += lines;
    } catch (const std::exception& e) {
      error = e.what();
      break;
    }
  }
  if (!error.empty()) {
    std::cerr << "bloomshard dedup: rank " << world.rank()
              << ": leaving retracted copies out: " << error << '\n';
  }
  if (!world.all(error.empty())) {
    throw std::runtime_error("leaving retracted copies out of the outputs failed" +
                             (error.empty() ? std::string(" on another rank") : ": " + error));
  }
  done.outputs = world.allreduce_sum(done.outputs);
  done.lines = world.allreduce_sum(done.lines);
  return done;
}

}  // namespace bloomshard::app
