#include "app/gui/window/GenerateDialog.h"

#include "engine/cast/ReferenceSteps.h"
#include "engine/task/Task.h"
#include "widgets/editor/KernelEditor.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace kf::app {

GenerateDialog::GenerateDialog(QWidget* parent) : QDialog(parent)
{
    setWindowTitle(tr("New Candidate from Reference"));
    auto* layout = new QVBoxLayout(this);
    m_summary = new QLabel(this);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_summary);
    m_error = new QLabel(this);
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error->setStyleSheet(QStringLiteral("color: palette(highlighted-text); background: #a33; padding: 6px;"));
    m_error->hide();
    layout->addWidget(m_error);
    m_preview = new ui::KernelEditor(this);
    m_preview->setReadOnly(true);
    layout->addWidget(m_preview, 1);
    m_plan = new QLabel(this);
    m_plan->setWordWrap(true);
    m_plan->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_plan);
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
    m_problem.clear();
    setWindowTitle(tr("New Candidate from Reference — %1").arg(QFileInfo(taskDir).fileName()));
    auto fail = [&](const std::string& sentence) {
        m_problem = QString::fromStdString(sentence);
        m_error->setText(m_problem);
        m_error->show();
        m_summary->setText(tr("The generator cannot fuse this task's reference. Nothing will be written."));
        m_preview->setText(QString());
        m_plan->clear();
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
    m_error->hide();
    m_summary->setText(tr("<b>%1</b><br>Fused from the %2 steps of the reference; verify it with F5 once it is added.")
                           .arg(QString::fromStdString(m_generated->summary).toHtmlEscaped())
                           .arg(m_generated->tape.steps.size()));
    m_preview->setText(QString::fromStdString(m_generated->source));
    const auto& launch = m_generated->candidate["launches"][0];
    QStringList args;
    for (const auto& a : launch["args"])
        args << QString::fromStdString(a.is_string() ? a.get<std::string>() : a.value("scalar", std::string()));
    m_plan->setText(tr("Launch plan: <code>%1</code> with grid <code>%2</code>, block <code>%3</code>, arguments <code>%4</code>.")
                        .arg(QString::fromStdString(launch["kernel"].get<std::string>()),
                             QString::fromStdString(launch["grid"].get<std::string>()).toHtmlEscaped(),
                             QString::number(launch["block"].get<int>()), args.join(QStringLiteral(", ")).toHtmlEscaped()));
    m_name->setText(name);
    m_name->setEnabled(true);
    m_add->setEnabled(true);
    return true;
}

QString GenerateDialog::source() const
{
    return m_generated ? QString::fromStdString(m_generated->source) : QString();
}

void GenerateDialog::addToTask()
{
    if (!m_generated)
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
