#pragma once
// The label the workbench shows a sentence in that a user may want to copy (an error, a path,
// a summary): it wraps, and the mouse can select its text. The panels and the main window's
// dialogs make theirs here instead of repeating the three calls.

#include <QString>
#include <Qt>

class QLabel;
class QWidget;

namespace kf::ui {

/// A new word-wrapping QLabel owned by `parent`, named `objectName` (none when empty), whose
/// text `flags` can select (the mouse; some panels add the keyboard).
QLabel* selectableLabel(const QString& objectName, QWidget* parent,
                        Qt::TextInteractionFlags flags = Qt::TextSelectableByMouse);

} // namespace kf::ui
