#pragma once
// What goes back to the model after a step (docs/synthesis.md, "What the model is told"): compile
// diagnostics with their line and column, the verifier's first failures, the benchmark's medians
// and roofline position. Plain text, bounded, built only from reports we made.

#include "engine/compile/Diagnostic.h"
#include "engine/protocol/RunReport.h"

#include <string>
#include <vector>

namespace kf::synth {

/// At most `max` diagnostics, errors first, each "kernel.cu:12:5: error: ...".
std::string compileFeedback(const std::vector<Diagnostic>& diagnostics, const std::string& file, size_t max = 20);

/// Per shape its verdict; for the first failing shapes the evidence of the first failing trial;
/// an error verdict's sentence. About 6 KiB at most.
std::string verifyFeedback(const protocol::RunReport& report);

/// Per benchmark shape: candidate and eager medians, speedup, achieved GB/s and % of peak, the
/// roofline floor; the geometric mean; torch.compile's speedup when measured.
std::string benchFeedback(const protocol::RunReport& report);

/// One line for logs and the conversation: "PASS on 9 shapes", "FAIL: ...", "1.84x over eager".
std::string reportLine(const protocol::RunReport& report);

} // namespace kf::synth
