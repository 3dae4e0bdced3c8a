#include "app/gui/settings/RunnersPage.h"

#include "app/gui/settings/EndpointDialog.h"

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace kf::app {

namespace {

using Kind = kf::Endpoint::Kind;

QString qs(const std::string& s) { return QString::fromStdString(s); }

// Where an endpoint's runner runs, in the words of its kind.
QString whereText(const kf::Endpoint& e)
{
    QStringList parts;
    switch (e.kind) {
    case Kind::Local:
        parts << (e.runner.empty() ? QStringLiteral("kforge-runner on this machine") : qs(e.runner));
        break;
    case Kind::Ssh: {
        QString at = qs(e.host);
        if (!e.user.empty())
            at = qs(e.user) + QLatin1Char('@') + at;
        if (e.port > 0)
            at += QStringLiteral(":%1").arg(e.port);
        parts << QStringLiteral("ssh ") + at;
        if (!e.runner.empty())
            parts << qs(e.runner);
        break;
    }
    case Kind::Srun:
        parts << (QStringLiteral("srun ") + EndpointDialog::joinWords(e.srunArgs)).trimmed();
        break;
    case Kind::Command: parts << EndpointDialog::joinWords(e.command); break;
    }
    for (const auto& [k, v] : e.env)
        parts << qs(k) + QLatin1Char('=') + qs(v);
    return parts.join(QStringLiteral(" · "));
}

bool isBuiltInLocal(const kf::Endpoint& e)
{
    return e.name == "local";
}

// The entry of runners.json whose "gpus" made this endpoint ("node" for "node/1"), or empty.
QString gpusEntry(const kf::Endpoint& e)
{
    const auto slash = e.name.find('/');
    return slash == std::string::npos ? QString() : qs(e.name.substr(0, slash));
}

} // namespace

RunnersPage::RunnersPage(const QString& file, QWidget* parent)
    : ConfigFilePage(file.isEmpty() ? qs(kf::runnersConfigPath().string()) : file, parent)
    , m_watcher(new QFutureWatcher<EndpointCheck>(this))
{
    qRegisterMetaType<kf::app::EndpointCheck>();
    setObjectName(QStringLiteral("runnersPage"));
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(tr("Where verify, benchmark and profile run: this machine's runner, a GPU server over ssh, a "
                                "Slurm job or any command. Stored in <code>%1</code>, which <code>kforge "
                                "--runner-endpoint</code> reads too (docs/runners.md).")
                                 .arg(m_file.toHtmlEscaped()),
                             this);
    intro->setWordWrap(true);
    intro->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(intro);

    buildTable();
    layout->addWidget(m_table, 1);

    layout->addLayout(buildButtons());

    m_checkText = new QLabel(this);
    m_checkText->setObjectName(QStringLiteral("checkResult"));
    m_checkText->setWordWrap(true);
    m_checkText->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_checkText);

    layout->addLayout(buildPickers());

    m_problem = makeProblemLabel(QStringLiteral("runnersProblem"));
    layout->addWidget(m_problem);

    wireSignals();
    load();
}

void RunnersPage::buildTable()
{
    m_table = new QTableWidget(0, ColumnCount, this);
    m_table->setObjectName(QStringLiteral("runnersTable"));
    m_table->setHorizontalHeaderLabels({tr("Name"), tr("Kind"), tr("Where"), tr("Files"), tr("Last check")});
    m_table->horizontalHeader()->setSectionResizeMode(WhereColumn, QHeaderView::Stretch);
    m_table->horizontalHeader()->setSectionResizeMode(CheckColumn, QHeaderView::Stretch);
    m_table->verticalHeader()->setVisible(false);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setWordWrap(false);
    m_table->horizontalHeaderItem(FilesColumn)->setToolTip(
        tr("Whether the runner sees this machine's task folders at the same paths. One that does not is sent the "
           "task files it lacks before each run, by content."));
}

