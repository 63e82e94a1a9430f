#include "io/checkpoint/checkpoint_collective.hpp"

#include <mpi.h>
#include <unistd.h>

#include <iostream>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "comm/environment.hpp"
#include "comm/mpi_error.hpp"
#include "io/checkpoint/checkpoint_error.hpp"

namespace bloomshard::io {

std::vector<std::string> allgather_strings(const comm::Communicator& comm,
                                           const std::vector<std::string>& mine) {
  // One record per string: its length as 8 bytes, then the bytes.
  std::string packed;
  for (const std::string& s : mine) {
    const std::uint64_t n = s.size();
    packed.append(reinterpret_cast<const char*>(&n), sizeof n);
    packed += s;
  }
  if (packed.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw std::length_error("allgather_strings: more than 2 GiB from one rank");
  }
  const int my_len = static_cast<int>(packed.size());
  std::vector<int> lens(comm.usize());
  comm::check_mpi(MPI_Allgather(&my_len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm.mpi_comm()),
                  "MPI_Allgather");
  std::vector<int> displs(lens.size());
  long long total = 0;
  for (std::size_t i = 0; i < lens.size(); ++i) {
    if (total > std::numeric_limits<int>::max()) {
      throw std::length_error("allgather_strings: more than 2 GiB in total");
    }
    displs[i] = static_cast<int>(total);
    total += lens[i];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  comm::check_mpi(MPI_Allgatherv(packed.data(), my_len, MPI_CHAR, all.data(), lens.data(),
                                 displs.data(), MPI_CHAR, comm.mpi_comm()),
                  "MPI_Allgatherv");
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos + sizeof(std::uint64_t) <= all.size()) {
    std::uint64_t n = 0;
    all.copy(reinterpret_cast<char*>(&n), sizeof n, pos);
    pos += sizeof n;
    out.push_back(all.substr(pos, static_cast<std::size_t>(n)));
    pos += static_cast<std::size_t>(n);
  }
  return out;
}

namespace {

std::string rank_and_host(const comm::Communicator& comm) {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return "rank " + std::to_string(comm.rank()) + " on " +
         (host[0] != '\0' ? std::string(host) : std::string("?"));
}

}  // namespace

bool any_rank_failed(const comm::Communicator& comm, const std::string& local_error,
                     const std::string& context) {
  const bool failed = !local_error.empty();
  // Healthy ranks wait as long as it takes (a failed rank ends the job if
  // they are elsewhere); a failed rank waits a bounded time.
  const std::optional<bool> any = comm.any_within(
      failed, failed ? kErrorAgreementSeconds : std::numeric_limits<double>::infinity());
  if (any) return *any;
  std::cerr << "bloomshard: " << context << ": " << rank_and_host(comm) << ": " << local_error
            << " (the other ranks did not join the error agreement within "
            << kErrorAgreementSeconds << " s; ending the job)\n"
            << std::flush;
  comm::abort_job(1);
}

void agree_or_throw(const comm::Communicator& comm, const std::string& local_error,
                    const std::string& context) {
  if (!any_rank_failed(comm, local_error, context)) return;
  std::vector<std::string> mine;
  if (!local_error.empty()) mine.push_back(rank_and_host(comm) + ": " + local_error);
  const std::vector<std::string> all = allgather_strings(comm, mine);
  std::string message = context + ": ";
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i > 0) message += "; ";
    message += all[i];
  }
  throw CollectiveCheckpointError(message);
}

}  // namespace bloomshard::io
