#pragma once
// How the profile panel words numbers: SI units as Nsight Compute prints them (decimal bytes,
// GB/s, GFLOP/s), kernel names short enough for a dock, and the occupancy limiter in words.

#include "engine/protocol/MetricCatalog.h"
#include "engine/protocol/ProfileReport.h"

#include <QString>

#include <optional>

namespace kf::ui {

/// "61.8 %", "100 %"; "—" for nullopt.
QString percentText(std::optional<double> pct);
/// Decimal units, three significant digits: "268 MB", "1.07 GB", "512 B".
QString bytesText(double bytes);
/// "92.1 µs", "1.25 ms", "812 ns".
QString durationText(double ns);
/// "2.91 TB/s", "812 GB/s".
QString bandwidthText(double gbs);
/// "19.6 TFLOP/s", "812 GFLOP/s", "0 FLOP/s".
QString flopRateText(double gflops);
/// Large counts with an SI prefix: "1.07 G", "65.5 k", "12".
QString countText(double n);
/// "12.5 FLOP/B".
QString intensityText(double flopPerByte);
/// A catalogue metric's value in its unit (for the details table).
QString metricValueText(const kf::profile::MetricInfo& info, double value);

/// The demangled name without its parameter list ("softmax<256>"), for combos and headers.
QString shortKernelName(const kf::profile::KernelRecord& k);
/// "1024×1×1"; "—" when unknown (all zeros).
QString dimText(const std::array<std::int64_t, 3>& d);

/// The engine's limiter name ("shared_memory") as the panel says it ("shared memory").
QString limiterWords(const std::string& limiter);
/// Why the kernel cannot hold more warps, from its static numbers: "limited by registers:
/// 128 registers × 256 threads allow 2 blocks per SM (16 of 64 warps)". Empty when unknown.
QString limiterSentence(const kf::profile::KernelRecord& k);

} // namespace kf::ui
