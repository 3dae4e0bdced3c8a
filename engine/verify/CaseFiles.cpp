#include "engine/verify/CaseFiles.h"

#include "engine/core/Files.h"
#include "engine/core/JsonReader.h"
#include "engine/verify/Npy.h"

#include <cctype>

namespace fs = std::filesystem;

namespace kf {

using namespace kf::json;

namespace {

std::string safePart(std::string_view s)
{
    std::string out;
    for (char c : s)
        out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ? c : '-';
    return out;
}

std::string tensorFile(const CaseTensor& t)
{
    switch (t.role) {
    case CaseTensor::Role::Input: return "inputs/" + safePart(t.name) + ".npy";
    case CaseTensor::Role::Expected: return "expected/" + safePart(t.name) + ".npy";
    case CaseTensor::Role::Libtorch: return "libtorch/" + safePart(t.name) + ".npy";
    case CaseTensor::Role::Actual: break;
    }
    return "actual/" + safePart(t.name) + (t.run ? ".run" + std::to_string(t.run) : std::string()) + ".npy";
}

DType dtypeField(Object& o, std::string_view key)
{
    const std::string name = o.string(key);
    auto t = parseDType(name);
    if (!t)
        fail(o.at(key), "'" + name + "' is not a dtype; use one of " + dtypeNames());
    return *t;
}

std::vector<std::int64_t> extentsField(Object& o, std::string_view key)
{
    std::vector<std::int64_t> out;
    const Json& a = asArray(o.required(key), o.at(key));
    for (size_t i = 0; i < a.size(); ++i) {
        const std::int64_t e = asInteger(a[i], child(o.at(key), i));
        if (e < 0)
            fail(child(o.at(key), i), "an extent must not be negative");
        out.push_back(e);
    }
    return out;
}

CaseTensor parseTensor(const Json& j, const std::string& ptr)
{
    Object o(j, ptr);
    CaseTensor t;
    t.name = o.string("name");
    const std::string role = o.string("role");
    if (role == "input")
        t.role = CaseTensor::Role::Input;
    else if (role == "expected")
        t.role = CaseTensor::Role::Expected;
    else if (role == "actual")
        t.role = CaseTensor::Role::Actual;
    else if (role == "libtorch")
        t.role = CaseTensor::Role::Libtorch;
    else
        fail(o.at("role"), "role must be input, expected, actual or libtorch");
    t.run = static_cast<int>(o.integerOr("run", 0));
    if (t.run != 0 && t.run != 1)
        fail(o.at("run"), "run must be 0 or 1");
    t.dtype = dtypeField(o, "dtype");
    t.extents = extentsField(o, "extents");
    t.file = o.string("file");
    // Tensor files stay inside the case folder: a case from elsewhere must not read other files.
    const fs::path p(t.file);
    if (p.is_absolute() || t.file.find("..") != std::string::npos)
        fail(o.at("file"), "must be a path inside the case folder");
    o.optional("descr");
    o.optional("bytes");
    o.finish();
    return t;
}

CaseOutput parseOutput(const Json& j, const std::string& ptr)
{
    Object o(j, ptr);
    CaseOutput out;
    out.name = o.string("name");
    out.dtype = dtypeField(o, "dtype");
    out.atolEffective = o.number("atol_effective");
    out.rtol = o.number("rtol");
    const Json& s = asArray(o.required("sentinel_hex"), o.at("sentinel_hex"));
    if (s.size() != 2)
        fail(o.at("sentinel_hex"), "expected two sentinels, one per run");
    for (size_t r = 0; r < 2; ++r) {
        out.sentinel[r] = fromHex(asString(s[r], child(o.at("sentinel_hex"), r)));
        if (static_cast<int>(out.sentinel[r].size()) != dtypeSize(out.dtype))
            fail(child(o.at("sentinel_hex"), r), "a sentinel must be one " + std::string(dtypeName(out.dtype)) +
                                                     " element in hex (" + std::to_string(2 * dtypeSize(out.dtype)) +
                                                     " digits)");
    }
    if (const Json* c = o.optional("check"))
        out.check = *c;
    o.finish();
    return out;
}

CaseInfo parseCase(const Json& j)
{
    Object o(j, "");
    const std::int64_t version = o.integer("schema_version");
    if (version != kCaseSchemaVersion)
        fail(o.at("schema_version"), "schema version " + std::to_string(version) + " is not supported (this build reads " +
                                         std::to_string(kCaseSchemaVersion) + ")");
    CaseInfo c;
    {
        Object t(o.required("task"), o.at("task"));
        c.taskName = t.string("name");
        c.taskHash = t.stringOr("hash", "");
        t.finish();
    }
    {
        Object k(o.required("candidate"), o.at("candidate"));
        c.candidateFile = k.stringOr("file", "");
        c.sourceHash = k.stringOr("source_hash", "");
        c.arch = k.stringOr("arch", "");
        k.finish();
    }
    {
        Object s(o.required("shape"), o.at("shape"));
        const Json& values = s.required("values");
        if (!values.is_object())
            fail(s.at("values"), "must be an object of symbol values");
        for (auto it = values.begin(); it != values.end(); ++it)
            c.shape.values[it.key()] = asInteger(it.value(), child(s.at("values"), it.key()));
        c.shape.label = s.stringOr("label", "");
        c.set = s.stringOr("set", "tests");
        c.shapeIndex = static_cast<int>(s.integerOr("index", 0));
        s.finish();
    }
    c.trial = static_cast<int>(o.integer("trial"));
    c.seed = o.stringOr("seed", "");
    c.inputsFrom = o.stringOr("inputs", "seeded");
    if (const Json* d = o.optional("distributions"))
        c.distributions = *d;
    c.failure = o.stringOr("failure", "");
    if (const Json* e = o.optional("environment"))
        c.environment = *e;
    const Json& tensors = asArray(o.required("tensors"), o.at("tensors"));
    for (size_t i = 0; i < tensors.size(); ++i)
        c.tensors.push_back(parseTensor(tensors[i], child(o.at("tensors"), i)));
    const Json& outputs = asArray(o.required("outputs"), o.at("outputs"));
    for (size_t i = 0; i < outputs.size(); ++i)
        c.outputs.push_back(parseOutput(outputs[i], child(o.at("outputs"), i)));
    if (const Json* r = o.optional("report"))
        c.trialReport = *r;
    o.optional("kind");
    o.finish();
    for (const CaseOutput& out : c.outputs)
        if (!c.find(out.name, CaseTensor::Role::Expected) || !c.find(out.name, CaseTensor::Role::Actual))
            fail("/outputs", "output " + out.name + " lacks its expected or actual tensor in /tensors");
    return c;
}

} // namespace

std::string_view caseRoleName(CaseTensor::Role r)
{
    switch (r) {
    case CaseTensor::Role::Input: return "input";
    case CaseTensor::Role::Expected: return "expected";
    case CaseTensor::Role::Actual: return "actual";
    case CaseTensor::Role::Libtorch: return "libtorch";
    }
    return "input";
}

const CaseTensor* CaseInfo::find(std::string_view name, CaseTensor::Role role, int run) const
{
    for (const CaseTensor& t : tensors)
        if (t.name == name && t.role == role && (role != CaseTensor::Role::Actual || t.run == run))
            return &t;
    return nullptr;
}

const CaseOutput* CaseInfo::output(std::string_view name) const
{
    for (const CaseOutput& o : outputs)
        if (o.name == name)
            return &o;
    return nullptr;
}

std::string caseFolderName(int shapeIndex, const ShapeBinding& shape, int trial)
{
    std::string idx = std::to_string(shapeIndex);
    if (idx.size() < 2)
        idx.insert(0, 2 - idx.size(), '0');
    std::string what;
    for (const auto& [k, v] : shape.values)
        what += (what.empty() ? "" : "-") + k + std::to_string(v);
    if (!shape.label.empty())
        what = shape.label + (what.empty() ? "" : "-" + what);
    std::string name = idx + "-" + safePart(what) + "-t" + std::to_string(trial);
    if (name.size() > 120)
        name = idx + "-" + safePart(what).substr(0, 100) + "-t" + std::to_string(trial);
    return name;
}

nlohmann::json toJson(const CaseInfo& c)
{
    Json values = Json::object();
    for (const auto& [k, v] : c.shape.values)
        values[k] = v;
    Json tensors = Json::array();
    for (const CaseTensor& t : c.tensors) {
        Json j = {{"name", t.name}, {"role", caseRoleName(t.role)}, {"dtype", dtypeName(t.dtype)},
                  {"extents", t.extents}, {"file", t.file}, {"descr", npyDescr(t.dtype)}};
        if (t.role == CaseTensor::Role::Actual)
            j["run"] = t.run;
        tensors.push_back(std::move(j));
    }
    Json outputs = Json::array();
    for (const CaseOutput& o : c.outputs)
        outputs.push_back({{"name", o.name}, {"dtype", dtypeName(o.dtype)}, {"atol_effective", o.atolEffective},
                           {"rtol", o.rtol}, {"sentinel_hex", {toHex(o.sentinel[0]), toHex(o.sentinel[1])}},
                           {"check", o.check.is_null() ? Json::object() : o.check}});
    return {{"schema_version", kCaseSchemaVersion},
            {"kind", "kernelforge-case"},
            {"task", {{"name", c.taskName}, {"hash", c.taskHash}}},
            {"candidate", {{"file", c.candidateFile}, {"source_hash", c.sourceHash}, {"arch", c.arch}}},
            {"shape", {{"values", values}, {"label", c.shape.label}, {"set", c.set}, {"index", c.shapeIndex}}},
            {"trial", c.trial},
            {"seed", c.seed},
            {"inputs", c.inputsFrom},
            {"distributions", c.distributions},
            {"failure", c.failure},
            {"report", c.trialReport.is_null() ? Json::object() : c.trialReport},
            {"environment", c.environment},
            {"tensors", tensors},
            {"outputs", outputs}};
}

Result<CaseInfo> readCase(const fs::path& dir)
{
    const fs::path file = dir / kCaseFile;
    auto j = json::readFile(file);
    if (!j)
        return j.error();
    try {
        return parseCase(j.value());
    } catch (const SchemaError& e) {
        return Error::inFile(file.string(), e.pointer, "read failing case", e.message, "the case folder was written by another KernelForge version or edited; "
                                                     "re-run the shape with tensors saved");
    }
}

Result<void> writeCase(const fs::path& dir, CaseInfo info, const std::vector<CaseTensorData>& tensors)
{
    info.tensors.clear();
    for (const CaseTensorData& t : tensors) {
        CaseTensor meta = t.meta;
        meta.file = tensorFile(meta);
        if (auto r = writeNpy(dir / meta.file, meta.dtype, meta.extents, t.data, t.bytes); !r)
            return r.error();
        info.tensors.push_back(std::move(meta));
    }
    return writeFileAtomic(dir / kCaseFile, toJson(info).dump(2) + "\n");
}

std::string toHex(const std::vector<unsigned char>& bytes)
{
    static const char* digits = "0123456789abcdef";
    std::string s;
    for (unsigned char b : bytes) {
        s += digits[b >> 4];
        s += digits[b & 15];
    }
    return s;
}

std::vector<unsigned char> fromHex(std::string_view hex)
{
    auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9')
            return c - '0';
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    };
    std::vector<unsigned char> out;
    if (hex.size() % 2)
        return {};
    for (size_t i = 0; i < hex.size(); i += 2) {
        const int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
        if (hi < 0 || lo < 0)
            return {};
        out.push_back(static_cast<unsigned char>(hi << 4 | lo));
    }
    return out;
}

} // namespace kf
