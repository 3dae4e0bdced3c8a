#include "engine/verify/Npy.h"

#include "engine/core/Files.h"

#include <cctype>
#include <cstring>
#include <limits>
#include <map>
#include <optional>

namespace kf {

namespace {

constexpr unsigned char kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr std::size_t kAlign = 64;

struct DescrName {
    DType type;
    std::string_view descr;
};
constexpr DescrName kDescrs[] = {
    {DType::F64, "<f8"}, {DType::F32, "<f4"}, {DType::F16, "<f2"}, {DType::BF16, "<u2"}, {DType::I64, "<i8"},
    {DType::I32, "<i4"}, {DType::I16, "<i2"}, {DType::I8, "|i1"},  {DType::U8, "|u1"},   {DType::Bool, "|b1"},
};

std::optional<DType> dtypeOfDescr(std::string_view d)
{
    for (const auto& x : kDescrs)
        if (x.descr == d)
            return x.type;
    // NumPy writes single-byte types with either byte-order mark.
    if (d == "<i1" || d == "=i1")
        return DType::I8;
    if (d == "<u1" || d == "=u1")
        return DType::U8;
    if (d == "<b1" || d == "=b1" || d == "|?" )
        return DType::Bool;
    return std::nullopt;
}

// The header is a Python dict literal with three keys; NumPy writes it one way, but any order,
// spacing and a trailing comma are legal, so this reads the literal rather than matching text.
class DictReader {
public:
    explicit DictReader(std::string_view s) : m_s(s) {}

    std::optional<std::string> parse(std::string& descr, bool& fortran, std::vector<std::int64_t>& shape)
    {
        bool haveDescr = false, haveFortran = false, haveShape = false;
        skip();
        if (!eat('{'))
            return "the header does not start with '{'";
        for (;;) {
            skip();
            if (eat('}'))
                break;
            auto key = str();
            if (!key)
                return "expected a quoted key in the header";
            skip();
            if (!eat(':'))
                return "expected ':' after '" + *key + "'";
            skip();
            if (*key == "descr") {
                auto v = str();
                if (!v)
                    return "'descr' is not a string";
                descr = *v;
                haveDescr = true;
            } else if (*key == "fortran_order") {
                if (word("True"))
                    fortran = true;
                else if (word("False"))
                    fortran = false;
                else
                    return "'fortran_order' is neither True nor False";
                haveFortran = true;
            } else if (*key == "shape") {
                if (auto e = tuple(shape))
                    return e;
                haveShape = true;
            } else {
                return "unknown key '" + *key + "' in the header";
            }
            skip();
            if (eat(','))
                continue;
            skip();
            if (eat('}'))
                break;
            return "expected ',' or '}' in the header";
        }
        if (!haveDescr || !haveFortran || !haveShape)
            return "the header lacks one of 'descr', 'fortran_order' and 'shape'";
        return std::nullopt;
    }

private:
    void skip()
    {
        while (m_i < m_s.size() && std::isspace(static_cast<unsigned char>(m_s[m_i])))
            ++m_i;
    }
    bool eat(char c)
    {
        if (m_i < m_s.size() && m_s[m_i] == c) {
            ++m_i;
            return true;
        }
        return false;
    }
    bool word(std::string_view w)
    {
        if (m_s.substr(m_i, w.size()) != w)
            return false;
        m_i += w.size();
        return true;
    }
    std::optional<std::string> str()
    {
        if (m_i >= m_s.size() || (m_s[m_i] != '\'' && m_s[m_i] != '"'))
            return std::nullopt;
        const char q = m_s[m_i++];
        const size_t end = m_s.find(q, m_i);
        if (end == std::string_view::npos)
            return std::nullopt;
        std::string v(m_s.substr(m_i, end - m_i));
        m_i = end + 1;
        return v;
    }
    std::optional<std::string> tuple(std::vector<std::int64_t>& out)
    {
        out.clear();
        if (!eat('('))
            return "'shape' is not a tuple";
        for (;;) {
            skip();
            if (eat(')'))
                return std::nullopt;
            std::int64_t v = 0;
            size_t digits = 0;
            while (m_i < m_s.size() && std::isdigit(static_cast<unsigned char>(m_s[m_i]))) {
                if (v > (std::numeric_limits<std::int64_t>::max() - 9) / 10)
                    return "a 'shape' extent is too large";
                v = v * 10 + (m_s[m_i++] - '0');
                ++digits;
            }
            if (digits == 0)
                return "'shape' holds something other than non-negative integers";
            out.push_back(v);
            skip();
            if (eat(','))
                continue;
            skip();
            if (eat(')'))
                return std::nullopt;
            return "expected ',' or ')' in 'shape'";
        }
    }

