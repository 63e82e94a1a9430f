#include "bloomshard/app/rank_tasks.hpp"

#include "bloomshard/io/file_assignment.hpp"

namespace bloomshard::app {

std::vector<FileTask> tasks_of_rank(const RunManifest& m, int rank, int ranks,
                                    std::uint64_t& total_bytes) {
  std::vector<std::size_t> open_inputs;
  std::vector<std::uint64_t> weights;
  total_bytes = 0;
  for (std::size_t i = 0; i < m.inputs.size(); ++i) {
    total_bytes += m.inputs[i].file.size;
    if (m.inputs[i].done) continue;
    open_inputs.push_back(i);
    weights.push_back(m.inputs[i].file.size);
  }
  const std::vector<int> owners = io::assign_files_to_ranks(weights, ranks);
  std::vector<FileTask> tasks;
  for (std::size_t j = 0; j < open_inputs.size(); ++j) {
    if (owners[j] != rank) continue;
    const InputProgress& p = m.inputs[open_inputs[j]];
    tasks.push_back({p.file, open_inputs[j], p.cursor, p.output_length, p.prefix_digest});
  }
  return tasks;
}

}  // namespace bloomshard::app
