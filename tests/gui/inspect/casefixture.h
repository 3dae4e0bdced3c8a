#pragma once
// Synthetic failing cases for the inspector tests, written with the engine's writeCase() so the
// files are exactly what the runner saves: a smooth float64 reference, an fp32 candidate equal to
// it (rounded), and elements planted wrong on purpose. The report's check is computed by
// compareOutput(), so the counts agree with the files unless a test tampers with them.
#include "engine/protocol/VerifyReport.h"
#include "engine/verify/CaseFiles.h"
#include "engine/verify/Compare.h"

#include <QString>

#include <cmath>
#include <functional>
#include <cstring>
#include <limits>
#include <vector>

namespace fixture {

struct CaseBuilder {
    std::vector<std::int64_t> extents;
    std::vector<double> expected;
    std::vector<float> actual;
    std::vector<float> input;
    std::vector<double> libtorch;  ///< LibTorch's result beside a golden `expected`; empty: none
    std::vector<unsigned char> sentinel = kf::sentinelBytes(kf::DType::F32, 0, 0x5eed);
    kf::Tolerance tol{1e-4, 1e-5, kf::Tolerance::AtolMode::Absolute};

    explicit CaseBuilder(std::vector<std::int64_t> e) : extents(std::move(e))
    {
        std::int64_t n = 1;
        for (auto x : extents)
            n *= x;
        const std::int64_t cols = extents.empty() ? 1 : extents.back();
        const std::int64_t rows = extents.size() >= 2 ? extents[extents.size() - 2] : 1;
        expected.resize(static_cast<size_t>(n));
        actual.resize(static_cast<size_t>(n));
        input.resize(static_cast<size_t>(n));
        for (std::int64_t i = 0; i < n; ++i) {
            const double c = static_cast<double>(i % cols), r = static_cast<double>((i / cols) % rows);
            const double slab = static_cast<double>(i / std::max<std::int64_t>(cols * rows, 1));
            expected[static_cast<size_t>(i)] = std::sin(r * 0.11) * std::cos(c * 0.07) + 0.3 * std::sin((r + c) * 0.031) + 0.1 * slab;
            actual[static_cast<size_t>(i)] = static_cast<float>(expected[static_cast<size_t>(i)]);
            input[static_cast<size_t>(i)] = static_cast<float>(std::cos(i * 0.01));
        }
    }

    std::int64_t flat(const std::vector<std::int64_t>& idx) const
    {
        std::int64_t f = 0;
        for (size_t a = 0; a < extents.size(); ++a)
            f = f * extents[a] + idx[a];
        return f;
    }
    void outside(const std::vector<std::int64_t>& idx, double delta = 0.5)
    {
        actual[static_cast<size_t>(flat(idx))] = static_cast<float>(expected[static_cast<size_t>(flat(idx))] + delta);
    }
    void nanActual(const std::vector<std::int64_t>& idx) { actual[static_cast<size_t>(flat(idx))] = std::numeric_limits<float>::quiet_NaN(); }
    void infActual(const std::vector<std::int64_t>& idx) { actual[static_cast<size_t>(flat(idx))] = std::numeric_limits<float>::infinity(); }
    void unwritten(const std::vector<std::int64_t>& idx)
    {
        std::memcpy(&actual[static_cast<size_t>(flat(idx))], sentinel.data(), sizeof(float));
    }
    void nanBoth(const std::vector<std::int64_t>& idx)
    {
        expected[static_cast<size_t>(flat(idx))] = std::numeric_limits<double>::quiet_NaN();
        actual[static_cast<size_t>(flat(idx))] = std::numeric_limits<float>::quiet_NaN();
    }

    /// Writes the case; `tamper` edits the report's check after it is computed.
    kf::Result<void> write(const QString& dir, const std::function<void(nlohmann::json&)>& tamper = {}) const
    {
        const kf::OutputCheck check = kf::compareOutput("y", kf::DType::F32, actual.data(), expected.data(), extents, tol,
                                                        sentinel.data(), 10, libtorch.empty() ? nullptr : libtorch.data());
        kf::CaseInfo info;
        info.taskName = "softmax_fp32";
        info.candidateFile = "optimized.cu";
        info.arch = "sm_90";
        info.shape.label = "tail";
        info.shape.values = {{"B", extents.empty() ? 1 : extents.front()}, {"D", extents.empty() ? 1 : extents.back()}};
        info.set = "tests";
        info.trial = 1;
        info.seed = "0x9e3779b97f4a7c15";
        info.failure = "y: " + std::to_string(check.mismatches) + " of " + std::to_string(check.elements) +
                       " elements outside tolerance";
        kf::CaseOutput out;
        out.name = "y";
        out.dtype = kf::DType::F32;
        out.atolEffective = check.atolEffective;
        out.rtol = check.rtol;
        out.sentinel[0] = sentinel;
        out.sentinel[1] = kf::sentinelBytes(kf::DType::F32, 1, 0x5eed);
        out.check = kf::protocol::toJson(check);
        if (tamper)
            tamper(out.check);
        info.outputs.push_back(out);
        auto meta = [&](const char* name, kf::CaseTensor::Role role, kf::DType t) {
            kf::CaseTensor m;
            m.name = name;
            m.role = role;
            m.dtype = t;
            m.extents = extents;
            return m;
        };
        std::vector<kf::CaseTensorData> tensors = {
            {meta("x", kf::CaseTensor::Role::Input, kf::DType::F32), input.data(), input.size() * sizeof(float)},
            {meta("y", kf::CaseTensor::Role::Expected, kf::DType::F64), expected.data(), expected.size() * sizeof(double)},
            {meta("y", kf::CaseTensor::Role::Actual, kf::DType::F32), actual.data(), actual.size() * sizeof(float)},
        };
        if (!libtorch.empty())
            tensors.push_back({meta("y", kf::CaseTensor::Role::Libtorch, kf::DType::F64), libtorch.data(),
                               libtorch.size() * sizeof(double)});
        return kf::writeCase(dir.toStdString(), info, tensors);
    }
};

/// The 48×64 case of the issue: outside tolerance at (3,5), NaN for a finite reference at
/// (10,7), +Inf at (11,2), never written at (20,30), and NaN == NaN at (1,1), which is fine.
inline CaseBuilder plantedCase()
{
    CaseBuilder b({48, 64});
    b.outside({3, 5});
    b.nanActual({10, 7});
    b.infActual({11, 2});
    b.unwritten({20, 30});
    b.nanBoth({1, 1});
    return b;
}

} // namespace fixture
