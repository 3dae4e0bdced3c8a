#include "app/gui/settings/EndpointDialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QVBoxLayout>

namespace kf::app {

namespace {

using Kind = kf::Endpoint::Kind;

QString qs(const std::string& s) { return QString::fromStdString(s); }

// The reader's defaults per kind (engine/runner/RunnersConfig.cpp), so a kind change moves the
// fields the user left at the old kind's default along with it.
bool defaultSharedFs(Kind k) { return k == Kind::Local || k == Kind::Srun; }
int defaultStartTimeout(Kind k) { return k == Kind::Srun ? 1800 : 120; }
int defaultLatency(Kind k) { return k == Kind::Local ? 0 : 2000; }

QSpinBox* spin(QWidget* parent, const char* name, int lo, int hi, const QString& suffix)
{
    auto* s = new QSpinBox(parent);
    s->setObjectName(QString::fromLatin1(name));
    s->setRange(lo, hi);
    s->setSuffix(suffix);
    return s;
}

QLineEdit* line(QWidget* parent, const char* name, const QString& placeholder, const QString& tip = {})
{
    auto* e = new QLineEdit(parent);
    e->setObjectName(QString::fromLatin1(name));
    e->setPlaceholderText(placeholder);
    if (!tip.isEmpty())
        e->setToolTip(tip);
    return e;
}

} // namespace

bool EndpointDialog::splitWords(const QString& text, QStringList* words, QString* error)
{
    QStringList out;
    QString word;
    bool inWord = false;
    QChar quote;
    for (const QChar c : text) {
        if (!quote.isNull()) {
            if (c == quote)
                quote = QChar();
            else
                word += c;
        } else if (c == QLatin1Char('"') || c == QLatin1Char('\'')) {
            quote = c;
            inWord = true;
        } else if (c.isSpace()) {
            if (inWord)
                out << word;
            word.clear();
            inWord = false;
        } else {
            word += c;
            inWord = true;
        }
    }
    if (!quote.isNull()) {
        if (error)
            *error = tr("a %1 quote is not closed").arg(quote);
        return false;
    }
    if (inWord)
        out << word;
    if (words)
        *words = out;
    return true;
}

QString EndpointDialog::joinWords(const std::vector<std::string>& words)
{
    QStringList parts;
    for (const std::string& w : words) {
        const QString word = qs(w);
        if (word.isEmpty() || word.contains(QRegularExpression(QStringLiteral("[\\s\"']"))))
            parts << (word.contains(QLatin1Char('\'')) ? QLatin1Char('"') + word + QLatin1Char('"')
                                                       : QLatin1Char('\'') + word + QLatin1Char('\''));
        else
            parts << word;
    }
    return parts.join(QLatin1Char(' '));
}

EndpointDialog::EndpointDialog(const kf::Endpoint& e, Validator validate, QWidget* parent)
    : QDialog(parent)
    , m_validate(std::move(validate))
    , m_kind(e.kind)
{
    setWindowTitle(tr("Runner Endpoint"));
    m_form = new QFormLayout;
    addIdentityRows(e);
    addConnectionRows(e);
    addRunnerRows(e);
    addTimeoutRows(e);

    m_problem = new QLabel(this);
    m_problem->setObjectName(QStringLiteral("endpointProblem"));
    m_problem->setWordWrap(true);
    m_problem->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_problem->setStyleSheet(QStringLiteral("color: #d9534f;"));
    m_problem->setVisible(false);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(m_form);
    layout->addWidget(m_problem);
    layout->addWidget(m_buttons);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &EndpointDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &EndpointDialog::reject);
    connect(m_kindBox, &QComboBox::currentIndexChanged, this, &EndpointDialog::kindChanged);
    kindChanged();
    setMinimumWidth(560);
}

// The endpoint's name and kind.
void EndpointDialog::addIdentityRows(const kf::Endpoint& e)
{
    m_name = line(this, "endpointName", tr("gpu-box"), tr("Lower-case letters, digits, '.', '_' and '-', starting with a letter or digit"));
    m_name->setText(qs(e.name));
    m_form->addRow(tr("&Name:"), m_name);
    m_kindBox = new QComboBox(this);
    m_kindBox->setObjectName(QStringLiteral("endpointKind"));
    for (Kind k : {Kind::Local, Kind::Ssh, Kind::Srun, Kind::Command})
        m_kindBox->addItem(QString::fromLatin1(kf::Endpoint::kindName(k)), int(k));
    m_kindBox->setCurrentIndex(m_kindBox->findData(int(e.kind)));
    m_kindBox->setToolTip(tr("local: kforge-runner on this machine · ssh: on a host you log in to with a key · "
                             "srun: a Slurm job · command: any command around {runner} (a container, a wrapper)"));
    m_form->addRow(tr("&Kind:"), m_kindBox);
}

