#pragma once
// Syntax colouring for CUDA C++: QsciLexerCPP with CUDA qualifiers added to the keywords and the
// built-in variables, intrinsics, math functions and vector types as a second, distinct set.

#include <Qsci/qscilexercpp.h>

#include <QByteArray>

class QPalette;

namespace kf::ui {

/// Lives on the GUI thread, owned by its parent (normally the KernelEditor using it).
/// Word lists come from the embedded resources/lexer/*.txt files.
class CudaLexer : public QsciLexerCPP {
    Q_OBJECT

public:
    explicit CudaLexer(QObject* parent = nullptr);

    const char* language() const override;      ///< "CUDA"
    /// Set 1: C++ keywords + CUDA qualifiers; set 2: builtins, intrinsics and CUDA types.
    const char* keywords(int set) const override;
    QString description(int style) const override;

    /// Picks colours that read well on a dark (true) or light (false) background and uses
    /// `paper`/`text` (normally the palette's Base and Text) as the default background and
    /// foreground. The editor calls it again when the application palette changes.
    void setDarkTheme(bool dark, const QColor& paper = QColor(), const QColor& text = QColor());
    bool isDarkTheme() const { return m_dark; }

    /// True when a palette's editing background is dark.
    static bool isDarkPalette(const QPalette& palette);

private:
    QByteArray m_keywords;
    QByteArray m_builtins;
    bool m_dark = false;
};

} // namespace kf::ui
