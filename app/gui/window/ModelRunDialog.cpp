#include "app/gui/window/ModelRunDialog.h"

#include "engine/cast/CastPackage.h"
#include "engine/cast/ModelRuns.h"
#include "engine/core/JsonReader.h"
#include "widgets/cast/ModelRunView.h"
#include "widgets/common/StatusColors.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <QVBoxLayout>
#include <QtConcurrent>

namespace kf::app {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

/// $KF_KFORGE, else kforge beside the workbench (installed) or where a build tree puts it, else on PATH.
QString defaultKforge()
{
    if (const QString env = qEnvironmentVariable("KF_KFORGE"); !env.isEmpty())
        return env;
    const QDir here(QCoreApplication::applicationDirPath());
    for (const QString& rel : {QStringLiteral("kforge"), QStringLiteral("../cli/kforge"), QStringLiteral("../../app/cli/kforge")}) {
        const QFileInfo f(here.filePath(rel));
        if (f.isExecutable())
            return f.canonicalFilePath();
    }
    const QString onPath = QStandardPaths::findExecutable(QStringLiteral("kforge"));
    return onPath.isEmpty() ? QStringLiteral("kforge") : onPath;
}

} // namespace

struct ModelRunDialog::Opened {
    QString file, error;
    struct Run {
        nlohmann::json evidence;            ///< checked (openPackage)
        kf::cast::ModelRunHeadline headline;
    };
    struct Model {
        QString name, format;
        std::vector<Run> runs;              ///< recorded model-level evidence, in order
    };
    std::vector<Model> models;
};

ModelRunDialog::ModelRunDialog(QWidget* parent) : QDialog(parent), m_kforge(defaultKforge())
{
    setWindowTitle(tr("Run Model from .cast Package"));
    setModal(false);
    auto* layout = new QVBoxLayout(this);
    auto* form = new QFormLayout;
    auto* fileRow = new QHBoxLayout;
    m_file = new QLineEdit(this);
    m_file->setPlaceholderText(tr("a .cast package exported with a model (kforge cast export … --model)"));
    auto* browse = new QPushButton(tr("Browse…"), this);
    fileRow->addWidget(m_file, 1);
    fileRow->addWidget(browse);
    form->addRow(tr("Package"), fileRow);
    m_models = new QComboBox(this);
    form->addRow(tr("Model"), m_models);
    m_recorded = new QComboBox(this);
    form->addRow(tr("Recorded runs"), m_recorded);

    form->addRow(tr("Options"), buildOptions());
    layout->addLayout(form);

    layout->addLayout(buildRunRow());
    m_view = new kf::ui::ModelRunView(this);
    layout->addWidget(m_view, 1);

    connect(browse, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Open .cast package"), m_file->text(),
                                                       tr("KernelForge packages (*.cast)"));
        if (!f.isEmpty())
            openPackage(f);
    });
    connect(m_file, &QLineEdit::editingFinished, this, [this] {
        if (m_file->text().trimmed() != m_package)
            openPackage(m_file->text().trimmed());
    });
    connect(m_models, &QComboBox::currentIndexChanged, this, [this] {
        if (m_opened)
            showOpened(m_opened);
    });
    connect(m_recorded, &QComboBox::activated, this, &ModelRunDialog::showRecorded);
    connect(m_runButton, &QPushButton::clicked, this, &ModelRunDialog::run);
    connect(m_cancelButton, &QPushButton::clicked, this, &ModelRunDialog::cancel);
    setBusy(false);
    m_runButton->setEnabled(false);
    resize(1100, 720);
}

// How the model runs: device, timed and warm-up passes, output check, recording, fallback.
QHBoxLayout* ModelRunDialog::buildOptions()
{
    auto* options = new QHBoxLayout;
    m_device = new QComboBox(this);
    m_device->addItem(tr("CUDA"), QStringLiteral("cuda"));
    m_device->addItem(tr("CPU (reference ops)"), QStringLiteral("cpu"));
    m_runs = new QSpinBox(this);
    m_runs->setRange(1, 100000);
    m_runs->setValue(30);
    m_runs->setPrefix(tr("runs "));
    m_warmup = new QSpinBox(this);
    m_warmup->setRange(0, 100000);
    m_warmup->setValue(10);
    m_warmup->setPrefix(tr("warm-up "));
    m_check = new QCheckBox(tr("Check outputs (original, fp64)"), this);
    m_check->setChecked(true);
    m_record = new QCheckBox(tr("Record in the package"), this);
    m_fallback = new QCheckBox(tr("Allow fallback"), this);
    m_fallback->setToolTip(tr("A kernel that raises runs its reference ops instead: said once per op and counted. "
                              "Off, a raising kernel fails the run."));
    for (QWidget* w : {static_cast<QWidget*>(m_device), static_cast<QWidget*>(m_runs), static_cast<QWidget*>(m_warmup),
                       static_cast<QWidget*>(m_check), static_cast<QWidget*>(m_record), static_cast<QWidget*>(m_fallback)})
        options->addWidget(w);
    options->addStretch();
    return options;
}

