#include "app/gui/settings/ModelsPage.h"

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace kf::app {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

const char* const kNone = QT_TRANSLATE_NOOP("kf::app::ModelsPage", "(none)");

} // namespace

ModelsPage::ModelsPage(const QString& file, QWidget* parent)
    : ConfigFilePage(file.isEmpty() ? qs(kf::synth::modelsConfigPath().string()) : file, parent)
{
    setObjectName(QStringLiteral("modelsPage"));
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(tr("The language models the Assistant and <code>kforge synth</code> may use, stored in "
                                "<code>%1</code>.").arg(m_file.toHtmlEscaped()),
                             this);
    intro->setWordWrap(true);
    intro->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(intro);

    m_table = new QTableWidget(0, ColumnCount, this);
    m_table->setObjectName(QStringLiteral("modelsTable"));
    m_table->setHorizontalHeaderLabels({tr("Name"), tr("Provider"), tr("Base URL"), tr("Model"), tr("API key variable"),
                                        tr("$ in / M tok"), tr("$ out / M tok")});
    m_table->horizontalHeader()->setSectionResizeMode(BaseUrl, QHeaderView::Stretch);
    m_table->verticalHeader()->setVisible(false);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->horizontalHeaderItem(BaseUrl)->setToolTip(
        tr("OpenAI-compatible: the base /chat/completions is appended to (http://127.0.0.1:8000/v1). "
           "Anthropic: the base /v1/messages is appended to (https://api.anthropic.com)."));
    m_table->horizontalHeaderItem(KeyVariable)->setToolTip(tr("The name of the environment variable that holds the key, "
                                                              "e.g. ANTHROPIC_API_KEY; empty for servers without keys."));
    layout->addWidget(m_table, 1);

    auto* buttons = new QHBoxLayout;
    m_add = new QPushButton(tr("&Add Model"), this);
    m_add->setObjectName(QStringLiteral("addModel"));
    m_remove = new QPushButton(tr("&Remove"), this);
    m_remove->setObjectName(QStringLiteral("removeModel"));
    auto* reload = new QPushButton(tr("Re&load File"), this);
    reload->setObjectName(QStringLiteral("reloadModels"));
    reload->setToolTip(tr("Read models.json again (after editing it by hand); unsaved changes in the table are lost."));
    buttons->addWidget(m_add);
    buttons->addWidget(m_remove);
    buttons->addStretch(1);
    buttons->addWidget(reload);
    layout->addLayout(buttons);

    auto* form = new QFormLayout;
    m_default = new QComboBox(this);
    m_default->setObjectName(QStringLiteral("defaultModel"));
    m_escalation = new QComboBox(this);
    m_escalation->setObjectName(QStringLiteral("escalationModel"));
    m_escalation->setToolTip(tr("Takes over after failed replies in a row (kforge synth --escalate-after)."));
    form->addRow(tr("&Default model:"), m_default);
    form->addRow(tr("&Escalation model:"), m_escalation);
    layout->addLayout(form);

    auto* keyNote = new QLabel(tr("The API key itself is never stored: only the name of the environment variable that "
                                  "holds it, read when a request is sent."),
                               this);
    keyNote->setObjectName(QStringLiteral("keyNote"));
    keyNote->setWordWrap(true);
    layout->addWidget(keyNote);
    m_problem = makeProblemLabel(QStringLiteral("modelsProblem"));
    layout->addWidget(m_problem);

    connect(m_add, &QPushButton::clicked, this, [this] { m_table->setCurrentCell(addModel(), Name); });
    connect(m_remove, &QPushButton::clicked, this, [this] {
        if (m_table->currentRow() >= 0)
            removeModel(m_table->currentRow());
    });
    connect(reload, &QPushButton::clicked, this, &ModelsPage::load);
    connect(m_table, &QTableWidget::itemChanged, this, [this](QTableWidgetItem* item) {
        if (item->column() == Name)
            refreshPickers();
        edited();
    });
    connect(m_default, &QComboBox::currentIndexChanged, this, &ModelsPage::edited);
    connect(m_escalation, &QComboBox::currentIndexChanged, this, &ModelsPage::edited);
    load();
}

QComboBox* ModelsPage::providerPicker(int row) const
{
    return qobject_cast<QComboBox*>(m_table->cellWidget(row, Provider));
}

void ModelsPage::setRow(int row, const kf::synth::NamedModel& m)
{
    const kf::synth::ModelConfig& c = m.config;
    auto text = [&](int column, const QString& value) { m_table->setItem(row, column, new QTableWidgetItem(value)); };
    text(Name, qs(m.name));
    text(BaseUrl, qs(c.baseUrl));
    text(Model, qs(c.model));
    text(KeyVariable, qs(c.apiKeyEnv));
    text(PriceIn, QString::number(c.priceInPerMTok, 'g', 10));
    text(PriceOut, QString::number(c.priceOutPerMTok, 'g', 10));
    auto* provider = new QComboBox(m_table);
    provider->addItem(QStringLiteral("openai"));
    provider->addItem(QStringLiteral("anthropic"));
    provider->setCurrentText(QString::fromLatin1(kf::synth::providerName(c.provider)));
    connect(provider, &QComboBox::currentIndexChanged, this, &ModelsPage::edited);
    m_table->setCellWidget(row, Provider, provider);
}

