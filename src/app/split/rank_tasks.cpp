#include "app/split/rank_tasks.hpp"

#include "app/split/split_inputs.hpp"
#include "io/records/file_assignment.hpp"

namespace bloomshard::app {

std::vector<FileTask> tasks_of_rank(const RunManifest& m, int rank, int ranks,
                                    std::uint64_t& total_bytes) {
  // Every open whole input and every open range of a split one is a task;
  // a range weighs its unread bytes, so a resume balances what is left.
  std::vector<FileTask> open;
  std::vector<std::uint64_t> weights;
  total_bytes = 0;
  for (std::size_t i = 0; i < m.inputs.size(); ++i) {
    const InputProgress& p = m.inputs[i];
    total_bytes += p.file.size;
    if (p.done) continue;
    if (p.ranges.empty()) {
      open.push_back({p.file, i, p.cursor, p.output_length, p.prefix_digest, {}, {}, 0, {}});
      weights.push_back(p.file.size);
      continue;
    }
    for (std::size_t k = 0; k < p.ranges.size(); ++k) {
      const RangeProgress& r = p.ranges[k];
      if (r.done) continue;
      open.push_back({p.file,
                      i,
                      r.cursor,
                      r.output_length,
                      r.prefix_digest,
                      k,
                      io::ByteRange{r.begin, r.end},
                      r.reject_length,
                      {}});
      weights.push_back(r.end - r.cursor.decompressed_offset);
    }
  }
  const std::vector<int> owners = io::assign_files_to_ranks(weights, ranks);
  std::vector<FileTask> tasks;
  for (std::size_t j = 0; j < open.size(); ++j) {
    if (owners[j] == rank) tasks.push_back(std::move(open[j]));
  }
  return tasks;
}

}  // namespace bloomshard::app
