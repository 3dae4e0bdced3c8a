#include "widgets/inspect/CaseData.h"

#include <cstring>
#include <filesystem>

namespace kf::ui {

namespace {

std::string shapeText(const std::vector<std::int64_t>& e)
{
    std::string s = "[";
    for (size_t i = 0; i < e.size(); ++i)
        s += (i ? ", " : "") + std::to_string(e[i]);
    return s + "]";
}

Error caseError(const std::string& file, const std::string& why)
{
    return Error::inFile(file, {}, "open failing case", why, "the case folder is incomplete or was edited; re-run the failing shape with tensors saved");
}

} // namespace

Result<std::shared_ptr<const CaseData>> CaseData::load(const QString& dir)
{
    namespace fs = std::filesystem;
    const fs::path root = fs::path(dir.toStdString());
    auto info = readCase(root);
    if (!info)
        return info.error();
    auto data = std::make_shared<CaseData>();
    data->m_dir = dir;
    data->m_info = std::move(info).value();
    for (const CaseTensor& t : data->m_info.tensors) {
        const fs::path file = root / t.file;
        auto npy = NpyFile::open(file);
        if (!npy)
            return npy.error();
        const NpyHeader& h = npy->header();
        if (h.dtype != t.dtype || h.extents != t.extents)
            return caseError(file.string(), "it holds " + std::string(dtypeName(h.dtype)) + " " + shapeText(h.extents) +
                                                " but case.json says " + std::string(dtypeName(t.dtype)) + " " +
                                                shapeText(t.extents));
        if ((t.role == CaseTensor::Role::Expected || t.role == CaseTensor::Role::Libtorch) && t.dtype != DType::F64)
            return caseError(file.string(), "a reference tensor must be fp64, this one is " + std::string(dtypeName(t.dtype)));
        Tensor out;
        out.name = QString::fromStdString(t.name);
        out.role = t.role;
        out.run = t.run;
        out.dtype = t.dtype;
        out.extents = t.extents;
        out.elements = h.elements;
        out.file = QString::fromStdString(file.string());
        out.npy = std::move(npy).value();
        data->m_tensors.push_back(std::move(out));
    }
    auto indexOf = [&](const std::string& name, CaseTensor::Role role) {
        for (size_t i = 0; i < data->m_tensors.size(); ++i) {
            const Tensor& t = data->m_tensors[i];
            if (t.role == role && t.run == 0 && t.name == QString::fromStdString(name))
                return static_cast<int>(i);
        }
        return -1;
    };
    const std::string caseFile = (root / kCaseFile).string();
    for (const CaseOutput& co : data->m_info.outputs) {
        Output o;
        o.name = QString::fromStdString(co.name);
        o.expected = indexOf(co.name, CaseTensor::Role::Expected);
        o.actual = indexOf(co.name, CaseTensor::Role::Actual);
        o.libtorch = indexOf(co.name, CaseTensor::Role::Libtorch);
        if (o.expected < 0 || o.actual < 0)
            return caseError(caseFile, "output '" + co.name + "' has no " + (o.expected < 0 ? "expected" : "actual") +
                                           " tensor listed");
        const Tensor& e = data->m_tensors[static_cast<size_t>(o.expected)];
        const Tensor& a = data->m_tensors[static_cast<size_t>(o.actual)];
        if (e.extents != a.extents)
            return caseError(a.file.toStdString(), "its shape " + shapeText(a.extents) + " differs from the reference's " +
                                                       shapeText(e.extents));
        if (o.libtorch >= 0 && data->m_tensors[static_cast<size_t>(o.libtorch)].extents != e.extents) {
            const Tensor& l = data->m_tensors[static_cast<size_t>(o.libtorch)];
            return caseError(l.file.toStdString(), "its shape " + shapeText(l.extents) + " differs from the reference's " +
                                                       shapeText(e.extents));
        }
        if (a.dtype != co.dtype)
            return caseError(a.file.toStdString(), "it is " + std::string(dtypeName(a.dtype)) + " but output '" + co.name +
                                                       "' is " + std::string(dtypeName(co.dtype)));
        o.dtype = co.dtype;
        o.atol = co.atolEffective;
        o.rtol = co.rtol;
        if (co.sentinel[0].size() == static_cast<size_t>(dtypeSize(co.dtype)))
            o.sentinel = co.sentinel[0];
        else if (!co.sentinel[0].empty())
            return caseError(caseFile, "the sentinel of output '" + co.name + "' has " +
                                           std::to_string(co.sentinel[0].size()) + " bytes, not " +
                                           std::to_string(dtypeSize(co.dtype)));
        o.extents = e.extents;
        o.elements = e.elements;
        data->m_outputs.push_back(std::move(o));
    }
    return std::shared_ptr<const CaseData>(std::move(data));
}

int CaseData::outputIndex(const QString& name) const
{
    for (size_t i = 0; i < m_outputs.size(); ++i)
        if (m_outputs[i].name == name)
            return static_cast<int>(i);
    return -1;
}

double CaseData::expected(int o, std::int64_t flat) const
{
    const Tensor& e = m_tensors[static_cast<size_t>(m_outputs[static_cast<size_t>(o)].expected)];
    double v;
    std::memcpy(&v, e.npy.element(flat), sizeof v);
    return v;
}

ElementVerdict CaseData::verdict(int o, std::int64_t flat) const
{
    const Output& out = m_outputs[static_cast<size_t>(o)];
    const Tensor& a = m_tensors[static_cast<size_t>(out.actual)];
    std::optional<double> libtorch;
    if (out.libtorch >= 0) {
        double v;
        std::memcpy(&v, m_tensors[static_cast<size_t>(out.libtorch)].npy.element(flat), sizeof v);
        libtorch = v;
    }
    return classify(out.dtype, a.npy.element(flat), expected(o, flat), out.sentinel.empty() ? nullptr : out.sentinel.data(),
                    out.atol, out.rtol, libtorch);
}

double CaseData::value(int tensor, std::int64_t flat) const
{
    const Tensor& t = m_tensors[static_cast<size_t>(tensor)];
    double v = 0;
    toDouble(t.dtype, t.npy.element(flat), 1, &v);
    return v;
}

const nlohmann::json& CaseData::check(int o) const
{
    return m_info.outputs[static_cast<size_t>(o)].check;
}

} // namespace kf::ui
