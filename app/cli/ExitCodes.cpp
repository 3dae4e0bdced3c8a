#include "ExitCodes.h"

#include "engine/core/Result.h"

#include <iostream>

namespace kf::cli {

int fail(const Error& error, int exitCode)
{
    std::cerr << "kforge: " << error.message() << '\n';
    return exitCode;
}

} // namespace kf::cli
