#include "app/round/paragraph_recut_file.hpp"

#include <stdexcept>

#include "app/round/retracted_line_cut.hpp"

namespace bloomshard::app {

io::InputFile output_as_input(const io::InputFile& input, const std::filesystem::path& output) {
  io::InputFile written = input;
  written.absolute_path = output;
  written.size = std::filesystem::file_size(output);
  return written;
}

ParagraphRecut write_recut_temp(const std::filesystem::path& output, io::Compression compression,
                                const io::OutputOptions& options, bool durable,
                                const std::function<ParagraphRecut(io::OutputWriter&)>& write) {
  const std::filesystem::path tmp = cut_output_temp_path(output);
  io::OutputWriter writer = io::OutputWriter::create(tmp, compression, options);
  ParagraphRecut done;
  try {
    done = write(writer);
    if (durable) writer.flush_and_sync();
    writer.close();
  } catch (...) {
    std::filesystem::remove(tmp);
    throw;
  }
  done.length = std::filesystem::file_size(tmp);
  return done;
}

void fail_retraction(const std::filesystem::path& output, const io::InputFile& input,
                     std::uint64_t offset, const std::string& why) {
  throw std::runtime_error("output '" + output.string() + "' of input '" + input.relative_path +
                           "': the retracted paragraph at byte " + std::to_string(offset) + " " +
                           why + ": it does not match this run");
}

}  // namespace bloomshard::app
