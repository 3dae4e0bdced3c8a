#pragma once
// compute-sanitizer's findings as diagnostics beside the compiler's (docs/workbench.md,
// "compute-sanitizer findings"): each finding of a report's sanitizer section becomes an error at
// its source line, and racecheck's other access a note at its line. They belong to the source that
// was verified, so followEdits() keeps each one only while its line is unchanged.

#include "engine/compile/Diagnostic.h"
#include "engine/protocol/SanitizerReport.h"

#include <QString>

#include <vector>

namespace kf::ui {

/// The diagnostics of a sanitizer section for the candidate at `candidatePath` (a full path):
/// one error per finding (source "compute-sanitizer <tool>", code = the finding's kind, message =
/// SanitizerFinding::summary(), with the count when the tool merged repeats); a note at the other
/// access of a race when it is on another line; one error without a line per tool that failed.
/// A finding in the candidate's file names `candidatePath`, so the editor and the Problems panel
/// take it for that file; one elsewhere (a header) keeps the tool's file. Pure; any thread.
std::vector<kf::Diagnostic> sanitizerDiagnostics(const kf::protocol::SanitizerSection& section, const QString& candidatePath);

/// `diagnostics` were made for `verifiedText`, the text of `filePath`; returns those that still
/// point at the same code in `currentText`, each moved to its line there. A diagnostic whose line is
/// unchanged stays (edits above it move it along); one whose line was edited or deleted is dropped,
/// because it no longer says anything about what the editor shows, and so are the notes after it
/// (racecheck's other access). Diagnostics without a line, and those of other files (a header),
/// are kept as they are. Lines are matched by a
/// longest-common-subsequence of the two texts' lines. Pure; any thread.
std::vector<kf::Diagnostic> followEdits(const std::vector<kf::Diagnostic>& diagnostics, const QString& filePath,
                                        const QString& verifiedText, const QString& currentText);

} // namespace kf::ui
