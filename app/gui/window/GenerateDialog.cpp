#include "app/gui/window/GenerateDialog.h"

#include "engine/cast/ReferenceSteps.h"
#include "engine/compile/Compiler.h"
#include "engine/task/Task.h"
#include "widgets/common/SelectableLabel.h"
#include "widgets/editor/KernelEditor.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QFutureWatcher>
#include <QPointer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace kf::app {

GenerateDialog::GenerateDialog(QWidget* parent) : QDialog(parent)
{
    setWindowTitle(tr("New Candidate from Reference"));
    auto* layout = new QVBoxLayout(this);
    m_summary = ui::selectableLabel({}, this);
    layout->addWidget(m_summary);
    m_error = ui::selectableLabel({}, this);
    m_error->setStyleSheet(QStringLiteral("color: palette(highlighted-text); background: #a33; padding: 6px;"));
    m_error->hide();
    layout->addWidget(m_error);
    m_preview = new ui::KernelEditor(this);
    m_preview->setReadOnly(true);
    layout->addWidget(m_preview, 1);
    m_plan = ui::selectableLabel({}, this);
    layout->addWidget(m_plan);
    m_compile = new QLabel(this);
    m_compile->setWordWrap(true);
    layout->addWidget(m_compile);
    auto* form = new QFormLayout;
    m_name = new QLineEdit(this);
    form->addRow(tr("File name:"), m_name);
    layout->addLayout(form);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
    m_add = buttons->addButton(tr("Add to Task"), QDialogButtonBox::AcceptRole);
    m_add->setDefault(true);
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_add, &QPushButton::clicked, this, &GenerateDialog::addToTask);
    resize(980, 720);
}

bool GenerateDialog::prepare(const QString& taskDir)
{
    m_taskDir = taskDir;
    m_generated.reset();
    m_task.reset();
    m_compileClean = false;
    ++m_generation;
    m_problem.clear();
    setWindowTitle(tr("New Candidate from Reference — %1").arg(QFileInfo(taskDir).fileName()));
    auto fail = [&](const std::string& sentence) {
        m_problem = QString::fromStdString(sentence);
        m_error->setText(m_problem);
        m_error->show();
        m_summary->setText(tr("The generator cannot fuse this task's reference. Nothing will be written."));
        m_preview->setText(QString());
        m_plan->clear();
        m_compile->clear();
        m_add->setEnabled(false);
        m_name->setEnabled(false);
        return false;
    };
    auto task = loadTask(taskDir.toStdString());
    if (!task)
        return fail(task.error().message());
    auto steps = cast::referenceSteps(*task);
    if (!steps)
        return fail(steps.error().message());
    // The first free name: generated.cu, generated_2.cu, ...
    QString name = QStringLiteral("generated.cu");
    for (int n = 2; QFileInfo::exists(QDir(taskDir).filePath(name)) || task->findCandidate(name.toStdString()); ++n)
        name = QStringLiteral("generated_%1.cu").arg(n);
    gen::GenerateOptions options;
    options.fileName = name.toStdString();
    auto g = gen::generateCandidate(*task, *steps, options);
    if (!g)
        return fail(g.error().message());
    m_generated = std::move(g.value());
    m_task = std::move(task.value());
    m_error->hide();
    m_summary->setText(tr("<b>%1</b><br>Fused from the %2 steps of the reference; verify it with F5 once it is added.")
                           .arg(QString::fromStdString(m_generated->summary).toHtmlEscaped())
                           .arg(m_generated->tape.steps.size()));
    m_preview->setText(QString::fromStdString(m_generated->source));
    const auto& launch = m_generated->candidate["launches"][0];
    QStringList args;
    for (const auto& a : launch["args"])
        args << QString::fromStdString(a.is_string() ? a.get<std::string>() : a.value("scalar", std::string()));
    // grid and block are expressions (text, a number, or the generated knobs such as "KF_BLOCK").
    auto text = [](const nlohmann::ordered_json& v) {
        return QString::fromStdString(v.is_string() ? v.get<std::string>() : v.dump()).toHtmlEscaped();
    };
    const auto launches = m_generated->candidate["launches"].size();
    m_plan->setText(tr("Launch plan: <code>%1</code> with grid <code>%2</code>, block <code>%3</code>, arguments <code>%4</code>%5.")
                        .arg(QString::fromStdString(launch["kernel"].get<std::string>()).toHtmlEscaped(), text(launch["grid"]),
                             text(launch["block"]), args.join(QStringLiteral(", ")).toHtmlEscaped(),
                             launches > 1 ? tr(", then %n more launch(es)", nullptr, int(launches - 1)) : QString()));
    m_name->setText(name);
    m_name->setEnabled(true);
    m_add->setEnabled(false);
    startCompileCheck();
    return true;
}

void GenerateDialog::startCompileCheck()
{
    const int generation = ++m_generation;
    const std::string arch = m_task->architectures.empty() ? std::string("sm_90") : m_task->architectures.front();
    m_compile->setText(tr("Checking the source with NVRTC for %1…").arg(QString::fromStdString(arch)));
    auto* watcher = new QFutureWatcher<Result<CompileResult>>(this);
    connect(watcher, &QFutureWatcher<Result<CompileResult>>::finished, this, [this, watcher, generation, arch] {
        watcher->deleteLater();
        if (generation != m_generation)
            return;
        const Result<CompileResult> r = watcher->result();
        const QString a = QString::fromStdString(arch);
        if (!r) {
            m_compileClean = true; // no NVRTC: the candidate may still be added, unchecked
            m_compile->setText(tr("Not compiled: %1").arg(QString::fromStdString(r.error().why)));
        } else if (r->success && r->warningCount() == 0) {
            m_compileClean = true;
            int regs = 0;
            for (const auto& k : r->kernels)
                regs = std::max(regs, k.registers);
            m_compile->setText(tr("Compiles cleanly for %1: %2 registers.").arg(a).arg(regs));
        } else {
            m_compileClean = false;
            m_compile->setText(tr("The generated source does not compile cleanly for %1 (%2 errors, %3 warnings): a "
                                  "generator bug, so it cannot be added. Please report it with the task.\n%4")
                                   .arg(a)
                                   .arg(r->errorCount())
                                   .arg(r->warningCount())
                                   .arg(QString::fromStdString(r->log).left(600)));
        }
        m_add->setEnabled(m_compileClean);
        emit compileChecked(m_compileClean);
    });
    const Task task = *m_task;
    const gen::Generated generated = *m_generated;
    watcher->setFuture(QtConcurrent::run([task, generated, arch]() -> Result<CompileResult> {
        if (auto v = nvrtcVersion(); !v)
            return v.error();
        const CompileCache cache(CompileCache::defaultDirectory());
        return gen::compileGenerated(task, generated, arch, &cache);
    }));
}

QString GenerateDialog::source() const
{
    return m_generated ? QString::fromStdString(m_generated->source) : QString();
}

void GenerateDialog::addToTask()
{
    if (!m_generated || !m_compileClean)
        return;
    QString file = m_name->text().trimmed();
    if (!file.endsWith(QStringLiteral(".cu")))
        file += QStringLiteral(".cu");
    gen::Generated g = *m_generated;
    g.candidate["file"] = file.toStdString();
    auto written = gen::addGeneratedCandidate(m_taskDir.toStdString(), g);
    if (!written) {
        m_error->setText(QString::fromStdString(written.error().message()));
        m_error->show();
        return;
    }
    emit candidateAdded(m_taskDir, QString::fromStdString(written->string()));
    accept();
}

} // namespace kf::app
