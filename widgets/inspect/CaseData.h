#pragma once
// A failing case (engine/verify/CaseFiles.h) opened for viewing: case.json plus every tensor
// file mapped read-only. Immutable after load(), so any thread may read it at once (tile
// renderers, the analysis pass, the GUI); share it as std::shared_ptr<const CaseData>.

#include "engine/verify/Npy.h"
#include "engine/core/Result.h"
#include "engine/verify/CaseFiles.h"
#include "engine/verify/Compare.h"

#include <QString>

#include <cstdint>
#include <memory>
#include <vector>

namespace kf::ui {

class CaseData {
public:
    struct Tensor {
        QString name;
        CaseTensor::Role role = CaseTensor::Role::Input;
        int run = 0;
        DType dtype = DType::F32;
        std::vector<std::int64_t> extents;
        std::int64_t elements = 1;
        QString file;  ///< absolute path
        NpyFile npy;
    };
    /// An output with its reference and its run-0 result, and the facts to judge each element.
    struct Output {
        QString name;
        int expected = -1;  ///< index into tensors()
        int actual = -1;
        int libtorch = -1;  ///< LibTorch's own result beside a golden `expected`, or -1
        DType dtype = DType::F32;
        double atol = 0;
        double rtol = 0;
        std::vector<unsigned char> sentinel;  ///< run 0's; empty when the case has none
        std::vector<std::int64_t> extents;
        std::int64_t elements = 1;
    };

    /// Reads `<dir>/case.json` and maps every tensor it lists, checking each file's dtype and
    /// shape against case.json. The error names the file and says what to do.
    static Result<std::shared_ptr<const CaseData>> load(const QString& dir);

    const QString& dir() const { return m_dir; }
    const CaseInfo& info() const { return m_info; }
    const std::vector<Tensor>& tensors() const { return m_tensors; }
    const std::vector<Output>& outputs() const { return m_outputs; }
    int outputIndex(const QString& name) const;  ///< -1 when there is no such output

    /// The reference value (float64) of output `o` at `flat`.
    double expected(int o, std::int64_t flat) const;
    /// classify() of output `o` at `flat`: exactly the runner's verdict for that element.
    ElementVerdict verdict(int o, std::int64_t flat) const;
    /// Any tensor's element as a double (NaN for a bf16 NaN, 0/1 for bool).
    double value(int tensor, std::int64_t flat) const;
    /// The report's OutputCheck for output `o` (case.json's copy).
    const nlohmann::json& check(int o) const;

private:
    QString m_dir;
    CaseInfo m_info;
    std::vector<Tensor> m_tensors;
    std::vector<Output> m_outputs;
};

} // namespace kf::ui