// Run and Cancel with the busy bar and the status line.
QHBoxLayout* ModelRunDialog::buildRunRow()
{
    auto* buttons = new QHBoxLayout;
    m_runButton = new QPushButton(tr("Run"), this);
    m_runButton->setDefault(true);
    m_cancelButton = new QPushButton(tr("Cancel"), this);
    m_busy = new QProgressBar(this);
    m_busy->setRange(0, 0);
    m_busy->setMaximumWidth(160);
    m_busy->hide();
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    buttons->addWidget(m_runButton);
    buttons->addWidget(m_cancelButton);
    buttons->addWidget(m_busy);
    buttons->addWidget(m_status, 1);
    return buttons;
}

ModelRunDialog::~ModelRunDialog()
{
    if (m_process && m_process->state() != QProcess::NotRunning) {
        m_process->kill();
        m_process->waitForFinished(3000);
    }
}

bool ModelRunDialog::running() const { return m_process && m_process->state() != QProcess::NotRunning; }

void ModelRunDialog::openPackage(const QString& file)
{
    m_package = file;
    m_file->setText(file);
    m_status->setText(tr("Reading %1…").arg(QFileInfo(file).fileName()));
    m_runButton->setEnabled(false);
    const int generation = ++m_openGeneration;
    auto* watcher = new QFutureWatcher<std::shared_ptr<Opened>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
        auto opened = watcher->result();
        watcher->deleteLater();
        if (generation != m_openGeneration)
            return;   // a later package was asked for meanwhile
        m_opened = opened;
        m_models->blockSignals(true);
        m_models->clear();
        for (const auto& m : opened->models)
            m_models->addItem(QStringLiteral("%1  (%2)").arg(m.name, m.format), m.name);
        m_models->blockSignals(false);
        showOpened(opened);
    });
    watcher->setFuture(QtConcurrent::run([file] {
        auto out = std::make_shared<Opened>();
        out->file = file;
        auto pkg = kf::cast::openPackage(file.toStdString());
        if (!pkg) {
            out->error = qs(pkg.error().message());
            return out;
        }
        for (const kf::cast::PackageModel& m : pkg->models) {
            Opened::Model model{qs(m.name), qs(m.format), {}};
            for (const std::string& path : m.runs) {
                const std::string origin = file.toStdString() + ": " + path;
                auto evidence = kf::json::parseText(pkg->file(path)->bytes, origin);
                auto headline = evidence ? kf::cast::readModelRunHeadline(*evidence, origin)
                                         : kf::Result<kf::cast::ModelRunHeadline>(evidence.error());
                if (!headline) {
                    out->error = qs(headline.error().message());
                    return out;
                }
                model.runs.push_back({std::move(evidence.value()), std::move(headline.value())});
            }
            out->models.push_back(std::move(model));
        }
        if (out->models.empty())
            out->error = QObject::tr("%1 carries no model; export one into it with `kforge cast export … --model FILE`")
                             .arg(file);
        return out;
    }));
}

void ModelRunDialog::showOpened(const std::shared_ptr<Opened>& opened)
{
    m_recorded->clear();
    if (!opened->error.isEmpty()) {
        m_status->setText(QStringLiteral("<span style=\"color:%1\">%2</span>")
                              .arg(kf::ui::errorColor(palette()).name(), opened->error.toHtmlEscaped()));
        m_view->clear(opened->error);
        m_runButton->setEnabled(false);
        emit packageOpened(false, opened->error);
        return;
    }
    const int index = std::max(0, m_models->currentIndex());
    const auto& model = opened->models.at(static_cast<std::size_t>(index));
    for (const auto& r : model.runs) {
        const kf::cast::ModelRunHeadline& h = r.headline;
        m_recorded->addItem(QStringLiteral("%1 — %2, %3×").arg(qs(h.createdAt), h.gpu.empty() ? tr("CPU") : qs(h.gpu),
                                                                  h.speedup ? QString::number(*h.speedup, 'f', 3) : QStringLiteral("–")));
    }
    if (model.runs.empty())
        m_recorded->addItem(tr("none yet (run with “Record in the package”)"));
    m_recorded->setEnabled(!model.runs.empty());
    if (!model.runs.empty()) {
        m_recorded->setCurrentIndex(int(model.runs.size()) - 1);
        showRecorded(int(model.runs.size()) - 1);
    } else {
        m_view->clear(tr("No recorded run of %1 yet: Run measures it.").arg(model.name));
    }
    const QString sentence = tr("%1: %n model(s)", nullptr, int(opened->models.size())).arg(QFileInfo(opened->file).fileName());
    m_status->setText(sentence);
    m_runButton->setEnabled(!running());
    emit packageOpened(true, sentence);
}

