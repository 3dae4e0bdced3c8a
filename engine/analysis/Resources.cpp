// Per-kernel resources from a cubin: the ELF sections, symbols and .nv.info records. The ptxas
// report, PTX directives, demangling and JSON are in ResourceReports.cpp.
#include "engine/analysis/Resources.h"

#include "engine/core/JsonReader.h"
#include "engine/core/Text.h"

#include <cxxabi.h>
#include <elf.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

namespace kf {
namespace {

using text::startsWith;

// .nv.info records: a format byte, an attribute byte, then a 16-bit field that is the value
// (NVAL/BVAL/HVAL) or the size of the payload that follows (SVAL). Codes were confirmed by
// compiling kernels with known properties (CUDA 13.0, sm_75..sm_120) against ptxas -v.
enum : std::uint8_t { EifmtNval = 1, EifmtBval = 2, EifmtHval = 3, EifmtSval = 4 };
enum : std::uint8_t {
    EiattrMaxThreads = 0x05,     // SVAL {x, y, z} from .maxntid
    EiattrParamCbank = 0x0a,     // SVAL {constant0 symbol, size << 16 | offset}
    EiattrReqNtid = 0x10,        // SVAL {x, y, z} from .reqntid
    EiattrFrameSize = 0x11,      // SVAL {symbol, bytes}, in the module-wide .nv.info
    EiattrMinStackSize = 0x12,   // SVAL {symbol, bytes}
    EiattrKparamInfo = 0x17,     // SVAL {index, ordinal | offset << 16, flags | size << 18}
    EiattrCbankParamSize = 0x19, // HVAL parameter bytes
    EiattrMaxRegCount = 0x1b,    // HVAL register cap (255 when uncapped)
    EiattrRegCount = 0x2f,       // SVAL {symbol, registers}; sh_info >> 24 is 0 on CUDA 13 sm_90+
    EiattrNumBarriers = 0x4c,    // BVAL; absent when no barrier is used
};
constexpr unsigned char StoCudaEntry = 0x10; // st_other bit of __global__ functions
constexpr int RegisterCapNone = 255;
constexpr int Sm90ReservedShared = 1024;

Error malformed(std::string why)
{
    return Error::failed("read cubin", std::move(why), "rebuild the kernel; the cubin is damaged or was not produced by ptxas/NVRTC");
}

template <class T>
bool readAt(std::string_view bytes, std::uint64_t offset, T& out)
{
    if (offset > bytes.size() || sizeof(T) > bytes.size() - offset)
        return false;
    std::memcpy(&out, bytes.data() + offset, sizeof(T));
    return true;
}

std::uint32_t u32At(std::string_view payload, size_t offset)
{
    std::uint32_t v = 0;
    readAt(payload, offset, v);
    return v;
}

int clampInt(std::uint64_t v)
{
    return v > static_cast<std::uint64_t>(std::numeric_limits<int>::max()) ? std::numeric_limits<int>::max()
                                                                            : static_cast<int>(v);
}

std::string machineName(unsigned machine)
{
    switch (machine) {
    case EM_386: return "x86";
    case EM_X86_64: return "x86-64";
    case EM_AARCH64: return "AArch64";
    case EM_ARM: return "ARM";
    case EM_PPC64: return "PowerPC 64";
    case 224: return "AMDGPU"; // EM_AMDGPU is missing from older <elf.h>
    case 243: return "RISC-V";
    default: return "machine " + std::to_string(machine);
    }
}

Result<Elf64_Ehdr> readHeader(std::string_view bytes)
{
    if (bytes.empty())
        return malformed("the cubin is empty");
    std::uint32_t magic = 0;
    if (readAt(bytes, 0, magic) && magic == 0xBA55ED50u)
        return malformed("this is a fatbinary, not a cubin; extract the cubin for one architecture first");
    if (bytes.size() < SELFMAG || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0)
        return malformed("not an ELF file (the first bytes are not \\x7fELF)");
    if (bytes.size() < EI_NIDENT)
        return malformed("truncated: " + std::to_string(bytes.size()) + " bytes, shorter than an ELF identification");
    if (static_cast<unsigned char>(bytes[EI_CLASS]) != ELFCLASS64)
        return malformed("a 32-bit ELF file; CUDA cubins are 64-bit ELF");
    if (static_cast<unsigned char>(bytes[EI_DATA]) != ELFDATA2LSB)
        return malformed("a big-endian ELF file; CUDA cubins are little-endian");
    Elf64_Ehdr h;
    if (!readAt(bytes, 0, h))
        return malformed("truncated: " + std::to_string(bytes.size()) + " bytes, shorter than an ELF header");
    if (h.e_machine != EM_CUDA)
        return malformed("an ELF file for " + machineName(h.e_machine) + ", not a CUDA cubin");
    return h;
}

int smFromFlags(const Elf64_Ehdr& h)
{
    // ABI version 7 (CUDA <= 12) keeps the SM in bits 0..7 (0x5a055a for sm_90); version 8
    // (CUDA 13) moved it to bits 8..15 (0x6005a04 for sm_90, 0x6006402 for sm_100).
    const unsigned abi = h.e_ident[EI_ABIVERSION];
    const std::uint32_t f = h.e_flags;
    if (abi >= 8 || (f >> 24) != 0)
        return static_cast<int>((f >> 8) & 0xff);
    return static_cast<int>(f & 0xff);
}

struct NvInfoRecord {
    std::uint8_t format = 0;
    std::uint8_t attribute = 0;
    std::uint16_t value = 0;     // NVAL/BVAL/HVAL value, SVAL payload size
    std::string_view payload;    // SVAL only
};

Result<std::vector<NvInfoRecord>> parseNvInfo(std::string_view data, const std::string& section)
{
    std::vector<NvInfoRecord> out;
    size_t o = 0;
    while (o < data.size()) {
        if (data[o] == 0) { // alignment padding
            ++o;
            continue;
        }
        if (data.size() - o < 4)
            return malformed("section " + section + " ends inside an attribute record");
        NvInfoRecord r;
        r.format = static_cast<std::uint8_t>(data[o]);
        r.attribute = static_cast<std::uint8_t>(data[o + 1]);
        std::memcpy(&r.value, data.data() + o + 2, 2);
        o += 4;
        if (r.format == EifmtSval) {
            if (r.value > data.size() - o)
                return malformed("section " + section + " has an attribute record that runs past its end");
            r.payload = data.substr(o, r.value);
            o += r.value;
        } else if (r.format > EifmtSval) {
            break; // a newer record format: its length is unknown, so keep what was read
        }
        out.push_back(r);
    }
    return out;
}

/// A bounds-checked view of a cubin's sections and symbols. Every offset is validated once in
/// parse(); accessors only hand out views that are known to lie inside the input.
class Cubin {
public:
    struct Section {
        std::string name;
        Elf64_Shdr header{};
    };
    struct Symbol {
        std::string name;
        Elf64_Sym sym{};
    };

