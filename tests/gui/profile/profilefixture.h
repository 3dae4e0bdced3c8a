#pragma once
// Profile reports for the panel's tests: the recorded H100 reports in tests/data/profile, and
// small hand-made ones whose numbers are easy to check by hand.
#include "engine/protocol/ProfileReport.h"
#include "testpaths.h"

#include <QString>
#include <QTest>

#include <fstream>
#include <string>

namespace profiletest {

/// tests/data/profile/<name>.json through the engine's reader (which recomputes the totals).
inline kf::profile::ProfileReport load(const char* name)
{
    const std::string path = std::string(KF_TEST_DATA_DIR) + "/profile/" + name + ".json";
    std::ifstream in(path);
    if (!in)
        qFatal("cannot open %s", path.c_str());
    const auto json = nlohmann::json::parse(in);
    auto report = kf::profile::ProfileReport::fromJson(json, path);
    if (!report.ok())
        qFatal("%s", report.error().message().c_str());
    return *report;
}

/// A kernel with counters: `flops` as FADDs (one flop each), `bytes` split evenly over reads
/// and writes.
inline kf::profile::KernelRecord measuredKernel(const std::string& name, double durationNs, double bytes, double flops)
{
    kf::profile::KernelRecord k;
    k.name = name;
    k.demangled = name + "(float const*, float*, int)";
    k.grid = {1024, 1, 1};
    k.block = {256, 1, 1};
    k.metrics = {{"duration_ns", durationNs},
                 {"dram_read_bytes", bytes / 2},
                 {"dram_write_bytes", bytes / 2},
                 {"fp32_fadd", flops},
                 {"achieved_occupancy_pct", 80},
                 {"sm_throughput_pct", 30},
                 {"dram_throughput_pct", 70},
                 {"memory_throughput_pct", 72}};
    return k;
}

inline kf::profile::Side side(std::vector<kf::profile::KernelRecord> kernels)
{
    kf::profile::Side s;
    s.kernels = std::move(kernels);
    s.totals = kf::profile::totalsOf(s.kernels);
    return s;
}

/// The H100's ceilings as the recorded reports carry them.
inline kf::profile::Ceilings h100()
{
    kf::profile::Ceilings c;
    c.dramGbs = 3349.8;
    c.dramSource = "counters";
    c.fp32Gflops = 66900;
    c.fp16TensorGflops = 989400;
    return c;
}

inline kf::profile::Totals totals(double durationNs, double bytes, double flops)
{
    return kf::profile::totalsOf({measuredKernel("k", durationNs, bytes, flops)});
}

} // namespace profiletest
