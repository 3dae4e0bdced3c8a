#pragma once
// The colours and icons of verdicts, shared by the results table, the banner and the log so that
// "pass" is the same green everywhere. Colours are picked for the palette in use: a red that
// reads on white is too dark on a dark window.

#include <QColor>
#include <QIcon>
#include <QPalette>

namespace kf::ui {

enum class Tone { Neutral, Good, Warning, Bad };

namespace verdictstyle {

/// Text colour of a tone on `palette`'s base/window colours; Neutral is the palette's text colour.
QColor color(Tone tone, const QPalette& palette);
/// A small filled dot in the tone's colour (a null icon for Neutral). GUI thread only.
QIcon icon(Tone tone, const QPalette& palette);

} // namespace verdictstyle
} // namespace kf::ui