    Result<void> parse(std::string_view bytes)
    {
        m_bytes = bytes;
        auto h = readHeader(bytes);
        if (!h)
            return h.error();
        m_header = *h;
        // The program headers are the last bytes ptxas writes: checking them catches a cubin
        // cut short after its section table.
        const std::uint64_t ph = m_header.e_phoff, phSize = std::uint64_t(m_header.e_phnum) * m_header.e_phentsize;
        if (m_header.e_phnum && (ph > bytes.size() || phSize > bytes.size() - ph))
            return malformed("truncated: the program header table runs past the end of the file");
        if (auto r = readSections(); !r)
            return r;
        return readSymbols();
    }

    int arch() const { return smFromFlags(m_header); }
    const std::vector<Symbol>& symbols() const { return m_symbols; }
    const std::vector<Section>& sections() const { return m_sections; }

    const Section* find(const std::string& name) const
    {
        auto it = m_byName.find(name);
        return it == m_byName.end() ? nullptr : &m_sections[it->second];
    }
    const Section* at(size_t index) const { return index < m_sections.size() ? &m_sections[index] : nullptr; }

    /// File bytes of a section; empty for NOBITS (their size is an allocation, not data).
    std::string_view data(const Section& s) const
    {
        const Elf64_Shdr& h = s.header;
        if (h.sh_type == SHT_NOBITS || h.sh_offset > m_bytes.size() || h.sh_size > m_bytes.size() - h.sh_offset)
            return {};
        return m_bytes.substr(h.sh_offset, h.sh_size);
    }

private:
    Result<void> readSections()
    {
        if (m_header.e_shoff == 0)
            return malformed("the ELF file has no section table");
        if (m_header.e_shentsize != sizeof(Elf64_Shdr))
            return malformed("unexpected section header size " + std::to_string(m_header.e_shentsize));
        Elf64_Shdr first;
        if (!readAt(m_bytes, m_header.e_shoff, first))
            return malformed("truncated: the section table starts past the end of the file");
        // Extended numbering: counts too large for the header live in section 0.
        std::uint64_t count = m_header.e_shnum ? m_header.e_shnum : first.sh_size;
        std::uint64_t strIndex = m_header.e_shstrndx == SHN_XINDEX ? first.sh_link : m_header.e_shstrndx;
        if (count == 0)
            return malformed("the ELF file has no sections");
        if (count > (m_bytes.size() - m_header.e_shoff) / sizeof(Elf64_Shdr))
            return malformed("truncated: the section table runs past the end of the file");
        if (strIndex >= count)
            return malformed("the section name table index is out of range");
        m_sections.resize(count);
        for (std::uint64_t i = 0; i < count; ++i) {
            Elf64_Shdr& s = m_sections[i].header;
            readAt(m_bytes, m_header.e_shoff + i * sizeof(Elf64_Shdr), s);
            if (s.sh_type != SHT_NOBITS && s.sh_type != SHT_NULL
                && (s.sh_offset > m_bytes.size() || s.sh_size > m_bytes.size() - s.sh_offset))
                return malformed("truncated: section " + std::to_string(i) + " extends past the end of the file");
        }
        const Section& names = m_sections[strIndex];
        if (names.header.sh_type == SHT_NOBITS)
            return malformed("the section name table has no data");
        std::string_view table = data(names);
        for (std::uint64_t i = 0; i < count; ++i) {
            auto n = nameAt(table, m_sections[i].header.sh_name);
            if (!n)
                return malformed("section " + std::to_string(i) + " has a name outside the name table");
            m_sections[i].name = std::string(*n);
            m_byName.emplace(m_sections[i].name, i);
        }
        return {};
    }