QHBoxLayout* RunnersPage::buildButtons()
{
    auto* buttons = new QHBoxLayout;
    m_add = new QPushButton(tr("&Add…"), this);
    m_add->setObjectName(QStringLiteral("addEndpoint"));
    m_edit = new QPushButton(tr("&Edit…"), this);
    m_edit->setObjectName(QStringLiteral("editEndpoint"));
    m_remove = new QPushButton(tr("&Remove"), this);
    m_remove->setObjectName(QStringLiteral("removeEndpoint"));
    m_check = new QPushButton(tr("&Check"), this);
    m_check->setObjectName(QStringLiteral("checkEndpoint"));
    m_check->setToolTip(tr("Start the selected endpoint's runner and show its host, GPU, compute-sanitizer and round "
                           "trip (kforge runners check)"));
    m_reload = new QPushButton(tr("Re&load File"), this);
    m_reload->setObjectName(QStringLiteral("reloadRunners"));
    m_reload->setToolTip(tr("Read runners.json again (after editing it by hand); unsaved changes here are lost."));
    buttons->addWidget(m_add);
    buttons->addWidget(m_edit);
    buttons->addWidget(m_remove);
    buttons->addSpacing(12);
    buttons->addWidget(m_check);
    buttons->addStretch(1);
    buttons->addWidget(m_reload);
    return buttons;
}

// runners.json's default endpoint and the one this workbench runs on.
QFormLayout* RunnersPage::buildPickers()
{
    auto* form = new QFormLayout;
    m_default = new QComboBox(this);
    m_default->setObjectName(QStringLiteral("defaultEndpoint"));
    m_default->setToolTip(tr("runners.json's \"default\": where kforge runs without --runner-endpoint"));
    m_workbench = new QComboBox(this);
    m_workbench->setObjectName(QStringLiteral("workbenchEndpoint"));
    m_workbench->setToolTip(tr("Where Verify, Benchmark and Profile run in this workbench; the change takes effect at the next run"));
    form->addRow(tr("&Default endpoint:"), m_default);
    form->addRow(tr("The &workbench runs on:"), m_workbench);
    return form;
}

void RunnersPage::wireSignals()
{
    connect(m_add, &QPushButton::clicked, this, [this] { editRow(-1); });
    connect(m_edit, &QPushButton::clicked, this, [this] { editRow(m_table->currentRow()); });
    connect(m_table, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
        if (canEdit(row))
            editRow(row);
    });
    connect(m_remove, &QPushButton::clicked, this, [this] { removeEndpoint(m_table->currentRow()); });
    connect(m_check, &QPushButton::clicked, this, [this] {
        if (isChecking())
            cancelCheck();
        else
            check(m_table->currentRow());
    });
    connect(m_reload, &QPushButton::clicked, this, &RunnersPage::load);
    connect(m_table, &QTableWidget::currentCellChanged, this, [this] {
        updateButtons();
        showCheck();
    });
    connect(m_default, &QComboBox::currentIndexChanged, this, [this] {
        if (m_loading || m_default->currentIndex() < 0)
            return;
        m_config.defaultEndpoint = m_default->currentText().toStdString();
        // Not refreshPickers(): this combo is not refilled from inside its own signal.
        m_workbench->setItemText(0, tr("the default endpoint (%1)").arg(qs(m_config.defaultEndpoint)));
        fill();
        edited();
    });
    connect(m_workbench, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_loading)
            emit changed();
    });
    connect(m_watcher, &QFutureWatcher<EndpointCheck>::finished, this, [this] {
        EndpointCheck result = m_watcher->result();
        m_checking.clear();
        m_cancel.reset();
        m_checks.insert(result.endpoint, result);
        fill();
        updateButtons();
        showCheck();
        emit checkFinished(result);
    });
}

RunnersPage::~RunnersPage()
{
    // The check holds only copies: it ends by itself, sooner when told to.
    if (m_cancel)
        m_cancel->cancel();
}

