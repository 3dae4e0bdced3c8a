// Files of a saved failing case and of a repro bundle, as a user may hand them over (or edit
// them): case.json read by readCase, repro.json read by loadRepro. Both take a folder, so the
// bytes are written into a private temporary folder first.
#include "engine/repro/Repro.h"
#include "engine/verify/CaseFiles.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace {

const std::filesystem::path& folder()
{
    static const std::filesystem::path dir = [] {
        auto d = std::filesystem::temp_directory_path() / ("kf-fuzz-case-" + std::to_string(::getpid()));
        std::filesystem::create_directories(d);
        return d;
    }();
    return dir;
}

void write(const std::filesystem::path& file, const std::uint8_t* data, std::size_t size)
{
    std::ofstream(file, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                  static_cast<std::streamsize>(size));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    write(folder() / "case.json", data, size);
    (void)kf::readCase(folder());
    write(folder() / "repro.json", data, size);
    (void)kf::loadRepro(folder());
    return 0;
}
