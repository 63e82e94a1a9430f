#include "app/report/job_abort.hpp"

#include <chrono>
#include <string>
#include <thread>

#include "app/report/stderr_line.hpp"
#include "app/run/host_name.hpp"
#include "comm/environment.hpp"
#include "io/checkpoint/checkpoint_error.hpp"

namespace bloomshard::app {
namespace {

constexpr auto kCollectiveReportWait = std::chrono::seconds(10);

}  // namespace

void report_error_and_abort(const comm::Communicator& world, std::string_view command,
                            const std::exception& error, int exit_code) {
  const std::string prefix = "bloomshard " + std::string(command) + ": ";
  const std::string place = "rank " + std::to_string(world.rank()) + " of " +
                            std::to_string(world.size()) + " on " + host_name() + ": ";
  if (const auto* exit = dynamic_cast<const CommandExit*>(&error); exit != nullptr) {
    write_stderr_line(prefix + place + exit->what());
    comm::abort_job(exit->exit_code());
  }
  if (dynamic_cast<const io::CollectiveCheckpointError*>(&error) != nullptr) {
    if (world.rank() == 0) {
      write_stderr_line(prefix + "error: " + error.what());
    } else {
      std::this_thread::sleep_for(kCollectiveReportWait);
    }
  } else {
    write_stderr_line(prefix + place + "error: " + error.what());
  }
  comm::abort_job(exit_code);
}

}  // namespace bloomshard::app
