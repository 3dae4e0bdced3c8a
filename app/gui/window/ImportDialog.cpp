#include "app/gui/window/ImportDialog.h"

#include "engine/agent/Import.h"
#include "widgets/common/SelectableLabel.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace kf::app {

namespace {

struct Outcome {
    bool ok = false;
    QString taskDir, message;
    QStringList notes;
    int tests = 0, benchmarks = 0;
};

QString qs(const std::string& s) { return QString::fromStdString(s); }

} // namespace

ImportDialog::ImportDialog(const QString& parentFolder, QWidget* parent) : QDialog(parent)
{
    setWindowTitle(tr("Import Problem"));
    m_format = new QComboBox(this);
    m_format->setObjectName(QStringLiteral("format"));
    m_format->addItem(tr("KernelBench problem file (Model, get_inputs, get_init_inputs)"));
    m_format->addItem(tr("GPU MODE problem folder (task.yml, reference.py)"));
    m_source = new QLineEdit(this);
    m_source->setObjectName(QStringLiteral("source"));
    auto* browseButton = new QPushButton(tr("Browse…"), this);
    auto* sourceRow = new QHBoxLayout;
    sourceRow->addWidget(m_source, 1);
    sourceRow->addWidget(browseButton);
    m_parent = new QLineEdit(parentFolder, this);
    m_parent->setObjectName(QStringLiteral("destination"));
    m_dtype = new QComboBox(this);
    m_dtype->setObjectName(QStringLiteral("dtype"));
    m_dtype->addItem(tr("as the problem writes it"), QString());
    for (const char* d : {"fp32", "fp16", "bf16"})
        m_dtype->addItem(QString::fromLatin1(d), QString::fromLatin1(d));
    m_python = new QLineEdit(this);
    m_python->setObjectName(QStringLiteral("python"));
    m_python->setPlaceholderText(qs(agent::importPython({})));

    auto* form = new QFormLayout;
    form->addRow(tr("&Format:"), m_format);
    auto* problemLabel = new QLabel(tr("&Problem:"), this);
    problemLabel->setBuddy(m_source);
    form->addRow(problemLabel, sourceRow);
    form->addRow(tr("Create the task &in:"), m_parent);
    form->addRow(tr("&Dtype:"), m_dtype);
    form->addRow(tr("P&ython with torch:"), m_python);

    auto* warning = new QLabel(tr("Importing runs the problem's Python code (its model and input generator) to trace "
                                  "its reference. Import only problems you would run."),
                               this);
    warning->setWordWrap(true);
    m_status = ui::selectableLabel(QStringLiteral("status"), this);
    m_busyBar = new QProgressBar(this);
    m_busyBar->setRange(0, 0);
    m_busyBar->setVisible(false);
    m_notes = new QPlainTextEdit(this);
    m_notes->setObjectName(QStringLiteral("notes"));
    m_notes->setReadOnly(true);
    m_notes->setVisible(false);

    auto* buttons = new QDialogButtonBox(this);
    m_import = buttons->addButton(tr("&Import"), QDialogButtonBox::AcceptRole);
    m_cancel = buttons->addButton(tr("&Cancel Import"), QDialogButtonBox::ActionRole);
    m_close = buttons->addButton(QDialogButtonBox::Close);
    m_import->setDefault(true);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(warning);
    layout->addWidget(m_busyBar);
    layout->addWidget(m_status);
    layout->addWidget(m_notes, 1);
    layout->addWidget(buttons);
    resize(720, 420);

    connect(browseButton, &QPushButton::clicked, this, &ImportDialog::browse);
    connect(m_import, &QPushButton::clicked, this, &ImportDialog::start);
    connect(m_cancel, &QPushButton::clicked, this, [this] {
        if (m_stop)
            m_stop->store(true);
        m_status->setText(tr("Cancelling…"));
    });
    connect(m_close, &QPushButton::clicked, this, &QDialog::reject);
    connect(m_format, &QComboBox::currentIndexChanged, this, &ImportDialog::updateState);
    connect(m_source, &QLineEdit::textChanged, this, &ImportDialog::updateState);
    connect(m_parent, &QLineEdit::textChanged, this, &ImportDialog::updateState);
    updateState();
}

