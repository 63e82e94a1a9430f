// Longest-processing-time greedy assignment of files to ranks.
#include "io/records/file_assignment.hpp"

#include <algorithm>
#include <numeric>
#include <queue>
#include <stdexcept>
#include <utility>

namespace bloomshard::io {

std::vector<int> assign_files_to_ranks(std::span<const std::uint64_t> sizes, int num_ranks) {
  if (num_ranks < 1) throw std::invalid_argument("assign_files_to_ranks: num_ranks must be >= 1");
  std::vector<std::size_t> order(sizes.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // stable_sort keeps equal sizes in index order: the deterministic tie-break.
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return sizes[a] > sizes[b]; });
  // Min-heap of (load, rank): least loaded first, then lowest rank.
  using Slot = std::pair<std::uint64_t, int>;
  std::priority_queue<Slot, std::vector<Slot>, std::greater<>> ranks;
  for (int r = 0; r < num_ranks; ++r) ranks.emplace(0, r);
  std::vector<int> owner(sizes.size(), 0);
  for (const std::size_t i : order) {
    auto [load, rank] = ranks.top();
    ranks.pop();
    owner[i] = rank;
    // +1: empty files still count, so many of them spread over ranks.
    ranks.emplace(load + sizes[i] + 1, rank);
  }
  return owner;
}

std::vector<int> assign_files_to_ranks(std::span<const InputFile> files, int num_ranks) {
  std::vector<std::uint64_t> sizes;
  sizes.reserve(files.size());
  for (const InputFile& f : files) sizes.push_back(f.size);
  return assign_files_to_ranks(sizes, num_ranks);
}

}  // namespace bloomshard::io
