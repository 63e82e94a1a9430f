#include "app/cli/launch_command.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "app/cli/exit_codes.hpp"
#include "app/report/stderr_line.hpp"

namespace bloomshard::app {
namespace {

constexpr std::string_view kLaunchUsage =
    R"(usage: bloomshard launch [--] COMMAND [ARGS...]
  e.g. bloomshard launch -- mpiexec -n 8 bloomshard dedup --config jobs/my-job.ini

Runs COMMAND (a launcher: mpiexec, mpirun or srun) in a process group of its
own and turns SIGINT, SIGTERM, SIGHUP and SIGUSR1 sent to this process or to
its process group (Ctrl-C) into one SIGUSR1 to COMMAND, which forwards it to
every rank: the ranks finish the round, write a checkpoint and exit 75, and
launch exits with COMMAND's status (75). Sent to mpirun itself, SIGINT or
SIGTERM make it kill the ranks within about 2 s and exit 1 (no stop
checkpoint; a rerun resumes from the previous one).
If this process dies (SIGKILL), COMMAND gets SIGUSR1 as well.

exit status: COMMAND's; 128+N if it died of signal N; 127 if it could not be
started; 2 bad usage
)";

// The stop requests the wrapper turns into SIGUSR1 for the launcher.
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1};

const char* signal_name(int signo) {
  switch (signo) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    case SIGUSR1:
      return "SIGUSR1";
    default:
      return strsignal(signo);
  }
}

// In the forked child, before exec: only async-signal-safe calls.
[[noreturn]] void exec_launcher(std::vector<char*>& argv, const sigset_t& original_mask,
                                pid_t wrapper_pid) {
  setpgid(0, 0);  // Ctrl-C and group signals go to the wrapper only
  // The launcher outlives a SIGKILLed wrapper as a stop request, not an
  // orphan that goes on writing unseen.
  prctl(PR_SET_PDEATHSIG, SIGUSR1);
  if (getppid() != wrapper_pid) raise(SIGUSR1);
  // A background process group that reads the terminal is stopped by
  // SIGTTIN; the ranks read no standard input.
  if (isatty(STDIN_FILENO) != 0) {
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
  }
  sigprocmask(SIG_SETMASK, &original_mask, nullptr);
  execvp(argv[0], argv.data());
  const int error = errno;
  const char* prefix = "bloomshard launch: cannot run '";
  (void)!write(STDERR_FILENO, prefix, std::strlen(prefix));
  (void)!write(STDERR_FILENO, argv[0], std::strlen(argv[0]));
  (void)!write(STDERR_FILENO, "': ", 3);
  const char* reason = std::strerror(error);
  (void)!write(STDERR_FILENO, reason, std::strlen(reason));
  (void)!write(STDERR_FILENO, "\n", 1);
  _exit(127);
}

int exit_status_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return kExitFailure;
}

}  // namespace

int run_launch(const std::vector<std::string>& args) {
  std::vector<std::string> command = args;
  if (!command.empty() && (command[0] == "--help" || command[0] == "-h")) {
    std::cout << kLaunchUsage;
    return kExitOk;
  }
  if (!command.empty() && command[0] == "--") command.erase(command.begin());
  if (command.empty()) {
    std::cerr << "bloomshard launch: no command to run\n" << kLaunchUsage;
    return kExitUsage;
  }
  std::vector<char*> argv;
  for (std::string& word : command) argv.push_back(word.data());
  argv.push_back(nullptr);

  // Blocked before the fork, taken with sigwaitinfo: no signal is lost
  // between the fork and the wait, and no handler runs.
  sigset_t waited;
  sigemptyset(&waited);
  for (const int signo : kStopSignals) sigaddset(&waited, signo);
  sigaddset(&waited, SIGCHLD);
  sigset_t original_mask;
  sigprocmask(SIG_BLOCK, &waited, &original_mask);

  std::cout.flush();
  std::cerr.flush();
  const pid_t wrapper_pid = getpid();
  const pid_t child = fork();
  if (child < 0) {
    std::cerr << "bloomshard launch: fork failed: " << std::strerror(errno) << '\n';
    return kExitFailure;
  }
  if (child == 0) exec_launcher(argv, original_mask, wrapper_pid);
  setpgid(child, child);  // both sides, whichever runs first (EACCES after exec is fine)

  int forwarded = 0;
  for (;;) {
    siginfo_t info{};
    const int signo = sigwaitinfo(&waited, &info);
    if (signo < 0) continue;  // EINTR (a stop/continue of this process)
    if (signo == SIGCHLD) {
      int status = 0;
      const pid_t done = waitpid(child, &status, WNOHANG);
      if (done != child) continue;  // a stop of the child, or another child
      const int code = exit_status_of(status);
      if (WIFSIGNALED(status)) {
        write_stderr_line("bloomshard launch: '" + command[0] + "' died of " +
                          signal_name(WTERMSIG(status)) + " -> exit " + std::to_string(code));
      } else if (forwarded != 0) {
        write_stderr_line("bloomshard launch: '" + command[0] + "' exited " + std::to_string(code) +
                          " after the stop request");
      }
      return code;
    }
    // Every stop signal becomes SIGUSR1 for the launcher: a second one is
    // harmless (the ranks keep the first), and never the abort path.
    write_stderr_line(std::string("bloomshard launch: ") + signal_name(signo) +
                      " received; asking the ranks to checkpoint and stop (SIGUSR1 to '" +
                      command[0] + "', pid " + std::to_string(child) + ")");
    kill(child, SIGUSR1);
    forwarded = signo;
  }
}

}  // namespace bloomshard::app