bool RunnersPage::load()
{
    beginLoad();
    auto config = kf::readRunnersConfig(m_file.toStdString());
    if (!config) {
        fileDoesNotRead(config.error());
        m_config = kf::RunnersConfig{};
    } else {
        m_config = std::move(config.value());
    }
    const QString workbench = workbenchEndpoint();
    refreshPickers();
    setWorkbenchEndpoint(workbench);
    fill();
    for (QWidget* w : std::initializer_list<QWidget*>{m_table, m_add, m_edit, m_remove, m_check, m_default, m_workbench})
        w->setEnabled(m_loadError.isEmpty());
    updateButtons();
    return endLoad();
}

void RunnersPage::fill()
{
    const int current = m_table->currentRow();
    m_table->setRowCount(0);
    auto addRow = [this](const kf::Endpoint& e, const QString& name, const QString& where) {
        const int row = m_table->rowCount();
        m_table->insertRow(row);
        auto* nameItem = new QTableWidgetItem(name);
        if (e.name == m_config.defaultEndpoint) {
            QFont f = nameItem->font();
            f.setBold(true);
            nameItem->setFont(f);
            nameItem->setToolTip(tr("runners.json's default endpoint"));
        }
        m_table->setItem(row, NameColumn, nameItem);
        m_table->setItem(row, KindColumn, new QTableWidgetItem(QString::fromLatin1(kf::Endpoint::kindName(e.kind))));
        auto* whereItem = new QTableWidgetItem(where);
        whereItem->setToolTip(qs(e.describe()));
        m_table->setItem(row, WhereColumn, whereItem);
        m_table->setItem(row, FilesColumn, new QTableWidgetItem(e.sharedFs ? tr("shared") : tr("not shared")));
        QString last;
        if (m_checking == name)
            last = tr("checking…");
        else if (auto it = m_checks.constFind(name); it != m_checks.constEnd())
            last = it->cancelled ? tr("cancelled")
                   : it->ok      ? (it->gpu.isEmpty() ? tr("ok · no GPU") : tr("ok · %1").arg(it->gpu))
                                 : tr("failed");
        auto* lastItem = new QTableWidgetItem(last);
        if (auto it = m_checks.constFind(name); it != m_checks.constEnd())
            lastItem->setToolTip(it->text());
        m_table->setItem(row, CheckColumn, lastItem);
    };
    for (const kf::Endpoint& e : m_config.endpoints)
        addRow(e, qs(e.name), whereText(e));
    for (const kf::Endpoint& t : m_config.allGpuTemplates)
        addRow(t, qs(t.name) + QStringLiteral("/*"), tr("one endpoint per GPU the runner sees · ") + whereText(t));
    m_table->resizeColumnToContents(NameColumn);
    m_table->resizeColumnToContents(KindColumn);
    m_table->resizeColumnToContents(FilesColumn);
    if (current >= 0 && current < m_table->rowCount())
        m_table->setCurrentCell(current, NameColumn);
    else if (m_table->rowCount() > 0 && current < 0)
        m_table->setCurrentCell(0, NameColumn);
}

void RunnersPage::refreshPickers()
{
    const bool wasLoading = m_loading;
    m_loading = true;
    const QString workbench = workbenchEndpoint();
    {
        const QSignalBlocker block(m_default);
        m_default->clear();
        for (const kf::Endpoint& e : m_config.endpoints)
            m_default->addItem(qs(e.name));
        m_default->setCurrentIndex(std::max(0, m_default->findText(qs(m_config.defaultEndpoint))));
    }
    {
        const QSignalBlocker block(m_workbench);
        m_workbench->clear();
        m_workbench->addItem(tr("the default endpoint (%1)").arg(qs(m_config.defaultEndpoint)), QString());
        for (const kf::Endpoint& e : m_config.endpoints)
            m_workbench->addItem(qs(e.name), qs(e.name));
    }
    setWorkbenchEndpoint(workbench);
    m_loading = wasLoading;
}

QString RunnersPage::defaultEndpoint() const { return qs(m_config.defaultEndpoint); }

void RunnersPage::setDefaultEndpoint(const QString& name)
{
    const int i = m_default->findText(name);
    if (i >= 0)
        m_default->setCurrentIndex(i);
}

QString RunnersPage::workbenchEndpoint() const { return m_workbench->currentData().toString(); }

