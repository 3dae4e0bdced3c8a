#include "app/gui/settings/SettingsDialog.h"

#include "app/gui/settings/EndpointDialog.h"
#include "app/gui/settings/ModelsPage.h"
#include "app/gui/settings/RunnersPage.h"
#include "app/gui/settings/Settings.h"

#include "engine/core/Architectures.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QVBoxLayout>

#include <optional>

namespace kf::app {

namespace {

// Empty text means "no override"; otherwise a non-negative number (1e-3 style accepted).
std::optional<double> parseTolerance(const QString& text, bool* ok)
{
    *ok = true;
    if (text.trimmed().isEmpty())
        return std::nullopt;
    const double v = text.trimmed().toDouble(ok);
    *ok = *ok && v >= 0.0;
    return v;
}

} // namespace

SettingsDialog::SettingsDialog(Settings* settings, QWidget* parent, const QString& runnersFile)
    : QDialog(parent)
    , m_settings(settings)
{
    setWindowTitle(tr("Settings"));
    auto* form = new QFormLayout;

    addCompileRows(form);
    addRunRows(form);
    addWorkbenchRows(form);

    m_problem = new QLabel(this);
    m_problem->setObjectName(QStringLiteral("problem"));
    m_problem->setWordWrap(true);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);

    auto* tabs = new QTabWidget(this);
    tabs->setObjectName(QStringLiteral("settingsTabs"));
    auto* general = new QWidget(tabs);
    general->setLayout(form);
    tabs->addTab(general, tr("&General"));
    m_models = new ModelsPage({}, tabs);
    tabs->addTab(m_models, tr("&Models"));
    m_runners = new RunnersPage(runnersFile, tabs);
    tabs->addTab(m_runners, tr("R&unners"));
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(tabs);
    layout->addWidget(m_problem);
    layout->addWidget(m_buttons);

    connect(m_buttons, &QDialogButtonBox::accepted, this, &SettingsDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &SettingsDialog::reject);
    connect(m_models, &ModelsPage::changed, this, &SettingsDialog::validate);
    connect(m_runners, &RunnersPage::changed, this, &SettingsDialog::validate);
    // A check of a local endpoint starts the runner the General page names.
    connect(m_runnerPath, &QLineEdit::textChanged, m_runners, &RunnersPage::setLocalRunner);
    for (QLineEdit* e : {m_nvrtcOptions, m_rtol, m_atol, m_runnerPath, m_skillDirs})
        connect(e, &QLineEdit::textChanged, this, &SettingsDialog::validate);

    load();
    validate();
}

// The compile and tolerance rows of the General page.
void SettingsDialog::addCompileRows(QFormLayout* form)
{
    m_architecture = new QComboBox(this);
    m_architecture->setObjectName(QStringLiteral("architecture"));
    for (const kf::ArchInfo& a : kf::knownArchitectures()) {
        const QString arch = QString::fromStdString(a.arch);
        m_architecture->addItem(QStringLiteral("%1 (%2)").arg(arch, QString::fromStdString(a.exampleGpu)), arch);
    }
    form->addRow(tr("Default &architecture:"), m_architecture);

    m_nvrtcOptions = new QLineEdit(this);
    m_nvrtcOptions->setObjectName(QStringLiteral("nvrtcOptions"));
    m_nvrtcOptions->setPlaceholderText(tr("e.g. -lineinfo -maxrregcount=64"));
    m_nvrtcOptions->setToolTip(tr("Extra NVRTC options for every compile, after the task's own."));
    form->addRow(tr("Extra &NVRTC options:"), m_nvrtcOptions);

    m_debounce = new QSpinBox(this);
    m_debounce->setObjectName(QStringLiteral("debounce"));
    m_debounce->setRange(0, 5000);
    m_debounce->setSingleStep(50);
    m_debounce->setSuffix(tr(" ms"));
    form->addRow(tr("Compile after typing &pauses for:"), m_debounce);

    m_rtol = new QLineEdit(this);
    m_rtol->setObjectName(QStringLiteral("rtol"));
    m_rtol->setPlaceholderText(tr("task's tolerance"));
    form->addRow(tr("Override &rtol:"), m_rtol);
    m_atol = new QLineEdit(this);
    m_atol->setObjectName(QStringLiteral("atol"));
    m_atol->setPlaceholderText(tr("task's tolerance"));
    form->addRow(tr("Override a&tol:"), m_atol);
}

