#pragma once
// A static scan of a candidate's source for patterns that often mean a kernel games the judge
// (docs/agents.md, "The static scan"): state kept across launches in __device__ variables,
// launch counters, control flow steered by a clock, tests of pointer values, inline asm.
// Findings are warnings shown beside a verdict, never a verdict: the verifier catches the
// effects (two runs per trial, canaries, fingerprints, held-out shapes, re-checked timed calls),
// and a legitimate kernel may trip a rule.
//
// The scan reads tokens (comments, strings and preprocessor lines are not code), so the same
// words in a comment are silent. It is bounded: sources over kMaxScanBytes get one finding
// saying they were not scanned.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kf {

struct ScanFinding {
    int line = 0, column = 0;   ///< 1-based
    std::string rule;           ///< device-global-written, launch-counter, clock-control, pointer-value, inline-asm, not-scanned
    std::string message;        ///< one sentence
};

inline constexpr std::size_t kMaxScanBytes = 1 << 20;

std::vector<ScanFinding> scanSource(std::string_view source);

/// "agent.cu:12:5: warning: [launch-counter] …" lines, one per finding.
std::string scanText(const std::vector<ScanFinding>& findings, const std::string& file);

} // namespace kf
