#include "widgets/task/FormSection.h"

#include "widgets/common/SelectableLabel.h"

#include <QLabel>
#include <QVBoxLayout>

namespace kf::ui {

FormSection::FormSection(const QString& title, QWidget* parent) : QGroupBox(title, parent)
{
    auto* layout = new QVBoxLayout(this);
    m_message = selectableLabel(QStringLiteral("sectionMessage"), this);
    m_message->setStyleSheet(QStringLiteral("color: #b00020; font-weight: 600;"));
    m_message->hide();
    layout->addWidget(m_message);
    m_body = new QVBoxLayout;
    m_body->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(m_body);
}

void FormSection::setMessage(const QString& message)
{
    m_message->setText(message);
    m_message->setVisible(!message.isEmpty());
}

QString FormSection::message() const
{
    return m_message->isVisibleTo(this) ? m_message->text() : QString();
}

} // namespace kf::ui
