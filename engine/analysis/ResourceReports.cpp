// Per-kernel resources from text: ptxas' -v report (spills, stack), PTX .entry directives (launch
// bounds the cubin does not keep), demangled names, and the JSON form. The cubin reader is
// Resources.cpp.
#include "engine/analysis/Resources.h"

#include "engine/core/JsonReader.h"
#include "engine/core/Text.h"

#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>

namespace kf {
namespace {

using text::trim;
using text::startsWith;

/// A report number as an int field, saturating instead of wrapping (as the cubin reader does).
int clampInt(std::uint64_t v)
{
    return v > static_cast<std::uint64_t>(std::numeric_limits<int>::max()) ? std::numeric_limits<int>::max()
                                                                            : static_cast<int>(v);
}

/// "ptxas info    : Used 32 registers, used 1 barriers, 512 bytes smem" -> {"registers": 32,
/// "barriers": 1, "bytes smem": 512}: each comma-separated item is a number and a label.
std::map<std::string, long long, std::less<>> reportItems(std::string_view line)
{
    std::map<std::string, long long, std::less<>> items;
    size_t start = 0;
    while (start <= line.size()) {
        size_t end = line.find(',', start);
        std::string_view item = line.substr(start, end == std::string_view::npos ? line.size() - start : end - start);
        size_t d = item.find_first_of("0123456789");
        if (d != std::string_view::npos) {
            long long v = 0;
            size_t e = d;
            while (e < item.size() && std::isdigit(static_cast<unsigned char>(item[e])) && v < (1LL << 40))
                v = v * 10 + (item[e++] - '0');
            items[std::string(trim(item.substr(e)))] = v;
        }
        if (end == std::string_view::npos)
            break;
        start = end + 1;
    }
    return items;
}

KernelResources* findKernel(std::vector<KernelResources>& kernels, std::string_view name)
{
    for (KernelResources& k : kernels)
        if (k.name == name)
            return &k;
    return nullptr;
}

int itemOr(const std::map<std::string, long long, std::less<>>& items, std::string_view key, int fallback)
{
    auto it = items.find(key);
    return it == items.end() ? fallback : clampInt(static_cast<std::uint64_t>(std::max(0LL, it->second)));
}

std::string quotedAfter(std::string_view line, std::string_view marker)
{
    size_t p = line.find(marker);
    if (p == std::string_view::npos)
        return {};
    p += marker.size();
    size_t e = line.find('\'', p);
    return e == std::string_view::npos ? std::string() : std::string(line.substr(p, e - p));
}

/// Skips whitespace and // comments in PTX.
size_t skipPtxSpace(std::string_view ptx, size_t p)
{
    while (p < ptx.size()) {
        if (std::isspace(static_cast<unsigned char>(ptx[p]))) {
            ++p;
        } else if (ptx.compare(p, 2, "//") == 0) {
            size_t nl = ptx.find('\n', p);
            p = nl == std::string_view::npos ? ptx.size() : nl + 1;
        } else {
            break;
        }
    }
    return p;
}

std::vector<long long> ptxNumbers(std::string_view ptx, size_t& p)
{
    std::vector<long long> out;
    for (;;) {
        p = skipPtxSpace(ptx, p);
        if (p >= ptx.size() || !std::isdigit(static_cast<unsigned char>(ptx[p])))
            break;
        long long v = 0;
        while (p < ptx.size() && std::isdigit(static_cast<unsigned char>(ptx[p])) && v < (1LL << 40))
            v = v * 10 + (ptx[p++] - '0');
        out.push_back(v);
        p = skipPtxSpace(ptx, p);
        if (p < ptx.size() && ptx[p] == ',')
            ++p;
        else
            break;
    }
    return out;
}

} // namespace

void applyPtxasReport(std::string_view log, std::vector<KernelResources>& kernels)
{
    std::string entry, properties; // the entry being compiled; the function whose properties follow
    size_t start = 0;
    while (start < log.size()) {
        size_t end = log.find('\n', start);
        std::string_view line = log.substr(start, end == std::string_view::npos ? log.size() - start : end - start);
        start = end == std::string_view::npos ? log.size() : end + 1;

        if (line.find("Compiling entry function '") != std::string_view::npos) {
            entry = properties = quotedAfter(line, "Compiling entry function '");
            continue;
        }
        if (size_t p = line.find("Function properties for "); p != std::string_view::npos) {
            properties = std::string(trim(line.substr(p + std::strlen("Function properties for "))));
            continue;
        }
        if (line.find("bytes stack frame") != std::string_view::npos) {
            KernelResources* k = findKernel(kernels, properties);
            if (!k)
                continue; // a device function's frame: not a launchable kernel
            auto items = reportItems(line);
            k->spillStoreBytes = itemOr(items, "bytes spill stores", k->spillStoreBytes);
            k->spillLoadBytes = itemOr(items, "bytes spill loads", k->spillLoadBytes);
            if (k->localBytes == 0)
                k->localBytes = itemOr(items, "bytes stack frame", 0);
            continue;
        }
        if (size_t p = line.find("Used "); p != std::string_view::npos && line.find(" registers") != std::string_view::npos) {
            KernelResources* k = findKernel(kernels, entry.empty() ? properties : entry);
            if (!k)
                continue;
            auto items = reportItems(line.substr(p));
            if (k->registers == 0)
                k->registers = itemOr(items, "registers", 0);
            if (k->barriers == 0)
                k->barriers = itemOr(items, "barriers", 0);
            if (k->constBank0Bytes == 0)
                k->constBank0Bytes = itemOr(items, "bytes cmem[0]", 0);
            // ptxas reports user shared memory only (and omits "smem" when there is none), so it
            // settles how much of the cubin's shared section is the system reserve.
            const int total = k->staticSharedBytes + k->reservedSharedBytes;
            const int user = itemOr(items, "bytes smem", 0);
            k->staticSharedBytes = user;
            k->reservedSharedBytes = std::max(0, total - user);
        }
    }
}

void applyPtxDirectives(std::string_view ptx, std::vector<KernelResources>& kernels)
{
    size_t pos = 0;
    while ((pos = ptx.find(".entry", pos)) != std::string_view::npos) {
        pos += 6;
        if (pos >= ptx.size() || !std::isspace(static_cast<unsigned char>(ptx[pos])))
            continue;
        size_t nameStart = skipPtxSpace(ptx, pos);
        size_t nameEnd = nameStart;
        while (nameEnd < ptx.size() && !std::isspace(static_cast<unsigned char>(ptx[nameEnd])) && ptx[nameEnd] != '(')
            ++nameEnd;
        KernelResources* k = findKernel(kernels, ptx.substr(nameStart, nameEnd - nameStart));
        size_t open = ptx.find_first_of("({;", nameEnd);
        if (open == std::string_view::npos || ptx[open] != '(') {
            pos = nameEnd;
            continue;
        }
        size_t close = ptx.find(')', open);
        if (close == std::string_view::npos)
            return;
        // Performance directives sit between the parameter list and the body.
        size_t p = close + 1;
        for (;;) {
            p = skipPtxSpace(ptx, p);
            if (p >= ptx.size() || ptx[p] != '.')
                break;
            size_t wordEnd = p + 1;
            while (wordEnd < ptx.size() && (std::isalnum(static_cast<unsigned char>(ptx[wordEnd])) || ptx[wordEnd] == '_'))
                ++wordEnd;
            std::string_view word = ptx.substr(p, wordEnd - p);
            p = wordEnd;
            std::vector<long long> nums = ptxNumbers(ptx, p);
            if (!k || nums.empty())
                continue;
            long long product = 1;
            for (long long n : nums)
                product = std::min(product * std::max(1LL, n), 1LL << 40);
            if ((word == ".maxntid" || word == ".reqntid") && k->maxThreadsPerBlock == 0)
                k->maxThreadsPerBlock = clampInt(static_cast<std::uint64_t>(product));
            else if (word == ".minnctapersm")
                k->minBlocksPerSm = clampInt(static_cast<std::uint64_t>(nums[0]));
            else if (word == ".maxnreg" && k->maxRegisterCount == 0)
                k->maxRegisterCount = clampInt(static_cast<std::uint64_t>(nums[0]));
        }
        pos = p;
    }
}

std::string demangle(const std::string& name)
{
    if (!startsWith(name, "_Z"))
        return name;
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> out(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status),
                                                    &std::free);
    return status == 0 && out ? std::string(out.get()) : name;
}

