#include "engine/protocol/RunReport.h"

#include "engine/protocol/CompileBaseline.h"
#include "engine/protocol/ReportJson.h"
#include "engine/protocol/Signature.h"

namespace kf::protocol {

RunReport RunReport::edited(const std::function<void(nlohmann::json&)>& change) const
{
    auto key = loadSigningKey(false);
    const bool wasSigned = key && checkSignature(m_document, &key.value()).valid();
    nlohmann::json document = m_document;
    change(document);
    document.erase("signature");
    if (wasSigned)
        if (auto s = signDocument(document, key.value()); !s)
            document.erase("signature");
    RunReport out = *this;
    if (auto reread = fromJson(document)) {
        out = std::move(reread.value());
        out.m_shrink = m_shrink;
    }
    out.m_document = std::move(document);
    return out;
}

RunReport RunReport::ofError(Header header)
{
    header.verdict = Verdict::Error;
    RunReport r;
    header.writeTo(r.m_document);
    r.m_document["shapes"] = nlohmann::json::array();
    if (header.kind == ReportKind::Correctness) {
        r.m_verify = VerifyReport{};
        r.m_verify->header = header;
    } else if (header.kind == ReportKind::Performance) {
        r.m_bench = BenchReport{};
        r.m_bench->header = header;
    } else {
        profile::ProfileReport p;
        p.verdict = Verdict::Error;
        p.summary = header.summary;
        p.header = r.m_document;
        p.header.erase("shapes");
        r.m_profile = std::move(p);
    }
    r.m_header = std::move(header);
    return r;
}

RunReport RunReport::withCompileBaseline(const HarnessResult& harness) const
{
    return edited([&](nlohmann::json& j) { mergeCompileBaseline(j, harness); });
}

RunReport RunReport::withCompileNotMeasured(const std::string& reason) const
{
    return edited([&](nlohmann::json& j) { markCompileNotMeasured(j, reason); });
}

RunReport RunReport::withEditToVerdict(const std::vector<RoundTiming>& rounds) const
{
    return edited([&](nlohmann::json& j) {
        Header h = m_header;
        h.editToVerdict = rounds;
        h.writeTo(j);
    });
}

RunReport RunReport::withShrink(const ShrinkResult& shrink) const
{
    RunReport out = *this;
    out.m_shrink = shrink;
    return out;
}

Result<RunReport> RunReport::fromJson(const nlohmann::json& j, const std::string& source)
{
    auto result = readReport<RunReport>("read a report", [&] {
        RunReport r;
        const Fields f(j, "");
        // The kind decides the reader; each reader reads the header as part of its report.
        const std::string kind = f.text("kind");
        if (kind == reportKindName(ReportKind::Correctness)) {
            r.m_verify = VerifyReport::read(f);
            r.m_header = r.m_verify->header;
        } else if (kind == reportKindName(ReportKind::Performance)) {
            r.m_bench = BenchReport::read(f);
            r.m_header = r.m_bench->header;
        } else {
            r.m_header = Header::read(f);
        }
        r.m_document = j;
        return r;
    });
    if (!result) {
        Error e = result.error();
        e.file = source;
        return e;
    }
    if (result->m_header.kind == ReportKind::Profile) {
        auto p = profile::ProfileReport::fromJson(j, source);
        if (!p)
            return p.error();
        result->m_profile = std::move(p.value());
    }
    return result;
}

std::vector<RunReport> reportsOfDocument(const nlohmann::json& document, std::vector<Error>* errors)
{
    std::vector<RunReport> out;
    auto take = [&](const nlohmann::json& r, const std::string& at) {
        auto read = RunReport::fromJson(r);
        if (read) {
            out.push_back(std::move(read.value()));
        } else if (errors) {
            Error e = read.error();
            e.pointer = at + e.pointer; // where in the document, not only in the report
            errors->push_back(std::move(e));
        }
    };
    if (document.is_object() && document.contains("reports") && document["reports"].is_array()) {
        for (std::size_t i = 0; i < document["reports"].size(); ++i)
            take(document["reports"][i], "/reports/" + std::to_string(i));
    } else {
        take(document, "");
    }
    return out;
}

} // namespace kf::protocol
