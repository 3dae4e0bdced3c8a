#pragma once
// Reports written as JSON in a test, read the way the product reads them (protocol::RunReport).
// A fixture that the reader refuses is a broken test, so it stops the test run with the reason.
#include "engine/protocol/RunReport.h"

#include <QtGlobal>

#include <nlohmann/json.hpp>

namespace kf::test {

inline kf::protocol::RunReport report(const nlohmann::json& j)
{
    auto r = kf::protocol::RunReport::fromJson(j, "test fixture");
    if (!r)
        qFatal("a test's report fixture does not read: %s", r.error().message().c_str());
    return std::move(r.value());
}

/// A compute-sanitizer section as the runner writes it (docs/report-schema.md, "sanitizer"), for
/// report fixtures: every tool ran for 2.4 s in all on two shapes; one memcheck out-of-bounds read
/// in `kernel` at each of `findingLines` of `file` (none: clean). Made-up findings, not a tool's.
inline nlohmann::json sanitizerSectionJson(const std::vector<int>& findingLines, const std::string& file = "optimized.cu",
                                           const std::string& kernel = "softmax_block")
{
    kf::protocol::SanitizerSection s;
    s.ran = true;
    s.toolVersion = "2025.3.1.0";
    s.toolPath = "/usr/local/cuda/bin/compute-sanitizer";
    s.shapes = {"B=3 D=97", "B=5 D=4099"};
    s.seed = "0x1";
    s.durationMs = 2400;
    for (const char* tool : {"memcheck", "racecheck", "initcheck", "synccheck"}) {
        kf::protocol::SanitizerToolRun t;
        t.tool = tool;
        t.ran = true;
        t.durationMs = 2000;
        t.findings = std::string(tool) == "memcheck" ? std::int64_t(findingLines.size()) : 0;
        s.tools.push_back(t);
    }
    for (int line : findingLines) {
        kf::protocol::SanitizerFinding f;
        f.tool = "memcheck";
        f.kind = "oob_read";
        f.description = "Invalid __global__ read of size 4 bytes";
        f.where.access = "read";
        f.where.kernel = kernel;
        f.where.file = file;
        f.where.line = line;
        f.where.block = std::array<std::int64_t, 3>{0, 0, 0};
        f.where.thread = std::array<std::int64_t, 3>{96, 0, 0};
        f.space = "__global__";
        f.size = 4;
        s.findings.push_back(f);
    }
    return kf::protocol::toJson(s);
}

} // namespace kf::test