// How the runner is reached: ssh's host, user, port, key and options, srun's arguments, a command.
void EndpointDialog::addConnectionRows(const kf::Endpoint& e)
{
    m_host = line(this, "endpointHost", tr("gpu-box.lan"));
    m_host->setText(qs(e.host));
    m_form->addRow(tr("&Host:"), m_host);
    m_user = line(this, "endpointUser", tr("your login name there"));
    m_user->setText(qs(e.user));
    m_form->addRow(tr("&User:"), m_user);
    m_port = spin(this, "endpointPort", 0, 65535, {});
    m_port->setSpecialValueText(tr("ssh's default"));
    m_port->setValue(e.port);
    m_form->addRow(tr("&Port:"), m_port);
    m_identity = line(this, "endpointIdentity", tr("~/.ssh/id_ed25519"));
    m_identity->setText(qs(e.identityFile));
    m_form->addRow(tr("&Identity file:"), m_identity);
    m_sshOptions = line(this, "endpointSshOptions", tr("-o StrictHostKeyChecking=accept-new"),
                        tr("Extra ssh arguments before \"--\", separated by spaces (quotes group). -t and RequestTTY are "
                           "refused: a pseudo-terminal rewrites protocol lines."));
    m_sshOptions->setText(joinWords(e.sshOptions));
    m_form->addRow(tr("ssh &options:"), m_sshOptions);
    m_srunArgs = line(this, "endpointSrunArgs", tr("--gres=gpu:1 --time=10 --partition=gpu"),
                      tr("Extra srun arguments, separated by spaces (quotes group). --pty is refused."));
    m_srunArgs->setText(joinWords(e.srunArgs));
    m_form->addRow(tr("srun &arguments:"), m_srunArgs);
    m_command = line(this, "endpointCommand", tr("docker exec -i box {runner}"),
                     tr("The command, words separated by spaces (quotes group), with {runner} as a word of its own "
                        "where the runner program goes"));
    m_command->setText(joinWords(e.command));
    m_form->addRow(tr("&Command:"), m_command);
}

// The runner there: its program, environment, files and compute-sanitizer.
void EndpointDialog::addRunnerRows(const kf::Endpoint& e)
{
    m_runner = line(this, "endpointRunner", tr("the default"),
                    tr("The runner program on the endpoint's host. Empty: this KernelForge's kforge-runner (local, srun, "
                       "command), kforge-runner on the remote PATH (ssh)."));
    m_runner->setText(qs(e.runner));
    m_form->addRow(tr("&Runner program:"), m_runner);
    m_env = new QPlainTextEdit(this);
    m_env->setObjectName(QStringLiteral("endpointEnv"));
    m_env->setPlaceholderText(tr("NAME=value, one a line (CUDA_VISIBLE_DEVICES=1)"));
    m_env->setTabChangesFocus(true);
    m_env->setFixedHeight(m_env->fontMetrics().lineSpacing() * 3 + 12);
    QStringList env;
    for (const auto& [k, v] : e.env)
        env << qs(k) + QLatin1Char('=') + qs(v);
    m_env->setPlainText(env.join(QLatin1Char('\n')));
    m_form->addRow(tr("&Environment:"), m_env);
    m_sharedFs = new QCheckBox(tr("The runner sees this machine's files at the same paths"), this);
    m_sharedFs->setObjectName(QStringLiteral("endpointSharedFs"));
    m_sharedFs->setToolTip(tr("Unchecked: every run sends the runner the task files it lacks, by content, and streams "
                              "saved failing cases back (docs/runners.md, \"Runners that do not share your files\")."));
    m_sharedFs->setChecked(e.sharedFs);
    m_form->addRow(tr("Shared &files:"), m_sharedFs);
    m_sanitizer = line(this, "endpointSanitizer", tr("found on that host"),
                       tr("compute-sanitizer's path on that host, if the runner does not find it by itself"));
    m_sanitizer->setText(qs(e.sanitizer));
    m_form->addRow(tr("compute-&sanitizer:"), m_sanitizer);
}

