#include "engine/core/Result.h"

namespace kf {

std::string Error::message() const
{
    std::string s;
    if (!file.empty())
        s += file + ": ";
    if (!pointer.empty())
        s += "at " + pointer + ": ";
    s += why.empty() ? what + " failed" : why;
    if (!hint.empty())
        s += " (" + hint + ")";
    return s;
}

} // namespace kf
