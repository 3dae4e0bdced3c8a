#include "widgets/assembly/AssemblyView.h"

#include "engine/analysis/LineInfo.h"
#include "widgets/assembly/AsmEditor.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QTabWidget>
#include <QVBoxLayout>

#include <map>

namespace kf::ui {

namespace {

constexpr int kPtxLineRole = Qt::UserRole;
constexpr int kSassLineRole = Qt::UserRole + 1;

QWidget* tabPage(QLabel* note, AsmEditor* editor)
{
    auto* page = new QWidget;
    auto* layout = new QVBoxLayout(page);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    note->setWordWrap(true);
    note->setTextInteractionFlags(Qt::TextSelectableByMouse);
    note->setContentsMargins(8, 6, 8, 6);
    note->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    note->setAutoFillBackground(true);
    note->setBackgroundRole(QPalette::AlternateBase);
    note->hide();
    layout->addWidget(note);
    layout->addWidget(editor, 1);
    return page;
}

} // namespace

AssemblyView::AssemblyView(QWidget* parent)
    : QWidget(parent), m_kernels(new QComboBox), m_tabs(new QTabWidget), m_ptx(new AsmEditor),
      m_sass(new AsmEditor), m_ptxNote(new QLabel), m_sassNote(new QLabel)
{
    m_kernels->setObjectName(QStringLiteral("kernelSelector"));
    m_kernels->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_kernels->setMinimumContentsLength(24);
    m_kernels->setToolTip(tr("Jump to a kernel's code"));
    m_ptx->setObjectName(QStringLiteral("ptxListing"));
    m_sass->setObjectName(QStringLiteral("sassListing"));
    m_ptxNote->setObjectName(QStringLiteral("ptxNote"));
    m_sassNote->setObjectName(QStringLiteral("sassNote"));

    auto* top = new QHBoxLayout;
    top->setContentsMargins(4, 4, 4, 4);
    auto* label = new QLabel(tr("&Kernel:"));
    label->setBuddy(m_kernels);
    top->addWidget(label);
    top->addWidget(m_kernels, 1);

    m_tabs->setDocumentMode(true);
    m_tabs->addTab(tabPage(m_ptxNote, m_ptx), tr("PTX"));
    m_tabs->addTab(tabPage(m_sassNote, m_sass), tr("SASS"));

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addLayout(top);
    layout->addWidget(m_tabs, 1);

    connect(m_kernels, &QComboBox::activated, this, &AssemblyView::selectKernel);
    connect(m_ptx, &AsmEditor::sourceLinesSelected, this, &AssemblyView::onAsmSelection);
    connect(m_sass, &AsmEditor::sourceLinesSelected, this, &AssemblyView::onAsmSelection);
    // A tab marked while hidden was not scrolled; bring its marks into view when it shows.
    connect(m_tabs, &QTabWidget::currentChanged, this, [this] { scrollToMarks(editor(currentTab())); });

    clear(tr("Nothing built yet."));
}

void AssemblyView::setCompileResult(const kf::CompileResult& result, const QString& sourceFileName)
{
    if (result.ptx.empty()) {
        clear(result.success ? tr("The build produced no PTX.") : tr("No assembly: the build has errors."));
        return;
    }
    const std::string file = sourceFileName.toStdString();
    m_ptx->setAssembly(QString::fromStdString(result.ptx), kf::mapPtxLines(result.ptx, file));
    m_sass->setAssembly(QString::fromStdString(result.sass), kf::mapSassLines(result.sass, file));

    setNote(Kind::Ptx, m_ptx->lineMap().hasLineInfo()
                           ? QString()
                           : tr("This PTX carries no line info for %1 (build with line info on): "
                                "source lines cannot be matched.").arg(sourceFileName));
    if (result.sass.empty()) {
        QString why = QString::fromStdString(result.sassUnavailableReason);
        if (why.isEmpty())
            why = tr("SASS unavailable: the build gave no reason.");
        else if (!why.startsWith(QLatin1String("SASS unavailable")))
            why = tr("SASS unavailable: %1").arg(why);
        setNote(Kind::Sass, why);
    } else {
        setNote(Kind::Sass, m_sass->lineMap().hasLineInfo()
                                ? QString()
                                : tr("This SASS listing has no line info (cuobjdump prints none; nvdisasm "
                                     "does): source lines cannot be matched."));
    }
    // With nothing to list, the note is the whole page.
    m_ptx->setVisible(true);
    m_sass->setVisible(!result.sass.empty());

    std::map<std::string, std::string> demangled;
    for (const auto& k : result.kernels)
        demangled[k.name] = k.demangled;
    std::map<std::string, int> sassLine;
    for (const auto& f : kf::sassFunctions(result.sass))
        sassLine[f.name] = f.line;
    m_kernels->clear();
    for (const auto& entry : kf::ptxEntries(result.ptx)) {
        auto it = demangled.find(entry.name);
        const std::string shown = it != demangled.end() && !it->second.empty() ? it->second : entry.name;
        m_kernels->addItem(QString::fromStdString(shown));
        const int i = m_kernels->count() - 1;
        m_kernels->setItemData(i, entry.line, kPtxLineRole);
        m_kernels->setItemData(i, sassLine.count(entry.name) ? sassLine[entry.name] : 0, kSassLineRole);
        m_kernels->setItemData(i, QString::fromStdString(entry.name), Qt::ToolTipRole);
    }
    m_kernels->setEnabled(m_kernels->count() > 0);

    // Keep the user's place in the source: re-mark what was marked in the previous build.
    const QList<int> keep = m_sourceLines;
    m_sourceLines.clear();
    if (keep.size() == 1)
        highlightSourceLine(keep.first());
    else if (m_kernels->count() > 0)
        selectKernel(0);
}

void AssemblyView::clear(const QString& why)
{
    m_ptx->setAssembly(QString(), {});
    m_sass->setAssembly(QString(), {});
    m_ptx->setVisible(false);
    m_sass->setVisible(false);
    m_kernels->clear();
    m_kernels->setEnabled(false);
    setNote(Kind::Ptx, why);
    setNote(Kind::Sass, why);
}

void AssemblyView::highlightSourceLine(int sourceLine)
{
    m_sourceLines.clear();
    if (sourceLine > 0)
        m_sourceLines << sourceLine;
    m_ptx->markSourceLines(m_sourceLines);
    m_sass->markSourceLines(m_sourceLines);
    scrollToMarks(editor(currentTab()));
}

QList<int> AssemblyView::highlightedAsmLines() const { return editor(currentTab())->markedLines(); }

void AssemblyView::showTab(Kind kind) { m_tabs->setCurrentIndex(kind == Kind::Ptx ? 0 : 1); }

AssemblyView::Kind AssemblyView::currentTab() const { return m_tabs->currentIndex() == 1 ? Kind::Sass : Kind::Ptx; }

QString AssemblyView::note(Kind kind) const
{
    const QLabel* l = noteLabel(kind);
    return l->isHidden() ? QString() : l->text();
}

QStringList AssemblyView::kernelNames() const
{
    QStringList out;
    for (int i = 0; i < m_kernels->count(); ++i)
        out << m_kernels->itemText(i);
    return out;
}

void AssemblyView::selectKernel(int index)
{
    if (index < 0 || index >= m_kernels->count())
        return;
    m_kernels->setCurrentIndex(index);
    m_ptx->scrollToLine(m_kernels->itemData(index, kPtxLineRole).toInt());
    m_sass->scrollToLine(m_kernels->itemData(index, kSassLineRole).toInt());
}

AsmEditor* AssemblyView::editor(Kind kind) const { return kind == Kind::Ptx ? m_ptx : m_sass; }

QLabel* AssemblyView::noteLabel(Kind kind) const { return kind == Kind::Ptx ? m_ptxNote : m_sassNote; }

void AssemblyView::setNote(Kind kind, const QString& text)
{
    QLabel* l = noteLabel(kind);
    l->setText(text);
    l->setVisible(!text.isEmpty());
}

void AssemblyView::onAsmSelection(const QList<int>& sourceLines)
{
    // Show the instruction's siblings (everything else its line became) without scrolling:
    // the user is looking at this spot.
    m_sourceLines = sourceLines;
    m_ptx->markSourceLines(sourceLines);
    m_sass->markSourceLines(sourceLines);
    emit sourceLinesSelected(sourceLines);
}

void AssemblyView::scrollToMarks(AsmEditor* e)
{
    const QList<int> marks = e->markedLines();
    if (marks.isEmpty())
        return;
    const int first = e->firstVisibleLine() + 1;
    const int onScreen = static_cast<int>(e->SendScintilla(QsciScintillaBase::SCI_LINESONSCREEN));
    for (int l : marks)
        if (l >= first && l < first + onScreen)
            return;
    e->scrollToLine(marks.first());
}

} // namespace kf::ui