void RunnersPage::setWorkbenchEndpoint(const QString& name)
{
    const QSignalBlocker block(m_workbench);
    int i = m_workbench->findData(name);
    if (i < 0) {
        // A name the file no longer has stays visible, so the user sees why runs fall back.
        m_workbench->addItem(tr("%1 (not in runners.json)").arg(name), name);
        i = m_workbench->count() - 1;
    }
    m_workbench->setCurrentIndex(i);
    if (!m_loading)
        emit changed();
}

void RunnersPage::updateButtons()
{
    const int row = m_table->currentRow();
    const bool ok = m_loadError.isEmpty();
    QString why;
    m_edit->setEnabled(ok && canEdit(row, &why));
    m_edit->setToolTip(why);
    why.clear();
    m_remove->setEnabled(ok && canRemove(row, &why));
    m_remove->setToolTip(why);
    m_check->setText(isChecking() ? tr("Cancel &Check") : tr("&Check"));
    m_check->setEnabled(ok && (isChecking() || (row >= 0 && row < int(m_config.endpoints.size()))));
}

bool RunnersPage::canEdit(int row, QString* why) const
{
    if (!m_loadError.isEmpty()) {
        if (why)
            *why = m_loadError;
        return false;
    }
    if (row < 0 || row >= m_table->rowCount())
        return false;
    if (row >= int(m_config.endpoints.size())) {
        if (why)
            *why = tr("Made by a \"gpus\": \"all\" entry: edit it in runners.json.");
        return false;
    }
    if (const QString entry = gpusEntry(m_config.endpoints[size_t(row)]); !entry.isEmpty()) {
        if (why)
            *why = tr("One of the endpoints the \"gpus\" entry %1 makes: edit that entry in runners.json.").arg(entry);
        return false;
    }
    return true;
}

bool RunnersPage::canRemove(int row, QString* why) const
{
    if (!canEdit(row, why))
        return false;
    if (isBuiltInLocal(m_config.endpoints[size_t(row)])) {
        if (why)
            *why = tr("\"local\" is this machine's runner and always exists; edit it instead.");
        return false;
    }
    return true;
}

QString RunnersPage::judge(const kf::RunnersConfig& config) const
{
    // The engine's reader is the judge: what it refuses here, kforge would refuse too.
    auto parsed = kf::parseRunnersConfig(config.toJson(), tr("the Runners table").toStdString());
    return parsed ? QString() : qs(parsed.error().message());
}

kf::Result<void> RunnersPage::write() const
{
    return kf::writeRunnersConfig(m_file.toStdString(), m_config);
}

bool RunnersPage::addEndpoint(const kf::Endpoint& endpoint, QString* error)
{
    if (!m_loadError.isEmpty()) { // the file stays as it is until it reads
        if (error)
            *error = m_loadError;
        return false;
    }
    kf::RunnersConfig next = m_config;
    next.endpoints.push_back(endpoint);
    if (const QString problem = judge(next); !problem.isEmpty()) {
        if (error)
            *error = problem;
        return false;
    }
    m_config = std::move(next);
    refreshPickers();
    fill();
    m_table->setCurrentCell(int(m_config.endpoints.size()) - 1, NameColumn);
    edited();
    return true;
}

bool RunnersPage::setEndpoint(int row, const kf::Endpoint& endpoint, QString* error)
{
    if (!canEdit(row, error))
        return false;
    kf::RunnersConfig next = m_config;
    const std::string old = next.endpoints[size_t(row)].name;
    next.endpoints[size_t(row)] = endpoint;
    // A rename follows into the default and the pools.
    if (old != endpoint.name) {
        if (next.defaultEndpoint == old)
            next.defaultEndpoint = endpoint.name;
        for (auto& [pool, members] : next.pools)
            std::replace(members.begin(), members.end(), old, endpoint.name);
    }
    if (const QString problem = judge(next); !problem.isEmpty()) {
        if (error)
            *error = problem;
        return false;
    }
    m_config = std::move(next);
    if (old != endpoint.name) {
        if (workbenchEndpoint() == qs(old)) {
            refreshPickers();
            setWorkbenchEndpoint(qs(endpoint.name));
        }
        m_checks.remove(qs(old));
    }
    refreshPickers();
    fill();
    edited();
    return true;
}

