#pragma once
// Shared by the Verifier's two units (Verifier.cpp: a trial's flow and verdict;
// VerifierCandidate.cpp: running the candidate on fresh state). Not for other code.

#include "device/DeviceMemory.h"
#include "device/runner/TorchBridge.h"
#include "device/runner/Verifier.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kf::device::verifier {

constexpr std::uint64_t kGuardSalt = 0x67a4d5ull;
constexpr std::uint64_t kInputSalt = 0x1000ull;
constexpr std::uint64_t kSentinelSalt = 0x5e00ull;
constexpr std::uint64_t kFingerprintSalt = 0xf19e7ull;
/// Up to this size an input is downloaded and compared on the host: cheaper than the dozen
/// kernels of a fingerprint.
constexpr std::size_t kFingerprintBytes = std::size_t{1} << 20;

struct InputChange {
    std::int64_t bytesChanged = 0;
    std::int64_t firstByte = -1;
};

InputChange diffBytes(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b);

} // namespace kf::device::verifier

namespace kf::device {

// Everything one trial observed about the candidate, before the reference exists.
struct Verifier::Trial {
    std::string launchError;
    std::vector<GuardViolation> guards;
    std::vector<std::string> guardWhen;
    std::vector<std::string> modified;
    std::map<std::string, verifier::InputChange> changes;
    std::vector<std::vector<unsigned char>> outputs[2];   ///< [run][output], outputs in task order
    std::vector<std::vector<unsigned char>> sentinel[2];  ///< [run][output]: one element's bytes
    std::uint64_t fingerprintKey = 0;                     ///< secret, per trial
    std::vector<std::uint64_t> inputPrints;               ///< the pristine inputs' fingerprints
    bool inputsDirty = false;                             ///< the last run changed an input
};

// A trial's references and the memory they read, alive until its case is saved.
struct Verifier::Expectation {
    std::vector<DeviceMemory> memory;              ///< the references' copy of the pristine inputs
    std::map<std::string, RawTensor> inputs;       ///< views of `memory`
    std::unique_ptr<TorchBridge::Reference> libtorch;
    std::unique_ptr<TorchBridge::Reference> golden;
    TorchBridge::Expected refs;                    ///< points at libtorch and golden
};

// A trial's outputs as judged, and the first sentence of each kind of failure.
struct Verifier::Comparison {
    nlohmann::json outs = nlohmann::json::array();
    std::string unwrittenFailure, mismatchFailure, disagreeFailure;
    std::vector<OutputCheck> checks;
    std::vector<std::int64_t> outputDisagreements;
    std::int64_t disagreements = 0;
    double maxDiff = 0;
};

} // namespace kf::device
