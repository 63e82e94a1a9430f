// Strict option parsing shared by every command: whole option names only
// (Boost's default accepts `--out` for `--output`), no stray positional
// argument (Boost drops them silently when no positional is declared), and
// INI job files whose every key is an option. A refusal names the token,
// the file and line where there is one, and the option probably meant.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace bloomshard::app {

/// A command line or job file that names no option, or a stray argument.
/// Derives from Boost's error so every command's usage handler (exit 2)
/// catches it with the library's own errors.
class OptionUsageError : public boost::program_options::error {
 public:
  using boost::program_options::error::error;
};

/// " (did you mean PREFIXa?)" or " (did you mean PREFIXa or PREFIXb?)" for
/// the `candidates` a mistyped `name` was probably meant to be: those that
/// start with it (an abbreviation; three at most), else those within edit
/// distance 2 (1 for names of up to 4 characters). Empty when none is near.
[[nodiscard]] std::string did_you_mean(std::string_view name,
                                       const std::vector<std::string>& candidates,
                                       std::string_view prefix);

/// did_you_mean over the long options of `desc`, for a name given with or
/// without its leading dashes (and "=value").
[[nodiscard]] std::string option_suggestion(
    std::string_view name, const boost::program_options::options_description& desc);

/// Parses `args` against `desc` with exact names only and no positional
/// argument. Throws OptionUsageError for an unknown or abbreviated option
/// ("unrecognised option '--out' (did you mean --output?)") and for a stray
/// argument ("unexpected argument 'extra'"); other Boost errors pass.
[[nodiscard]] boost::program_options::parsed_options parse_exact_command_line(
    const std::vector<std::string>& args, const boost::program_options::options_description& desc);

/// Parses the INI job file at `path` against `desc`. Every key must be an
/// option of `desc` other than those in `not_in_file`; throws
/// OptionUsageError naming the file and line otherwise ("job file 'j.ini'
/// line 7: unknown option 'fpp' (did you mean --fpr?)"), and when the file
/// cannot be opened.
[[nodiscard]] boost::program_options::parsed_options parse_job_file(
    const std::string& path, const boost::program_options::options_description& desc,
    const std::vector<std::string>& not_in_file);

}  // namespace bloomshard::app
