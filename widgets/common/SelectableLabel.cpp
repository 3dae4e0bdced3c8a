#include "widgets/common/SelectableLabel.h"

#include <QLabel>

namespace kf::ui {

QLabel* selectableLabel(const QString& objectName, QWidget* parent, Qt::TextInteractionFlags flags)
{
    auto* label = new QLabel(parent);
    if (!objectName.isEmpty())
        label->setObjectName(objectName);
    label->setWordWrap(true);
    label->setTextInteractionFlags(flags);
    return label;
}

} // namespace kf::ui