bool ModelsPage::load()
{
    beginLoad();
    m_table->setRowCount(0);
    m_base.clear();
    auto config = kf::synth::readModelsConfig(m_file.toStdString());
    if (!config) {
        fileDoesNotRead(config.error());
    } else {
        for (const kf::synth::NamedModel& m : config->models) {
            const int row = m_table->rowCount();
            m_table->insertRow(row);
            m_base.push_back(m.config);
            setRow(row, m);
        }
    }
    // A file that does not read is left alone: nothing here may edit it, only Reload.
    for (QWidget* w : std::initializer_list<QWidget*>{m_table, m_add, m_remove, m_default, m_escalation})
        w->setEnabled(m_loadError.isEmpty());
    m_rowNames.clear();
    refreshPickers();
    if (config) {
        m_default->setCurrentIndex(std::max(0, m_default->findText(qs(config->defaultModel))));
        m_escalation->setCurrentIndex(std::max(0, m_escalation->findText(qs(config->escalationModel))));
    }
    return endLoad();
}

void ModelsPage::refreshPickers()
{
    QStringList names;
    for (int r = 0; r < m_table->rowCount(); ++r)
        if (QTableWidgetItem* item = m_table->item(r, Name); item && !item->text().trimmed().isEmpty())
            names << item->text().trimmed();
    QStringList rowNames;
    for (int r = 0; r < m_table->rowCount(); ++r) {
        QTableWidgetItem* item = m_table->item(r, Name);
        rowNames << (item ? item->text().trimmed() : QString());
    }
    for (QComboBox* picker : {m_default, m_escalation}) {
        // A renamed model stays chosen: follow its row, not its old name.
        QString current = picker->currentIndex() > 0 ? picker->currentText() : QString();
        const qsizetype oldRow = current.isEmpty() ? -1 : m_rowNames.indexOf(current);
        if (oldRow >= 0 && oldRow < rowNames.size() && !rowNames[oldRow].isEmpty())
            current = rowNames[oldRow];
        const QSignalBlocker block(picker);
        picker->clear();
        picker->addItem(tr(kNone));
        picker->addItems(names);
        picker->setCurrentIndex(std::max(0, current.isEmpty() ? 0 : picker->findText(current)));
    }
    m_rowNames = rowNames;
}

int ModelsPage::addModel()
{
    m_loading = true;
    const int row = m_table->rowCount();
    m_table->insertRow(row);
    kf::synth::NamedModel m;
    m.name = "model-" + std::to_string(row + 1);
    m.config.baseUrl = "http://127.0.0.1:8000/v1";
    m_base.push_back(m.config);
    setRow(row, m);
    refreshPickers();
    m_loading = false;
    edited();
    return row;
}

void ModelsPage::removeModel(int row)
{
    if (row < 0 || row >= m_table->rowCount())
        return;
    m_table->removeRow(row);
    m_base.erase(m_base.begin() + row);
    if (row < m_rowNames.size())
        m_rowNames.removeAt(row);
    refreshPickers();
    edited();
}

kf::synth::ModelsConfig ModelsPage::config() const
{
    kf::synth::ModelsConfig out;
    auto cell = [&](int row, int column) {
        QTableWidgetItem* item = m_table->item(row, column);
        return item ? item->text().trimmed() : QString();
    };
    for (int r = 0; r < m_table->rowCount(); ++r) {
        kf::synth::NamedModel m;
        m.config = r < int(m_base.size()) ? m_base[size_t(r)] : kf::synth::ModelConfig{};
        m.name = cell(r, Name).toStdString();
        if (QComboBox* p = providerPicker(r))
            kf::synth::parseProvider(p->currentText().toStdString(), m.config.provider);
        m.config.baseUrl = cell(r, BaseUrl).toStdString();
        m.config.model = cell(r, Model).toStdString();
        m.config.apiKeyEnv = cell(r, KeyVariable).toStdString();
        bool ok = false;
        const double in = cell(r, PriceIn).isEmpty() ? 0 : cell(r, PriceIn).toDouble(&ok);
        m.config.priceInPerMTok = cell(r, PriceIn).isEmpty() || ok ? in : -1; // -1: the reader refuses it
        const double outPrice = cell(r, PriceOut).isEmpty() ? 0 : cell(r, PriceOut).toDouble(&ok);
        m.config.priceOutPerMTok = cell(r, PriceOut).isEmpty() || ok ? outPrice : -1;
        out.models.push_back(std::move(m));
    }
    out.defaultModel = m_default->currentIndex() > 0 ? m_default->currentText().toStdString() : std::string();
    out.escalationModel = m_escalation->currentIndex() > 0 ? m_escalation->currentText().toStdString() : std::string();
    return out;
}

QString ModelsPage::firstProblem() const
{
    const kf::synth::ModelsConfig c = config();
    for (size_t i = 0; i < c.models.size(); ++i)
        if (c.models[i].config.model.empty())
            return tr("Row %1: give the model's name as the server knows it.").arg(i + 1);
    // The engine's reader is the judge: what it refuses here, kforge synth would refuse too.
    auto parsed = kf::synth::parseModelsConfig(c.toJson(), tr("the Models table").toStdString());
    if (!parsed)
        return qs(parsed.error().message());
    return {};
}

kf::Result<void> ModelsPage::write() const
{
    return kf::synth::writeModelsConfig(m_file.toStdString(), config());
}

} // namespace kf::app
