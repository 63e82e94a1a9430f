#include "app/cli/mpi_command.hpp"

#include <exception>
#include <iostream>

#include "app/cli/exit_codes.hpp"
#include "app/report/job_abort.hpp"

namespace bloomshard::app {

void print_parse_exit(const comm::Communicator& world, std::string_view name, int exit_code,
                      const std::string& message) {
  if (world.rank() != 0) return;
  const bool ok = exit_code == kExitOk;
  (ok ? std::cout : std::cerr) << (ok ? "" : "bloomshard " + std::string(name) + ": ") << message
                               << (message.ends_with('\n') ? "" : "\n");
}

int run_or_abort(const comm::Communicator& world, std::string_view name,
                 const std::function<int()>& job) {
  try {
    return job();
  } catch (const std::exception& e) {
    report_error_and_abort(world, name, e, kExitFailure);
  }
}

}  // namespace bloomshard::app