void RunnersPage::removeEndpoint(int row)
{
    if (!canRemove(row))
        return;
    const std::string name = m_config.endpoints[size_t(row)].name;
    m_config.endpoints.erase(m_config.endpoints.begin() + row);
    if (m_config.defaultEndpoint == name)
        m_config.defaultEndpoint = "local";
    for (auto it = m_config.pools.begin(); it != m_config.pools.end();) {
        std::erase(it->second, name);
        it = it->second.empty() ? m_config.pools.erase(it) : std::next(it);
    }
    m_checks.remove(qs(name));
    refreshPickers();
    fill();
    edited();
}

void RunnersPage::editRow(int row)
{
    const bool adding = row < 0;
    if (!adding && !canEdit(row))
        return;
    kf::Endpoint start;
    if (adding) {
        start.name = "gpu-box";
        for (int i = 2; m_config.find(start.name); ++i)
            start.name = "gpu-box-" + std::to_string(i);
        start.kind = Kind::Ssh;
        start.sharedFs = false;
        start.launchLatencyMs = 2000;
    } else {
        start = m_config.endpoints[size_t(row)];
    }
    // The dialog asks the reader about the configuration with this endpoint in its place.
    EndpointDialog dialog(start, [this, row, adding](const kf::Endpoint& e) {
        kf::RunnersConfig next = m_config;
        if (adding) {
            next.endpoints.push_back(e);
        } else {
            const std::string old = next.endpoints[size_t(row)].name;
            next.endpoints[size_t(row)] = e;
            if (next.defaultEndpoint == old)
                next.defaultEndpoint = e.name;
            for (auto& [pool, members] : next.pools)
                std::replace(members.begin(), members.end(), old, e.name);
        }
        return judge(next);
    }, this);
    dialog.setWindowTitle(adding ? tr("Add Runner Endpoint") : tr("Edit Runner Endpoint %1").arg(qs(start.name)));
    if (dialog.exec() != QDialog::Accepted)
        return;
    QString error;
    const bool ok = adding ? addEndpoint(dialog.endpoint(), &error) : setEndpoint(row, dialog.endpoint(), &error);
    if (!ok)
        m_problem->setText(error);
}

bool RunnersPage::check(int row)
{
    if (isChecking() || row < 0 || row >= int(m_config.endpoints.size()) || !m_loadError.isEmpty())
        return false;
    const kf::Endpoint e = m_config.endpoints[size_t(row)];
    m_cancel = std::make_shared<kf::CancelToken>();
    m_checking = qs(e.name);
    // Off the UI thread: a start may take a while (ssh, an srun queue, LibTorch's start-up).
    m_watcher->setFuture(QtConcurrent::run([e, runner = m_localRunner, cancel = m_cancel] {
        return checkEndpoint(e, runner, cancel.get());
    }));
    fill();
    updateButtons();
    m_checkText->setText(tr("%1: starting its runner… (Cancel Check stops it)").arg(m_checking));
    return true;
}

void RunnersPage::cancelCheck()
{
    if (m_cancel)
        m_cancel->cancel();
}

bool RunnersPage::isChecking() const { return !m_checking.isEmpty(); }

const EndpointCheck* RunnersPage::lastCheck(const QString& endpoint) const
{
    auto it = m_checks.constFind(endpoint);
    return it == m_checks.constEnd() ? nullptr : &*it;
}

void RunnersPage::showCheck()
{
    if (isChecking())
        return;
    const int row = m_table->currentRow();
    if (row < 0 || row >= int(m_config.endpoints.size())) {
        m_checkText->clear();
        return;
    }
    const QString name = qs(m_config.endpoints[size_t(row)].name);
    const EndpointCheck* c = lastCheck(name);
    m_checkText->setText(c ? QStringLiteral("%1: %2").arg(name, c->text())
                           : tr("%1: not checked yet (Check starts its runner)").arg(name));
}

} // namespace kf::app