// The runner, its watchdog, verify trials and the torch.compile baseline.
void SettingsDialog::addRunRows(QFormLayout* form)
{
    m_runnerPath = new QLineEdit(this);
    m_runnerPath->setObjectName(QStringLiteral("runnerPath"));
    m_runnerPath->setPlaceholderText(tr("the runner installed with KernelForge"));
    auto* browse = new QPushButton(tr("&Browse…"), this);
    browse->setObjectName(QStringLiteral("browseRunner"));
    auto* runnerRow = new QHBoxLayout;
    runnerRow->addWidget(m_runnerPath, 1);
    runnerRow->addWidget(browse);
    form->addRow(tr("R&unner:"), runnerRow);
    connect(browse, &QPushButton::clicked, this, &SettingsDialog::browseRunner);

    m_launchTimeout = new QSpinBox(this);
    m_launchTimeout->setObjectName(QStringLiteral("launchTimeout"));
    m_launchTimeout->setRange(100, 600000);
    m_launchTimeout->setSingleStep(1000);
    m_launchTimeout->setSuffix(tr(" ms"));
    m_launchTimeout->setToolTip(tr("A launch running longer is treated as hung and the runner is restarted."));
    form->addRow(tr("&Launch timeout:"), m_launchTimeout);

    m_trials = new QSpinBox(this);
    m_trials->setObjectName(QStringLiteral("trials"));
    m_trials->setRange(1, 1000);
    form->addRow(tr("Verify t&rials per shape:"), m_trials);

    m_benchCompile = new QCheckBox(tr("Also time the reference under torch.compile"), this);
    m_benchCompile->setObjectName(QStringLiteral("benchCompile"));
    m_benchCompile->setToolTip(tr("After each benchmark, a Python process with torch and Triton compiles the task's reference "
                                  "with torch.compile and times it beside eager and the candidate; the Runs panel shows the "
                                  "second speedup. $KF_BASELINE_PYTHON picks the Python."));
    form->addRow(tr("&Benchmarks:"), m_benchCompile);
}

// Agent skills and the theme.
void SettingsDialog::addWorkbenchRows(QFormLayout* form)
{
    m_skillDirs = new QLineEdit(this);
    m_skillDirs->setObjectName(QStringLiteral("skillDirs"));
    m_skillDirs->setPlaceholderText(tr("none: the built-in skills only"));
    m_skillDirs->setToolTip(tr("Folders of <name>/SKILL.md skills for Copy Agent Prompt, separated by ';'. A skill "
                               "replaces a built-in or earlier one of the same name (docs/agents.md)."));
    form->addRow(tr("Agent s&kill folders:"), m_skillDirs);

    m_theme = new QComboBox(this);
    m_theme->setObjectName(QStringLiteral("theme"));
    m_theme->addItem(tr("System"), int(Settings::Theme::System));
    m_theme->addItem(tr("Light"), int(Settings::Theme::Light));
    m_theme->addItem(tr("Dark"), int(Settings::Theme::Dark));
    form->addRow(tr("T&heme:"), m_theme);
}

bool SettingsDialog::parseNvrtcOptions(const QString& text, QStringList* options, QString* error)
{
    // Quoted words as a shell would split them (the endpoint dialog's rule), one sentence on error.
    QStringList out;
    QString why;
    if (!EndpointDialog::splitWords(text, &out, &why)) {
        if (error)
            *error = why.left(1).toUpper() + why.mid(1) + QLatin1Char('.');
        return false;
    }
    for (const QString& o : out) {
        if (!o.startsWith(QLatin1Char('-'))) {
            if (error)
                *error = tr("\"%1\" is not an option: NVRTC options start with '-'.").arg(o);
            return false;
        }
        // The architecture comes from the task or the combo box; a second one would conflict.
        if (o.startsWith(QLatin1String("-arch")) || o.startsWith(QLatin1String("--gpu-architecture"))) {
            if (error)
                *error = tr("Choose the architecture above instead of \"%1\".").arg(o);
            return false;
        }
    }
    if (options)
        *options = out;
    return true;
}

QString SettingsDialog::joinNvrtcOptions(const QStringList& options)
{
    QStringList parts;
    for (const QString& o : options)
        parts << (o.contains(QLatin1Char(' ')) || o.isEmpty() ? QLatin1Char('"') + o + QLatin1Char('"') : o);
    return parts.join(QLatin1Char(' '));
}