// The timeouts, and whether kforge --pool uses the endpoint.
void EndpointDialog::addTimeoutRows(const kf::Endpoint& e)
{
    m_startTimeout = spin(this, "endpointStartTimeout", 1, 86400, tr(" s"));
    m_startTimeout->setValue(e.startTimeoutS);
    m_startTimeout->setToolTip(tr("How long to wait for the runner's hello (an srun job may queue)"));
    m_form->addRow(tr("S&tart timeout:"), m_startTimeout);
    m_idleTimeout = spin(this, "endpointIdleTimeout", 1, 86400, tr(" s"));
    m_idleTimeout->setValue(e.idleTimeoutS);
    m_idleTimeout->setToolTip(tr("No message at all for this long: the runner is treated as hung"));
    m_form->addRow(tr("I&dle timeout:"), m_idleTimeout);
    m_heartbeat = spin(this, "endpointHeartbeat", 1, 600, tr(" s"));
    m_heartbeat->setValue(e.heartbeatTimeoutS);
    m_heartbeat->setToolTip(tr("No heartbeat for this long during a request: the connection is presumed lost"));
    m_form->addRow(tr("&Heartbeat timeout:"), m_heartbeat);
    m_latency = spin(this, "endpointLatency", 0, 60000, tr(" ms"));
    m_latency->setValue(e.launchLatencyMs);
    m_latency->setToolTip(tr("Added to every launch's watchdog budget (network, scheduler)"));
    m_form->addRow(tr("&Launch latency:"), m_latency);
    m_pool = new QCheckBox(tr("Used by kforge --pool"), this);
    m_pool->setObjectName(QStringLiteral("endpointPool"));
    m_pool->setChecked(e.pool);
    m_form->addRow(tr("P&ool:"), m_pool);
}

void EndpointDialog::kindChanged()
{
    const Kind k = static_cast<Kind>(m_kindBox->currentData().toInt());
    if (k != m_kind) {
        if (m_sharedFs->isChecked() == defaultSharedFs(m_kind))
            m_sharedFs->setChecked(defaultSharedFs(k));
        if (m_startTimeout->value() == defaultStartTimeout(m_kind))
            m_startTimeout->setValue(defaultStartTimeout(k));
        if (m_latency->value() == defaultLatency(m_kind))
            m_latency->setValue(defaultLatency(k));
        m_kind = k;
    }
    auto show = [this](QWidget* w, bool on) { m_form->setRowVisible(w, on); };
    for (QWidget* w : std::initializer_list<QWidget*>{m_host, m_user, m_port, m_identity, m_sshOptions})
        show(w, k == Kind::Ssh);
    show(m_srunArgs, k == Kind::Srun);
    show(m_command, k == Kind::Command);
    adjustSize();
}

kf::Endpoint EndpointDialog::endpoint(QString* problem) const
{
    kf::Endpoint e;
    QString why;
    e.name = m_name->text().trimmed().toStdString();
    e.kind = static_cast<Kind>(m_kindBox->currentData().toInt());
    e.runner = m_runner->text().trimmed().toStdString();
    const QStringList envLines = m_env->toPlainText().split(QLatin1Char('\n'));
    for (int i = 0; i < envLines.size(); ++i) {
        const QString l = envLines[i].trimmed();
        if (l.isEmpty())
            continue;
        const qsizetype eq = l.indexOf(QLatin1Char('='));
        if (eq <= 0) {
            if (why.isEmpty())
                why = tr("Environment, line %1: write NAME=value").arg(i + 1);
            continue;
        }
        e.env[l.left(eq).trimmed().toStdString()] = l.mid(eq + 1).toStdString();
    }
    auto words = [&](QLineEdit* field, const QString& label, std::vector<std::string>& out) {
        QStringList list;
        QString error;
        if (!splitWords(field->text(), &list, &error)) {
            if (why.isEmpty())
                why = QStringLiteral("%1: %2").arg(label, error);
            return;
        }
        for (const QString& w : list)
            out.push_back(w.toStdString());
    };
    switch (e.kind) {
    case Kind::Ssh:
        e.host = m_host->text().trimmed().toStdString();
        e.user = m_user->text().trimmed().toStdString();
        e.port = m_port->value();
        e.identityFile = m_identity->text().trimmed().toStdString();
        words(m_sshOptions, tr("ssh options"), e.sshOptions);
        if (e.host.empty() && why.isEmpty())
            why = tr("An ssh endpoint needs a host.");
        break;
    case Kind::Srun: words(m_srunArgs, tr("srun arguments"), e.srunArgs); break;
    case Kind::Command: words(m_command, tr("Command"), e.command); break;
    case Kind::Local: break;
    }
    e.sharedFs = m_sharedFs->isChecked();
    e.startTimeoutS = m_startTimeout->value();
    e.idleTimeoutS = m_idleTimeout->value();
    e.heartbeatTimeoutS = m_heartbeat->value();
    e.launchLatencyMs = m_latency->value();
    e.sanitizer = m_sanitizer->text().trimmed().toStdString();
    e.pool = m_pool->isChecked();
    if (problem)
        *problem = why;
    return e;
}

QString EndpointDialog::problem() const
{
    QString why;
    const kf::Endpoint e = endpoint(&why);
    if (!why.isEmpty())
        return why;
    return m_validate ? m_validate(e) : QString();
}

void EndpointDialog::showProblem()
{
    const QString p = problem();
    m_problem->setText(p);
    m_problem->setVisible(!p.isEmpty());
}

void EndpointDialog::accept()
{
    showProblem();
    if (m_problem->text().isEmpty())
        QDialog::accept();
}

} // namespace kf::app
