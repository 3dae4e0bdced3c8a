#pragma once
// Syntax colouring for PTX and for nvdisasm's SASS listings: opcodes, directives, registers,
// labels, numbers, comments, and nvdisasm's `//## File ..., line N` line-info comments, which
// get their own quiet style so the code stands out.

#include <Qsci/qscilexercustom.h>

class QPalette;

namespace kf::ui {

/// Lives on the GUI thread, owned by the editor it colours. One lexer serves both dialects:
/// they share enough syntax (`.directives`, `//` comments, `@` predicates) that the few
/// differences (`%r1` vs `R1`, `/*0040*/` offsets) are told apart token by token.
class AsmLexer : public QsciLexerCustom {
    Q_OBJECT

public:
    enum Style { Default = 0, Comment, LineInfo, Directive, Opcode, Register, Number, Label, String };

    explicit AsmLexer(QObject* parent = nullptr);

    const char* language() const override;  ///< "Assembly"
    QString description(int style) const override;
    void styleText(int start, int end) override;

    /// Colours for a dark (true) or light (false) background; `paper`/`text` are the defaults.
    void setDarkTheme(bool dark, const QColor& paper, const QColor& text);

private:
    void styleLine(const QByteArray& line);
};

} // namespace kf::ui