ImportDialog::~ImportDialog()
{
    if (m_stop)
        m_stop->store(true);   // the worker notices within 200 ms; its watcher is our child
}

void ImportDialog::reject()
{
    if (m_busy) {
        if (m_stop)
            m_stop->store(true);
        m_status->setText(tr("Cancelling…"));
        return;
    }
    QDialog::reject();
}

void ImportDialog::setFormat(Format f)
{
    m_format->setCurrentIndex(int(f));
}

void ImportDialog::browse()
{
    const QString start = m_source->text().isEmpty() ? m_parent->text() : QFileInfo(m_source->text()).absolutePath();
    const QString picked = m_format->currentIndex() == KernelBench
                               ? QFileDialog::getOpenFileName(this, tr("KernelBench problem"), start,
                                                              tr("Python files (*.py);;All files (*)"))
                               : QFileDialog::getExistingDirectory(this, tr("GPU MODE problem folder"), start);
    if (!picked.isEmpty())
        m_source->setText(picked);
}

void ImportDialog::updateState()
{
    const bool kb = m_format->currentIndex() == KernelBench;
    m_dtype->setEnabled(kb && !m_busy);
    const QFileInfo src(m_source->text().trimmed());
    const bool sourceOk = kb ? src.isFile() : src.isDir();
    m_import->setEnabled(!m_busy && sourceOk && QFileInfo(m_parent->text().trimmed()).isDir());
    m_cancel->setVisible(m_busy);
    m_close->setEnabled(!m_busy);
    m_busyBar->setVisible(m_busy);
    for (QWidget* w : {static_cast<QWidget*>(m_format), static_cast<QWidget*>(m_source), static_cast<QWidget*>(m_parent),
                       static_cast<QWidget*>(m_python)})
        w->setEnabled(!m_busy);
}

void ImportDialog::start()
{
    if (m_busy)
        return;
    m_busy = true;
    m_stop = std::make_shared<std::atomic_bool>(false);
    m_notes->clear();
    m_notes->setVisible(false);
    m_status->setText(tr("Importing %1 (running its Python code)…").arg(QFileInfo(m_source->text()).fileName()));
    updateState();
    const bool kb = m_format->currentIndex() == KernelBench;
    agent::ImportOptions o;
    o.parent = m_parent->text().trimmed().toStdString();
    o.dtype = kb ? m_dtype->currentData().toString().toStdString() : std::string();
    o.python = m_python->text().trimmed().toStdString();
    auto stop = m_stop;
    o.stop = [stop] { return stop->load(); };
    const std::string source = m_source->text().trimmed().toStdString();
    auto* watcher = new QFutureWatcher<Outcome>(this);
    connect(watcher, &QFutureWatcher<Outcome>::finished, this, [this, watcher] {
        const Outcome o = watcher->result();
        watcher->deleteLater();
        m_busy = false;
        updateState();
        if (!o.ok) {
            m_status->setText(o.message);
            emit failed(o.message);
            return;
        }
        m_status->setText(tr("Imported into %1: %2 test shape(s), %3 benchmark shape(s). No candidate yet: copy the "
                             "agent prompt, generate one from the reference, or add your own.")
                              .arg(o.taskDir)
                              .arg(o.tests)
                              .arg(o.benchmarks));
        if (!o.notes.isEmpty()) {
            m_notes->setPlainText(QStringLiteral("• ") + o.notes.join(QStringLiteral("\n• ")));
            m_notes->setVisible(true);
        }
        emit imported(o.taskDir, o.notes);
    });
    watcher->setFuture(QtConcurrent::run([kb, source, o]() -> Outcome {
        Outcome out;
        auto r = kb ? agent::importKernelBench(source, o) : agent::importGpuMode(source, o);
        if (!r) {
            out.message = qs(r.error().message());
            return out;
        }
        out.ok = true;
        out.taskDir = qs(r->taskDir.string());
        out.tests = r->testShapes;
        out.benchmarks = r->benchmarkShapes;
        for (const std::string& n : r->notes)
            out.notes << qs(n);
        return out;
    }));
}

} // namespace kf::app
