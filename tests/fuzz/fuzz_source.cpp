// Candidate sources before NVRTC sees them: the encoding and size checks (sourceProblem) and the
// #include scanner a task compile runs over the source and the task's headers.
#include "engine/compile/Compiler.h"
#include "engine/compile/IncludeScope.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    (void)kf::sourceProblem(text, "fuzz.cu");
    for (const kf::IncludeDirective& d : kf::includeDirectives(text))
        if (d.line < 1 || d.column < 1 || (d.computed && !d.name.empty()))
            __builtin_trap();
    return 0;
}