void ModelRunDialog::showRecorded(int index)
{
    if (!m_opened || m_opened->models.empty())
        return;
    const auto& model = m_opened->models.at(static_cast<std::size_t>(std::max(0, m_models->currentIndex())));
    if (index >= 0 && index < int(model.runs.size()))
        m_view->setEvidence(model.runs[static_cast<std::size_t>(index)].evidence);
}

void ModelRunDialog::setBusy(bool busy)
{
    m_busy->setVisible(busy);
    m_cancelButton->setEnabled(busy);
    m_runButton->setEnabled(!busy && m_opened && m_opened->error.isEmpty());
    m_models->setEnabled(!busy);
}

void ModelRunDialog::run()
{
    if (running() || !m_opened || !m_opened->error.isEmpty() || m_models->currentIndex() < 0)
        return;
    QStringList args = {QStringLiteral("cast"), QStringLiteral("run"), m_package, QStringLiteral("--model"),
                        m_models->currentData().toString(), QStringLiteral("--json"), QStringLiteral("--device"),
                        m_device->currentData().toString(), QStringLiteral("--runs"), QString::number(m_runs->value()),
                        QStringLiteral("--warmup"), QString::number(m_warmup->value())};
    if (m_check->isChecked())
        args << QStringLiteral("--check");
    if (m_record->isChecked())
        args << QStringLiteral("--record");
    if (m_fallback->isChecked())
        args << QStringLiteral("--allow-fallback");
    m_stderr.clear();
    m_process = new QProcess(this);
    connect(m_process, &QProcess::readyReadStandardError, this, [this, p = m_process] {
        m_stderr += QString::fromUtf8(p->readAllStandardError());
        const QStringList lines = m_stderr.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        if (!lines.isEmpty())
            m_status->setText(lines.last().toHtmlEscaped());
    });
    connect(m_process, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
        finished(code, status != QProcess::NormalExit);
    });
    connect(m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart)
            finished(-1, true);
    });
    setBusy(true);
    m_status->setText(tr("Running %1 with and without its kernels…").arg(m_models->currentData().toString()));
    m_process->start(m_kforge, args);
}

void ModelRunDialog::cancel()
{
    if (running()) {
        m_process->kill();
        m_status->setText(tr("Cancelling…"));
    }
}

void ModelRunDialog::finished(int exitCode, bool crashed)
{
    if (!m_process)
        return;
    QProcess* p = m_process;
    m_process = nullptr;
    const QByteArray out = p->readAllStandardOutput();
    m_stderr += QString::fromUtf8(p->readAllStandardError());
    const bool failedToStart = p->error() == QProcess::FailedToStart;
    p->deleteLater();
    setBusy(false);
    auto fail = [this](const QString& sentence) {
        m_status->setText(QStringLiteral("<span style=\"color:%1\">%2</span>")
                              .arg(kf::ui::errorColor(palette()).name(), sentence.toHtmlEscaped()));
        emit runFinished(false, sentence);
    };
    if (failedToStart)
        return fail(tr("Cannot start %1: the model runs in kforge (install it beside the workbench, or "
                       "set KF_KFORGE to its path).").arg(m_kforge));
    if (crashed)
        return fail(tr("The run was cancelled or stopped."));
    QStringList lines = m_stderr.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    while (lines.size() > 4)
        lines.removeFirst();
    if (exitCode != 0)
        return fail(tr("The run failed (exit %1): %2").arg(exitCode).arg(lines.join(QLatin1Char(' '))));
    const std::string origin = "the output of " + m_kforge.toStdString() + " cast run";
    auto ev = kf::json::parseText(std::string_view(out.constData(), std::size_t(out.size())), origin);
    auto headline = ev ? kf::cast::readModelRunHeadline(*ev, origin) : kf::Result<kf::cast::ModelRunHeadline>(ev.error());
    if (!headline)
        return fail(tr("kforge printed something that is not a model run's evidence: %1").arg(qs(headline.error().message())));
    m_view->setEvidence(*ev);
    const kf::cast::ModelRunHeadline& h = headline.value();
    const QString sentence = h.speedup ? tr("%1: %2× end to end (model-level).").arg(qs(h.model)).arg(*h.speedup, 0, 'f', 3)
                                       : tr("%1: ran without kernels.").arg(qs(h.model));
    m_status->setText(sentence);
    if (m_record->isChecked())
        openPackage(m_package);   // shows the run just recorded among the others
    emit runFinished(true, sentence);
}

} // namespace kf::app
