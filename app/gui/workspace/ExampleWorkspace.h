#pragma once
// The bundled example workspace, copied for the user on first start: edits, saves and new
// candidates then land in the user's own folder, never in the installation or the source tree.
#include <QString>

namespace kf::app {

/// `<AppLocalDataLocation>/examples`, filled from the bundled examples (KF_EXAMPLES_DIR) when it
/// does not exist yet; an existing copy is left alone (it holds the user's work). On failure
/// returns the bundled folder itself and puts the reason in `warning`.
QString userExampleWorkspace(QString* warning = nullptr);

/// Copies the folder tree `from` into `to` (created); false with a sentence on the first failure.
bool copyFolder(const QString& from, const QString& to, QString* error);

} // namespace kf::app
