#pragma once
// Shared by the Bencher's two units (Bencher.cpp: the run, a shape's set-up and its timed calls;
// BencherSamples.cpp: the sampling loop and a shape's entry of the report). Not for other code.

#include "device/runner/Bencher.h"
#include "device/runner/TorchBridge.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kf::device::bencher {

constexpr int kInputSets = 3;
constexpr std::uint64_t kGuardSalt = 0xb3c4ull;
constexpr std::uint64_t kInputSalt = 0x2000ull;
constexpr std::uint64_t kRecheckSalt = 0x7e000ull;
constexpr std::uint64_t kSentinelSalt = 0x5e00ull;

inline double round3(double v)
{
    return std::round(v * 1e3) / 1e3;
}

} // namespace kf::device::bencher

namespace kf::device {

// Everything one benchmark shape owns; freed when the shape is done (bounded memory).
struct Bencher::Shape {
    const ShapeRef* ref = nullptr;
    std::string name;
    std::vector<TensorLayout> layout;
    std::vector<BufferSet> inputs;                          ///< kInputSets rotating sets
    BufferSet outputs;                                      ///< outputs and scratch, shared by all sets
    std::vector<std::unique_ptr<TorchBridge::Reference>> references; ///< one per input set
    std::vector<std::vector<BoundLaunch>> launches;         ///< per input set
    std::vector<std::vector<unsigned char>> sentinels[2];   ///< [variant][output]
    std::vector<std::uint64_t> fingerprints;                ///< the re-checked set's inputs, keyed (TorchBridge::fingerprint)
    std::uint64_t recheckSeed = 0;                          ///< regenerates those inputs exactly
    std::uint64_t fingerprintKey = 0;
    std::string recheckProblem;                             ///< guard or input finding of the re-check
};

// What the sampling loop of one shape measured.
struct Bencher::Samples {
    std::vector<double> cand, base;     ///< per sample, the candidate's and the baseline's call time
    double wallSum = 0, windowSum = 0;
    double recheckMs = 0;               ///< counted in the cap like everything else; reported so a user sees where time went
    int rechecks = 0;
    std::string recheckFailure;
    bool spreadReached = false;
    std::string stoppedBy = "max_samples";
};

} // namespace kf::device