void SettingsDialog::load()
{
    const int arch = m_architecture->findData(m_settings->defaultArchitecture());
    m_architecture->setCurrentIndex(arch < 0 ? 0 : arch);
    m_nvrtcOptions->setText(joinNvrtcOptions(m_settings->nvrtcExtraOptions()));
    m_debounce->setValue(m_settings->compileDebounceMs());
    const Settings::ToleranceOverride tol = m_settings->toleranceOverride();
    m_rtol->setText(tol.rtol ? QString::number(*tol.rtol, 'g', 12) : QString());
    m_atol->setText(tol.atol ? QString::number(*tol.atol, 'g', 12) : QString());
    m_runnerPath->setText(m_settings->runnerPath());
    m_runners->setLocalRunner(m_settings->runnerPath());
    m_runners->setWorkbenchEndpoint(m_settings->runnerEndpoint());
    m_launchTimeout->setValue(m_settings->launchTimeoutMs());
    m_trials->setValue(m_settings->trials());
    m_benchCompile->setChecked(m_settings->benchAgainstCompile());
    m_skillDirs->setText(m_settings->agentSkillDirs().join(QLatin1Char(';')));
    m_theme->setCurrentIndex(m_theme->findData(int(m_settings->theme())));
}

void SettingsDialog::validate()
{
    auto firstProblem = [this]() -> QString {
        QString error;
        if (!parseNvrtcOptions(m_nvrtcOptions->text(), nullptr, &error))
            return error;
        bool ok = false;
        parseTolerance(m_rtol->text(), &ok);
        if (!ok)
            return tr("rtol must be a number ≥ 0 (like 1e-3), or empty for the task's own.");
        parseTolerance(m_atol->text(), &ok);
        if (!ok)
            return tr("atol must be a number ≥ 0 (like 1e-5), or empty for the task's own.");
        const QString runner = m_runnerPath->text().trimmed();
        if (!runner.isEmpty() && !QFileInfo(runner).isExecutable())
            return tr("%1 is not an executable file.").arg(runner);
        for (const QString& d : m_skillDirs->text().split(QLatin1Char(';'), Qt::SkipEmptyParts))
            if (!d.trimmed().isEmpty() && !QFileInfo(d.trimmed()).isDir())
                return tr("The skill folder %1 does not exist.").arg(d.trimmed());
        if (const QString models = m_models->validationError(); !models.isEmpty())
            return tr("Models: %1").arg(models);
        if (const QString runners = m_runners->validationError(); !runners.isEmpty())
            return tr("Runners: %1").arg(runners);
        return {};
    };
    m_error = firstProblem();
    m_problem->setText(m_error);
    m_problem->setVisible(!m_error.isEmpty());
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(m_error.isEmpty());
}

void SettingsDialog::browseRunner()
{
    const QString start = m_runnerPath->text().isEmpty() ? QString() : QFileInfo(m_runnerPath->text()).absolutePath();
    const QString file = QFileDialog::getOpenFileName(this, tr("Choose kforge-runner"), start);
    if (!file.isEmpty())
        m_runnerPath->setText(file);
}

void SettingsDialog::accept()
{
    validate();
    if (!m_error.isEmpty())
        return;
    QString modelsError;
    if (!m_models->save(&modelsError)) {
        m_error = tr("Models: %1").arg(modelsError);
        m_problem->setText(m_error);
        m_problem->setVisible(true);
        return;
    }
    QString runnersError;
    if (!m_runners->save(&runnersError)) {
        m_error = tr("Runners: %1").arg(runnersError);
        m_problem->setText(m_error);
        m_problem->setVisible(true);
        return;
    }
    m_settings->setRunnerEndpoint(m_runners->workbenchEndpoint());
    QStringList options;
    parseNvrtcOptions(m_nvrtcOptions->text(), &options, nullptr);
    bool ok = false;
    m_settings->setDefaultArchitecture(m_architecture->currentData().toString());
    m_settings->setNvrtcExtraOptions(options);
    m_settings->setCompileDebounceMs(m_debounce->value());
    m_settings->setToleranceOverride({parseTolerance(m_rtol->text(), &ok), parseTolerance(m_atol->text(), &ok)});
    m_settings->setRunnerPath(m_runnerPath->text());
    m_settings->setLaunchTimeoutMs(m_launchTimeout->value());
    m_settings->setTrials(m_trials->value());
    m_settings->setBenchAgainstCompile(m_benchCompile->isChecked());
    m_settings->setAgentSkillDirs(m_skillDirs->text().split(QLatin1Char(';'), Qt::SkipEmptyParts));
    m_settings->setTheme(static_cast<Settings::Theme>(m_theme->currentData().toInt()));
    m_settings->sync();
    QDialog::accept();
}

} // namespace kf::app
