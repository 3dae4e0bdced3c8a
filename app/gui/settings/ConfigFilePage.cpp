#include "app/gui/settings/ConfigFilePage.h"

#include <QLabel>

namespace kf::app {

ConfigFilePage::ConfigFilePage(const QString& file, QWidget* parent)
    : QWidget(parent)
    , m_file(file)
{
}

QString ConfigFilePage::validationError() const
{
    if (!m_loadError.isEmpty())
        return {}; // nothing to save: the file stays as it is
    return firstProblem();
}

bool ConfigFilePage::save(QString* error)
{
    if (!m_modified || !m_loadError.isEmpty())
        return true;
    if (const QString problem = validationError(); !problem.isEmpty()) {
        if (error)
            *error = problem;
        return false;
    }
    if (auto w = write(); !w) {
        if (error)
            *error = QString::fromStdString(w.error().message());
        return false;
    }
    m_modified = false;
    return true;
}

QLabel* ConfigFilePage::makeProblemLabel(const QString& objectName)
{
    auto* label = new QLabel(this);
    label->setObjectName(objectName);
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setStyleSheet(QStringLiteral("color: #d9534f;"));
    return label;
}

void ConfigFilePage::beginLoad()
{
    m_loading = true;
    m_loadError.clear();
}

void ConfigFilePage::fileDoesNotRead(const kf::Error& why)
{
    // Never overwritten from here: only Reload reads it again once it is mended by hand.
    m_loadError = tr("%1 does not read, so it is left as it is: %2").arg(m_file, QString::fromStdString(why.message()));
}

bool ConfigFilePage::endLoad()
{
    m_loading = false;
    m_modified = false;
    m_problem->setText(m_loadError);
    emit changed();
    return m_loadError.isEmpty();
}

void ConfigFilePage::edited()
{
    if (m_loading)
        return;
    m_modified = true;
    const QString problem = validationError();
    m_problem->setText(m_loadError.isEmpty() ? problem : m_loadError);
    emit changed();
}

} // namespace kf::app
