#include "engine/task/CompileOptions.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <initializer_list>
#include <set>

namespace kf {

// NVRTC options a task.json may carry: each only shapes the code generated. Anything that names
// a file (-I, --pre-include, --time=FILE, --fdevice-time-trace), picks the architecture (the task
// does) or changes the kind of output (-rdc, -dlto, --optix-ir) is refused, so a task written by
// somebody else cannot make the compiler read or write outside it (docs/task-schema.md).
bool isAllowedTaskOption(const std::string& o)
{
    static const std::set<std::string> exact = {
        "-use_fast_math", "--use_fast_math", "-lineinfo", "--generate-line-info", "-G", "--device-debug",
        "-restrict", "--restrict", "-extra-device-vectorization", "--extra-device-vectorization",
        "-default-device", "--device-as-default-execution-space", "-w", "--disable-warnings",
        "-Xptxas=-v", "-Xptxas=--warn-on-spills", "-Xptxas=--warn-on-local-memory-usage",
        "--ptxas-options=-v", "--ptxas-options=--warn-on-spills", "--ptxas-options=--warn-on-local-memory-usage"};
    if (exact.count(o))
        return true;
    auto valueAfter = [&](std::initializer_list<const char*> prefixes, std::string& value) {
        for (const char* p : prefixes)
            if (o.rfind(p, 0) == 0) {
                value = o.substr(std::strlen(p));
                return true;
            }
        return false;
    };
    auto digits = [](const std::string& v) {
        return !v.empty() && v.size() <= 4 && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    auto boolean = [](const std::string& v) { return v == "true" || v == "false"; };
    auto macro = [](const std::string& v) {
        // NAME or NAME=VALUE, NAME an identifier; the value has no spaces (one argument).
        const std::size_t eq = v.find('=');
        const std::string name = v.substr(0, eq);
        return !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
               std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }) &&
               v.find_first_of(" \t\n") == std::string::npos;
    };
    std::string v;
    if (valueAfter({"-maxrregcount=", "--maxrregcount="}, v))
        return digits(v);
    if (valueAfter({"-ftz=", "--ftz=", "-prec-sqrt=", "--prec-sqrt=", "-prec-div=", "--prec-div=", "-fmad=", "--fmad="}, v))
        return boolean(v);
    if (valueAfter({"-dopt=", "--dopt="}, v))
        return v == "on" || v == "off";
    if (valueAfter({"-Xptxas=-O", "--ptxas-options=-O"}, v))
        return v.size() == 1 && v[0] >= '0' && v[0] <= '3';
    if (valueAfter({"-D", "--define-macro="}, v) || valueAfter({"-U", "--undefine-macro="}, v))
        return macro(v);
    if (valueAfter({"--diag-suppress=", "-diag-suppress=", "--diag-error=", "-diag-error=", "--diag-warn=", "-diag-warn="}, v))
        return !v.empty() && std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == ','; });
    return false;
}

std::string allowedTaskOptionsText()
{
    return "-maxrregcount=N, --use_fast_math, -ftz=, -prec-div=, -prec-sqrt=, -fmad= (true|false), -lineinfo, -G, "
           "-restrict, --extra-device-vectorization, -default-device, -dopt=on|off, -DNAME[=VALUE], -UNAME, "
           "--diag-suppress=N, --diag-error=N, --diag-warn=N, -w, -Xptxas=-O0..3, -Xptxas=-v";
}

} // namespace kf