nlohmann::json toJson(const KernelResources& r)
{
    return nlohmann::json{
        {"name", r.name},
        {"demangled", r.demangled},
        {"registers", r.registers},
        {"static_shared_bytes", r.staticSharedBytes},
        {"reserved_shared_bytes", r.reservedSharedBytes},
        {"local_bytes", r.localBytes},
        {"spill_store_bytes", r.spillStoreBytes},
        {"spill_load_bytes", r.spillLoadBytes},
        {"const_bank0_bytes", r.constBank0Bytes},
        {"param_bytes", r.paramBytes},
        {"barriers", r.barriers},
        {"max_threads_per_block", r.maxThreadsPerBlock},
        {"min_blocks_per_sm", r.minBlocksPerSm},
        {"max_register_count", r.maxRegisterCount},
    };
}

KernelResources kernelResourcesFromJson(const nlohmann::json& j)
{
    // Throws json::SchemaError like every reader built on JsonReader; the caller that owns the
    // document (compile result, cache entry) turns it into an Error naming the file.
    json::Object o(j, "");
    auto integer = [&](std::string_view key, int fallback, int min) {
        const std::int64_t v = o.integerOr(key, fallback);
        if (v < min || v > std::numeric_limits<int>::max())
            json::fail(o.at(key), "expected an integer from " + std::to_string(min) + " to "
                                      + std::to_string(std::numeric_limits<int>::max()) + ", found " + std::to_string(v));
        return static_cast<int>(v);
    };
    KernelResources r;
    r.name = o.string("name");
    r.demangled = o.stringOr("demangled", demangle(r.name));
    r.registers = integer("registers", 0, 0);
    r.staticSharedBytes = integer("static_shared_bytes", 0, 0);
    r.reservedSharedBytes = integer("reserved_shared_bytes", 0, 0);
    r.localBytes = integer("local_bytes", 0, 0);
    r.spillStoreBytes = integer("spill_store_bytes", -1, -1);
    r.spillLoadBytes = integer("spill_load_bytes", -1, -1);
    r.constBank0Bytes = integer("const_bank0_bytes", 0, 0);
    r.paramBytes = integer("param_bytes", 0, 0);
    r.barriers = integer("barriers", 0, 0);
    r.maxThreadsPerBlock = integer("max_threads_per_block", 0, 0);
    r.minBlocksPerSm = integer("min_blocks_per_sm", 0, 0);
    r.maxRegisterCount = integer("max_register_count", 0, 0);
    o.finish();
    return r;
}

} // namespace kf
