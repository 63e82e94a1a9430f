#include "app/cli/usage_text.hpp"

#include <cstdio>

#include "app/cli/exit_codes.hpp"

namespace bloomshard::app {
namespace {

struct CommandSummary {
  std::string_view name;
  std::string_view summary;
};

constexpr CommandSummary kCommands[] = {
    {"dedup", "remove records whose key was seen before (run under mpirun/srun)"},
    {"query", "which input records' keys a saved --state holds (read only; mpirun/srun)"},
    {"merge", "the union of compatible finished states into a new one (mpirun/srun)"},
    {"launch",
     "run `mpiexec ... bloomshard dedup ...` so that Ctrl-C/SIGTERM checkpoint and the ranks' "
     "exit status (75) reaches the caller"},
    {"plan", "a dedup job's memory, disk, checkpoint and exchange costs before it runs"},
    {"synth", "write a deterministic synthetic corpus with a known duplicate rate"},
    {"info", "show what a --state dir's newest checkpoint holds"},
    {"verify", "recompute every checksum of a --state dir's checkpoint"},
    {"bench filter", "measure the tier-1 Bloom kernel against the memory floor"},
    {"self-check", "run the sequential core's self-check (no MPI)"},
    {"version", "print the version and the saved-format identifiers"},
};

struct Example {
  std::string_view what;
  std::string_view command;
};

constexpr Example kExamples[] = {
    {"a synthetic corpus of 1M records, 10% of them duplicates",
     "bloomshard synth --records 1000000 --dup-rate 0.1 --out corpus"},
    {"its memory, disk and checkpoint costs on 8 ranks, before running",
     "bloomshard plan --records 1000000 --ranks 8"},
    {"deduplicate on 8 ranks; killed or requeued, the same command resumes",
     "mpiexec -n 8 bloomshard dedup --input corpus --output clean --state clean.state"},
    {"the same job from an INI job file (jobs/; the command line wins)",
     "mpiexec -n 8 bloomshard dedup --config jobs/smoke.ini"},
    {"what the state holds, and every checksum of it",
     "bloomshard info --state clean.state && bloomshard verify --state clean.state"},
    {"which records of a new batch the state already holds",
     "mpiexec -n 4 bloomshard query --state clean.state --input new --output seen"},
    {"one state from two finished ones",
     "mpiexec -n 4 bloomshard merge --from a.state --from b.state --into ab.state"},
};

}  // namespace

std::vector<std::string> command_names() {
  std::vector<std::string> names;
  for (const CommandSummary& c : kCommands) {
    names.emplace_back(c.name.substr(0, c.name.find(' ')));
  }
  return names;
}

std::string exit_codes_text() {
  std::string text;
  for (const ExitCodeMeaning& e : kExitCodeTable) {
    char code[16];
    std::snprintf(code, sizeof code, "  %-4d", e.code);
    text += code;
    text += e.meaning;
    text += '\n';
  }
  return text;
}

std::string examples_text() {
  std::string text;
  for (const Example& e : kExamples) {
    text += "  # ";
    text += e.what;
    text += "\n  ";
    text += e.command;
    text += '\n';
  }
  return text;
}

std::string top_level_usage() {
  std::string text = "usage: bloomshard <command> [options]\n\ncommands:\n";
  for (const CommandSummary& c : kCommands) {
    char line[160];
    std::snprintf(line, sizeof line, "  %-13.*s%.*s\n", static_cast<int>(c.name.size()),
                  c.name.data(), static_cast<int>(c.summary.size()), c.summary.data());
    text += line;
  }
  text +=
      "\n`bloomshard <command> --help` shows the options of a command;\n"
      "`bloomshard help exit-codes` (or `examples`) prints one list below alone.\n\n"
      "exit codes:\n";
  text += exit_codes_text();
  text += "\nexamples:\n";
  text += examples_text();
  return text;
}

}  // namespace bloomshard::app