    Result<void> readSymbols()
    {
        const Section* symtab = nullptr;
        for (const Section& s : m_sections)
            if (s.header.sh_type == SHT_SYMTAB) {
                symtab = &s;
                break;
            }
        if (!symtab)
            return malformed("the cubin has no symbol table");
        if (symtab->header.sh_entsize != sizeof(Elf64_Sym))
            return malformed("unexpected symbol entry size " + std::to_string(symtab->header.sh_entsize));
        const Section* strings = at(symtab->header.sh_link);
        if (!strings || strings->header.sh_type == SHT_NOBITS)
            return malformed("the symbol table links to a missing string table");
        std::string_view table = data(*strings);
        std::string_view raw = data(*symtab);
        const size_t count = raw.size() / sizeof(Elf64_Sym);
        m_symbols.resize(count);
        for (size_t i = 0; i < count; ++i) {
            Symbol& s = m_symbols[i];
            readAt(raw, i * sizeof(Elf64_Sym), s.sym);
            auto n = nameAt(table, s.sym.st_name);
            if (!n)
                return malformed("symbol " + std::to_string(i) + " has a name outside the string table");
            s.name = std::string(*n);
        }
        return {};
    }

    static std::optional<std::string_view> nameAt(std::string_view table, std::uint64_t offset)
    {
        if (offset >= table.size())
            return offset == 0 ? std::optional<std::string_view>(std::string_view{}) : std::nullopt;
        size_t end = table.find('\0', offset);
        if (end == std::string_view::npos)
            return std::nullopt;
        return table.substr(offset, end - offset);
    }

