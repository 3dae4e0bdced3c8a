#include "widgets/task/JsonTextPane.h"

#include "engine/core/JsonReader.h"

#include <Qsci/qscilexerjson.h>
#include <Qsci/qsciscintilla.h>

#include <QFontDatabase>
#include <QLabel>
#include <QRegularExpression>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

namespace kf::ui {

namespace {
constexpr int kErrorMarker = 1;
}

JsonTextPane::JsonTextPane(QWidget* parent)
    : QWidget(parent), m_editor(new QsciScintilla(this)), m_error(new QLabel(this)), m_debounce(new QTimer(this))
{
    const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    auto* lexer = new QsciLexerJSON(m_editor);
    lexer->setDefaultFont(mono);
    lexer->setFont(mono);
    m_editor->setObjectName(QStringLiteral("jsonEditor"));
    m_editor->setLexer(lexer);
    m_editor->setUtf8(true);
    m_editor->setTabWidth(2);
    m_editor->setIndentationsUseTabs(false);
    m_editor->setAutoIndent(true);
    m_editor->setBraceMatching(QsciScintilla::SloppyBraceMatch);
    m_editor->setMarginType(0, QsciScintilla::NumberMargin);
    m_editor->setMarginWidth(0, QStringLiteral("00000"));
    m_editor->setMarginLineNumbers(0, true);
    m_editor->setMarginWidth(1, 12);
    m_editor->markerDefine(QsciScintilla::RightTriangle, kErrorMarker);
    m_editor->setMarkerBackgroundColor(QColor(0xb0, 0x00, 0x20), kErrorMarker);

    m_error->setObjectName(QStringLiteral("jsonSyntaxError"));
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error->setStyleSheet(QStringLiteral("color: #b00020; font-weight: 600;"));
    m_error->hide();

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_editor);
    layout->addWidget(m_error);

    m_debounce->setSingleShot(true);
    m_debounce->setInterval(kDebounceMs);
    connect(m_debounce, &QTimer::timeout, this, &JsonTextPane::parse);
    connect(m_editor, &QsciScintilla::textChanged, this, [this] {
        if (!m_loading)
            m_debounce->start();
    });
}

void JsonTextPane::showDocument(const nlohmann::json& doc)
{
    const QString text = QString::fromStdString(doc.dump(2)) + QLatin1Char('\n');
    m_debounce->stop();
    setSyntaxError({}, -1);
    if (text == m_editor->text())
        return;
    const int firstLine = m_editor->firstVisibleLine();
    int line = 0, column = 0;
    m_editor->getCursorPosition(&line, &column);
    m_loading = true;
    m_editor->setText(text);
    m_loading = false;
    m_editor->setCursorPosition(std::min(line, m_editor->lines() - 1), column);
    m_editor->setFirstVisibleLine(firstLine);
}

void JsonTextPane::showText(const QString& text)
{
    m_debounce->stop();
    if (text != m_editor->text()) {
        m_loading = true;
        m_editor->setText(text);
        m_loading = false;
    }
    parse();
}

void JsonTextPane::goTo(int line, int column)
{
    const int l = std::clamp(line, 1, std::max(1, m_editor->lines())) - 1;
    // Scintilla positions are bytes of the UTF-8 text, as the engine's columns are.
    const long lineStart = m_editor->SendScintilla(QsciScintilla::SCI_POSITIONFROMLINE, l);
    const long lineEnd = m_editor->SendScintilla(QsciScintilla::SCI_GETLINEENDPOSITION, l);
    const long pos = std::min(lineStart + std::max(column, 1) - 1, lineEnd);
    m_editor->SendScintilla(QsciScintilla::SCI_GOTOPOS, pos);
    m_editor->ensureLineVisible(l);
    m_editor->setFocus();
}

void JsonTextPane::flush()
{
    if (m_debounce->isActive()) {
        m_debounce->stop();
        parse();
    }
}

QString JsonTextPane::text() const
{
    return m_editor->text();
}

void JsonTextPane::parse()
{
    const std::string text = m_editor->text().toStdString();
    Result<nlohmann::json> r = json::parseText(text, "task.json");
    if (!r) {
        // The engine's sentence starts with "line L, column C:"; the line also gets a marker.
        const QString why = QString::fromStdString(r.error().why);
        static const QRegularExpression lineRe(QStringLiteral("^line (\\d+),"));
        const auto m = lineRe.match(why);
        setSyntaxError(why, m.hasMatch() ? m.captured(1).toInt() - 1 : -1);
        return;
    }
    setSyntaxError({}, -1);
    emit textParsed(*r);
}

void JsonTextPane::setSyntaxError(const QString& message, int line)
{
    m_editor->markerDeleteAll(kErrorMarker);
    if (line >= 0)
        m_editor->markerAdd(line, kErrorMarker);
    m_error->setText(message);
    m_error->setVisible(!message.isEmpty());
    if (message == m_syntaxError)
        return;
    m_syntaxError = message;
    emit syntaxErrorChanged(message);
}

} // namespace kf::ui
