// The files of the paragraph end pass's two writers (retracted_paragraphs.hpp):
// the output read back beside its input, the re-cut written into
// cut_output_temp_path(output) (the caller renames it over the output,
// retracted_copies.cpp), and the error that names a retraction the files do
// not match. Shared so that both writers sync, clean up and report alike.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "app/round/retracted_paragraphs.hpp"
#include "io/output/output_writer.hpp"
#include "io/records/input_file.hpp"

namespace bloomshard::app {

/// `output` described as a file of `input`'s kind (format, compression),
/// so that a RecordReader reads it as it reads the input.
[[nodiscard]] io::InputFile output_as_input(const io::InputFile& input,
                                            const std::filesystem::path& output);

/// Creates cut_output_temp_path(output) in `compression` at `options`'
/// level, lets `write` fill it, fsyncs it when `durable` and closes it;
/// returns write's figures with `length` set to the temporary file's
/// length. When `write`, the sync or the close throws, the temporary file
/// is removed and the exception passes on; the output is never touched.
ParagraphRecut write_recut_temp(const std::filesystem::path& output, io::Compression compression,
                                const io::OutputOptions& options, bool durable,
                                const std::function<ParagraphRecut(io::OutputWriter&)>& write);

/// Throws std::runtime_error: the retracted paragraph at input byte
/// `offset` `why` (e.g. "was cut already"), naming the output and the
/// input: the retraction does not match this run's files.
[[noreturn]] void fail_retraction(const std::filesystem::path& output, const io::InputFile& input,
                                  std::uint64_t offset, const std::string& why);

}  // namespace bloomshard::app