    std::string_view m_s;
    size_t m_i = 0;
};

Error npyError(const std::string& file, const std::string& why)
{
    return Error::inFile(file, {}, "read tensor file " + file, why, "the file must be a NumPy .npy file written by KernelForge or numpy.save (little-endian, C order)");
}

} // namespace

std::string_view npyDescr(DType t)
{
    for (const auto& x : kDescrs)
        if (x.type == t)
            return x.descr;
    return "<f4";
}

std::string npyHeaderBytes(DType t, const std::vector<std::int64_t>& extents)
{
    std::string shape = "(";
    for (size_t i = 0; i < extents.size(); ++i)
        shape += std::to_string(extents[i]) + (extents.size() == 1 ? "," : (i + 1 < extents.size() ? ", " : ""));
    shape += ")";
    std::string dict = "{'descr': '" + std::string(npyDescr(t)) + "', 'fortran_order': False, 'shape': " + shape + ", }";
    // magic(6) + version(2) + length(2) + dict + padding + '\n' is a multiple of 64.
    const size_t unpadded = 10 + dict.size() + 1;
    dict.append((kAlign - unpadded % kAlign) % kAlign, ' ');
    dict += '\n';
    std::string h(reinterpret_cast<const char*>(kMagic), sizeof kMagic);
    h += '\x01';
    h += '\x00';
    const auto len = static_cast<std::uint16_t>(dict.size());
    h += static_cast<char>(len & 0xff);
    h += static_cast<char>(len >> 8);
    return h + dict;
}

Result<void> writeNpy(const std::filesystem::path& file, DType t, const std::vector<std::int64_t>& extents,
                      const void* data, std::size_t bytes)
{
    std::int64_t n = 1;
    for (auto e : extents)
        n *= e;
    if (static_cast<std::size_t>(n) * static_cast<std::size_t>(dtypeSize(t)) != bytes)
        return Error::inFile(file.string(), {}, "write tensor file " + file.string(), std::to_string(bytes) + " bytes do not hold " + std::to_string(n) + " elements of " +
                         std::string(dtypeName(t)), "this is a KernelForge bug; please report it");
    const std::string header = npyHeaderBytes(t, extents);
    return writeFileAtomic(file, {std::string_view(header), std::string_view(static_cast<const char*>(data), bytes)});
}

Result<NpyHeader> parseNpyHeader(const unsigned char* b, std::size_t size, const std::string& file)
{
    if (size < 10 || std::memcmp(b, kMagic, sizeof kMagic) != 0)
        return npyError(file, "it does not start with the .npy magic bytes (\\x93NUMPY)");
    const int major = b[6];
    size_t headerLen = 0, prefix = 0;
    if (major == 1) {
        headerLen = b[8] | (static_cast<size_t>(b[9]) << 8);
        prefix = 10;
    } else if (major == 2 || major == 3) {
        if (size < 12)
            return npyError(file, "the file ends inside its header");
        headerLen = b[8] | (static_cast<size_t>(b[9]) << 8) | (static_cast<size_t>(b[10]) << 16) |
                    (static_cast<size_t>(b[11]) << 24);
        prefix = 12;
    } else {
        return npyError(file, "format version " + std::to_string(major) + "." + std::to_string(b[7]) +
                                  " is not supported (1.0, 2.0 and 3.0 are)");
    }
    if (prefix + headerLen > size)
        return npyError(file, "the file ends inside its header");
    std::string descr;
    bool fortran = false;
    NpyHeader h;
    DictReader reader(std::string_view(reinterpret_cast<const char*>(b + prefix), headerLen));
    if (auto e = reader.parse(descr, fortran, h.extents))
        return npyError(file, *e);
    if (fortran)
        return npyError(file, "it is in Fortran order; save it in C order (numpy.ascontiguousarray)");
    auto t = dtypeOfDescr(descr);
    if (!t)
        return npyError(file, "dtype '" + descr + "' is not one KernelForge reads (little-endian f8 f4 f2, u2 for bf16, "
                                                 "i8 i4 i2 i1, u1, b1)");
    h.dtype = *t;
    h.dataOffset = prefix + headerLen;
    h.elements = 1;
    for (auto e : h.extents) {
        if (e != 0 && h.elements > std::numeric_limits<std::int64_t>::max() / e)
            return npyError(file, "its shape has more elements than fit in 64 bits");
        h.elements *= e;
    }
    // Checked before dataBytes(): 2^61 doubles would wrap to 0 bytes and "match" an empty body.
    if (static_cast<std::uint64_t>(h.elements) > std::numeric_limits<std::size_t>::max() / dtypeSize(h.dtype))
        return npyError(file, "its shape has more bytes than fit in memory");
    if (size - h.dataOffset != h.dataBytes())
        return npyError(file, "its shape and dtype call for " + std::to_string(h.dataBytes()) + " data bytes, but it holds " +
                                  std::to_string(size - h.dataOffset));
    return h;
}

Result<NpyFile> NpyFile::open(const std::filesystem::path& file)
{
    auto m = MappedFile::open(file);
    if (!m)
        return m.error();
    auto h = parseNpyHeader(m->data(), m->size(), file.string());
    if (!h)
        return h.error();
    NpyFile f;
    f.m_map = std::move(m.value());
    f.m_header = h.value();
    return f;
}

Result<std::vector<unsigned char>> readNpyExpecting(const std::filesystem::path& file, DType t,
                                                    const std::vector<std::int64_t>& extents)
{
    auto f = NpyFile::open(file);
    if (!f)
        return f.error();
    const NpyHeader& h = f->header();
    auto shapeText = [](const std::vector<std::int64_t>& e) {
        std::string s = "[";
        for (size_t i = 0; i < e.size(); ++i)
            s += (i ? ", " : "") + std::to_string(e[i]);
        return s + "]";
    };
    if (h.dtype != t || h.extents != extents)
        return Error::inFile(file.string(), {}, "read tensor file " + file.string(), "it holds " + std::string(dtypeName(h.dtype)) + " " + shapeText(h.extents) + " but the task needs " +
                         std::string(dtypeName(t)) + " " + shapeText(extents) + " here", "use a file saved for this task and shape");
    return std::vector<unsigned char>(f->data(), f->data() + h.dataBytes());
}

} // namespace kf
