// .npy files of a case folder or a repro bundle: the header of a file of this size.
#include "engine/verify/Npy.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    // The header is checked against the file's size without reading past the bytes given.
    (void)kf::parseNpyHeader(data, size, "fuzz.npy");
    return 0;
}