    std::string_view m_bytes;
    Elf64_Ehdr m_header{};
    std::vector<Section> m_sections;
    std::vector<Symbol> m_symbols;
    std::unordered_map<std::string, size_t> m_byName;
};

/// Per-symbol values of the module-wide .nv.info (REGCOUNT, FRAME_SIZE...), keyed by
/// (attribute, .symtab index of the function) because that section describes every function.
using SymbolValues = std::map<std::pair<std::uint8_t, std::uint32_t>, std::uint32_t>;

void collectSymbolValues(const std::vector<NvInfoRecord>& records, SymbolValues& out)
{
    for (const NvInfoRecord& r : records) {
        if (r.format != EifmtSval || r.payload.size() != 8)
            continue;
        if (r.attribute == EiattrRegCount || r.attribute == EiattrFrameSize || r.attribute == EiattrMinStackSize)
            out[{r.attribute, u32At(r.payload, 0)}] = u32At(r.payload, 4);
    }
}

int threadProduct(std::string_view payload)
{
    std::uint64_t n = 1; // capped each step: three 32-bit factors could overflow 64 bits
    for (size_t i = 0; i + 4 <= payload.size() && i < 12; i += 4)
        n = std::min<std::uint64_t>(n * std::max<std::uint32_t>(1, u32At(payload, i)), 1ULL << 32);
    return clampInt(n);
}

void applyKernelInfo(const std::vector<NvInfoRecord>& records, std::uint32_t symbolIndex, KernelResources& k)
{
    int maxThreads = 0, reqThreads = 0, cbankParamSize = -1, paramCbankSize = -1, kparamEnd = 0;
    for (const NvInfoRecord& r : records) {
        switch (r.attribute) {
        case EiattrMaxThreads:
            if (r.format == EifmtSval)
                maxThreads = threadProduct(r.payload);
            break;
        case EiattrReqNtid:
            if (r.format == EifmtSval)
                reqThreads = threadProduct(r.payload);
            break;
        case EiattrMaxRegCount:
            if (r.format == EifmtHval && r.value < RegisterCapNone)
                k.maxRegisterCount = r.value;
            break;
        case EiattrCbankParamSize:
            if (r.format == EifmtHval)
                cbankParamSize = r.value;
            break;
        case EiattrParamCbank:
            if (r.format == EifmtSval && r.payload.size() >= 8)
                paramCbankSize = static_cast<int>(u32At(r.payload, 4) >> 16);
            break;
        case EiattrKparamInfo:
            if (r.format == EifmtSval && r.payload.size() >= 12) {
                const int offset = static_cast<int>(u32At(r.payload, 4) >> 16);
                const int size = static_cast<int>((u32At(r.payload, 8) >> 18) & 0x3fff);
                kparamEnd = std::max(kparamEnd, offset + size);
            }
            break;
        case EiattrNumBarriers:
            if (r.format == EifmtBval)
                k.barriers = r.value & 0xff;
            break;
        case EiattrRegCount:
            // Some toolchains put the per-symbol records in the kernel's own section.
            if (r.format == EifmtSval && r.payload.size() == 8 && u32At(r.payload, 0) == symbolIndex)
                k.registers = static_cast<int>(u32At(r.payload, 4));
            break;
        case EiattrFrameSize:
            if (r.format == EifmtSval && r.payload.size() == 8 && u32At(r.payload, 0) == symbolIndex)
                k.localBytes = static_cast<int>(u32At(r.payload, 4));
            break;
        default: break;
        }
    }
    k.maxThreadsPerBlock = maxThreads ? maxThreads : reqThreads;
    // CBANK_PARAM_SIZE is what the driver copies; the other two only back it up for toolchains
    // that leave it out.
    k.paramBytes = cbankParamSize >= 0 ? cbankParamSize : paramCbankSize >= 0 ? paramCbankSize : kparamEnd;
}

} // namespace

Result<int> cubinArchitecture(std::string_view cubin)
{
    auto h = readHeader(cubin);
    if (!h)
        return h.error();
    const int sm = smFromFlags(*h);
    if (sm < 10) {
        char flags[16];
        std::snprintf(flags, sizeof flags, "0x%x", h->e_flags);
        return malformed(std::string("the ELF header does not name an SM architecture (flags ") + flags + ")");
    }
    return sm;
}

Result<std::vector<KernelResources>> readCubinResources(std::string_view bytes)
{
    Cubin cubin;
    if (auto r = cubin.parse(bytes); !r)
        return r.error();

    SymbolValues perSymbol;
    if (const Cubin::Section* info = cubin.find(".nv.info")) {
        auto records = parseNvInfo(cubin.data(*info), info->name);
        if (!records)
            return records.error();
        collectSymbolValues(*records, perSymbol);
    }
    // sm_90+ cubins lay out every kernel's shared window with the 1 KiB system reserve first
    // (user variables start at 0x400), and then carry .nv.shared.reserved.* sections.
    const int arch = cubin.arch();
    const bool reserveInSection = arch >= 90 && std::any_of(cubin.sections().begin(), cubin.sections().end(),
        [](const Cubin::Section& s) { return startsWith(s.name, ".nv.shared.reserved."); });

    std::vector<KernelResources> kernels;
    const auto& symbols = cubin.symbols();
    for (std::uint32_t i = 0; i < symbols.size(); ++i) {
        const Cubin::Symbol& s = symbols[i];
        if (ELF64_ST_TYPE(s.sym.st_info) != STT_FUNC || s.name.empty())
            continue;
        // Entries carry STO_CUDA_ENTRY and their own .nv.info.<name>; device functions (even
        // noinline ones with a frame) have neither, and are not launchable.
        const Cubin::Section* kernelInfo = cubin.find(".nv.info." + s.name);
        if (!(s.sym.st_other & StoCudaEntry) && !kernelInfo)
            continue;
        KernelResources k;
        k.name = s.name;
        k.demangled = demangle(s.name);
        if (const Cubin::Section* text = cubin.at(s.sym.st_shndx); text && startsWith(text->name, ".text."))
            k.registers = static_cast<int>(text->header.sh_info >> 24); // pre-CUDA 13 location
        if (auto it = perSymbol.find({EiattrRegCount, i}); it != perSymbol.end())
            k.registers = clampInt(it->second);
        if (auto it = perSymbol.find({EiattrFrameSize, i}); it != perSymbol.end())
            k.localBytes = clampInt(it->second);
        if (kernelInfo) {
            auto records = parseNvInfo(cubin.data(*kernelInfo), kernelInfo->name);
            if (!records)
                return records.error();
            applyKernelInfo(*records, i, k);
        }
        if (const Cubin::Section* shared = cubin.find(".nv.shared." + s.name)) {
            const int total = clampInt(shared->header.sh_size);
            k.reservedSharedBytes = reserveInSection && total >= Sm90ReservedShared ? Sm90ReservedShared : 0;
            k.staticSharedBytes = total - k.reservedSharedBytes;
        }
        if (const Cubin::Section* c0 = cubin.find(".nv.constant0." + s.name))
            k.constBank0Bytes = clampInt(c0->header.sh_size);
        kernels.push_back(std::move(k));
    }
    return kernels;
}

} // namespace kf
