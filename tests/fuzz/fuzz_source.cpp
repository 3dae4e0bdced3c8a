// Candidate sources before NVRTC sees them: the encoding and size checks (sourceProblem,
// sourceWarning and the encoding check the editor shares, checkSourceEncoding) and the #include
// scanner a task compile runs over the source and the task's headers.
#include "engine/compile/Compiler.h"
#include "engine/compile/IncludeScope.h"
#include "engine/compile/SourceEncoding.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    (void)kf::sourceProblem(text, "fuzz.cu");
    (void)kf::sourceWarning(text, "fuzz.cu");
    const kf::EncodingCheck encoding = kf::checkSourceEncoding(text);
    // A fault names a byte inside the input, at a line and column that exist; a file that is
    // UTF-8 without its byte-order mark stays UTF-8 with the mark put in front.
    if (encoding.encoding == kf::SourceEncoding::NulByte || encoding.encoding == kf::SourceEncoding::InvalidUtf8) {
        if (encoding.offset >= size || encoding.line < 1 || encoding.column < 1 ||
            static_cast<unsigned char>(text[encoding.offset]) != encoding.byte || kf::encodingProblem(encoding).empty())
            __builtin_trap();
    } else if (encoding.bomSize() > size) {
        __builtin_trap();
    }
    if (encoding.encoding == kf::SourceEncoding::Utf8 && size < 4096) {
        std::string marked = "\xEF\xBB\xBF" + std::string(text);
        if (kf::checkSourceEncoding(marked).encoding != kf::SourceEncoding::Utf8Bom)
            __builtin_trap();
    }
    for (const kf::IncludeDirective& d : kf::includeDirectives(text))
        if (d.line < 1 || d.column < 1 || (d.computed && !d.name.empty()))
            __builtin_trap();
    return 0;
}
