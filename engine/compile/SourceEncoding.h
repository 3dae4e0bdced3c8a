#pragma once
// What a source file is encoded as, decided from its bytes alone: UTF-8 (with or without a
// byte-order mark), or one of the things that is not UTF-8 (a UTF-16/32 byte-order mark, a NUL
// byte, a byte that no UTF-8 sequence allows). NVRTC reads UTF-8 only, and the workbench must
// not decode anything else as UTF-8 and save the damaged text over the file, so both ask here:
// sourceProblem (engine/compile/Compiler.h) for every compile, the editor when it opens a file.

#include <cstddef>
#include <string>
#include <string_view>

namespace kf {

enum class SourceEncoding {
    Utf8,         ///< valid UTF-8 (ASCII and the empty file included)
    Utf8Bom,      ///< valid UTF-8 after a UTF-8 byte-order mark (EF BB BF), which a save must keep
    Utf16Le,      ///< starts with FF FE ("Unicode" in Windows editors)
    Utf16Be,      ///< starts with FE FF
    Utf32Le,      ///< starts with FF FE 00 00
    Utf32Be,      ///< starts with 00 00 FE FF
    NulByte,      ///< holds a NUL byte (a binary file, or UTF-16 without a byte-order mark)
    InvalidUtf8,  ///< a byte no UTF-8 sequence allows there (Latin-1 or Windows-1252 text, say)
};

struct EncodingCheck {
    SourceEncoding encoding = SourceEncoding::Utf8;
    std::size_t offset = 0;   ///< the byte at fault (NulByte, InvalidUtf8); 0 otherwise
    int line = 1;             ///< 1-based line of `offset`
    int column = 1;           ///< 1-based column of `offset`, in bytes (as NVRTC counts)
    unsigned char byte = 0;   ///< the byte at `offset` (InvalidUtf8)

    /// UTF-8, with or without a byte-order mark: the editor may edit it and save it as it was.
    bool isUtf8() const { return encoding == SourceEncoding::Utf8 || encoding == SourceEncoding::Utf8Bom; }
    /// Bytes of the byte-order mark the file starts with (3 for UTF-8, 2 or 4 for UTF-16/32), or 0.
    std::size_t bomSize() const;
};

/// Checks `bytes` in one pass; never reads past them. Strict UTF-8: overlong forms, surrogates,
/// code points above U+10FFFF and a sequence cut off by the end of the file are invalid.
EncodingCheck checkSourceEncoding(std::string_view bytes);

/// "UTF-8", "UTF-8 with a byte-order mark", "UTF-16 LE", ... for messages.
std::string_view encodingName(SourceEncoding encoding);

/// What is wrong, as the rest of a sentence that starts with the file's name (or "the file"):
/// "is saved as UTF-16 LE, not UTF-8", "holds a NUL byte at line 2, column 7 (a binary file, or
/// UTF-16 without a byte-order mark?)", "is not UTF-8: the byte 0xE9 at line 3, column 12 is
/// not part of a UTF-8 character (Latin-1 or Windows-1252 text?)". Empty for UTF-8.
std::string encodingProblem(const EncodingCheck& check);

} // namespace kf
