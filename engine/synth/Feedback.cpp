#include "engine/synth/Feedback.h"

#include "engine/core/Text.h"
#include "engine/protocol/BenchReport.h"
#include "engine/protocol/VerifyReport.h"

#include <cstdio>

namespace kf::synth {
namespace {

std::string num(double v, const char* fmt = "%.4g")
{
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, v);
    return buf;
}

std::string clip(const std::string& s, size_t max)
{
    return s.size() > max ? text::clipUtf8(s, max) + " …" : s;
}

} // namespace

std::string compileFeedback(const std::vector<Diagnostic>& diagnostics, const std::string& file, size_t max)
{
    std::string out;
    size_t shown = 0;
    for (int pass = 0; pass < 2; ++pass)
        for (const Diagnostic& d : diagnostics) {
            const bool error = d.severity == Diagnostic::Severity::Error;
            if ((pass == 0) != error || shown >= max)
                continue;
            out += file + ":" + std::to_string(d.line) + ":" + std::to_string(d.column) + ": "
                   + (error ? "error: " : "warning: ") + clip(d.message, 600) + "\n";
            ++shown;
        }
    if (diagnostics.size() > shown)
        out += "(" + std::to_string(diagnostics.size() - shown) + " more diagnostics not shown)\n";
    if (out.empty())
        out = "the compiler reported no diagnostic, but the build failed\n";
    return out;
}

std::string verifyFeedback(const protocol::RunReport& report)
{
    const protocol::Header& h = report.header();
    std::string out;
    if (h.isError())
        out += "The run ended with an error: " + h.errorSentence() + "\n";
    if (report.verify()) {
        int detailed = 0;
        for (const protocol::CorrectnessShape& s : report.verify()->shapes) {
            const protocol::ShapeSummary sum = s.summary();
            out += "- " + s.id.text(true) + ": " + (sum.passed ? "pass" : "FAIL");
            if (!sum.passed)
                out += " (" + std::to_string(sum.mismatches) + " of " + std::to_string(sum.elements) + " elements outside tolerance"
                       + (sum.unwritten ? ", " + std::to_string(sum.unwritten) + " never written" : std::string()) + ")";
            out += "\n";
            if (!sum.passed && detailed < 2) {
                if (const protocol::Trial* t = s.firstFailingTrial()) {
                    ++detailed;
                    int lines = 0;
                    for (const std::string& line : t->evidence())
                        if (lines++ < 14)
                            out += "    " + clip(line, 300) + "\n";
                }
            }
            if (out.size() > 6000) {
                out += "(more shapes not shown)\n";
                break;
            }
        }
    }
    if (!h.summary.empty() && !h.isError())
        out += "Summary: " + clip(h.summary, 500) + "\n";
    return out;
}

std::string benchFeedback(const protocol::RunReport& report)
{
    std::string out;
    if (!report.bench()) {
        out = report.header().isError() ? "The benchmark ended with an error: " + report.header().errorSentence() + "\n"
                                      : std::string("No benchmark report.\n");
        return out;
    }
    const protocol::BenchReport& b = *report.bench();
    for (const protocol::BenchShape& s : b.shapes) {
        out += "- " + s.id.text(false) + ": yours " + (s.candidate.medianMs ? num(*s.candidate.medianMs) + " ms" : "?")
               + ", eager LibTorch " + (s.baseline.medianMs ? num(*s.baseline.medianMs) + " ms" : "?");
        if (s.speedup)
            out += ", " + num(*s.speedup, "%.3g") + "x";
        if (s.achievedGbs)
            out += ", " + num(*s.achievedGbs, "%.0f") + " GB/s";
        if (s.pctPeakBandwidth)
            out += " (" + num(*s.pctPeakBandwidth, "%.0f") + " % of peak)";
        if (s.rooflineFloorMs)
            out += ", roofline floor " + num(*s.rooflineFloorMs) + " ms";
        if (s.compile && s.compile->speedup)
            out += ", " + num(*s.compile->speedup, "%.3g") + "x over torch.compile";
        const std::vector<std::string> flags = s.allFlags();
        if (!flags.empty()) {
            out += " [";
            for (size_t i = 0; i < flags.size(); ++i)
                out += (i ? ", " : "") + flags[i];
            out += "]";
        }
        out += "\n";
    }
    if (b.geomeanSpeedup)
        out += "Geometric mean speedup over eager LibTorch: " + num(*b.geomeanSpeedup, "%.3g") + "x\n";
    if (auto c = b.compileSpeedup())
        out += "Geometric mean speedup over torch.compile: " + num(*c, "%.3g") + "x\n";
    return out;
}

std::string reportLine(const protocol::RunReport& report)
{
    const protocol::Header& h = report.header();
    if (h.isError())
        return "error: " + clip(h.errorSentence(), 300);
    if (report.verify()) {
        if (h.passed())
            return "PASS on " + std::to_string(report.verify()->shapes.size()) + " shapes";
        return "FAIL: " + clip(h.summary.empty() ? std::string("some shapes failed") : h.summary, 300);
    }
    if (report.bench() && report.bench()->geomeanSpeedup)
        return num(*report.bench()->geomeanSpeedup, "%.3g") + "x over eager LibTorch";
    return protocol::verdictName(h.verdict);
}

} // namespace kf::synth
