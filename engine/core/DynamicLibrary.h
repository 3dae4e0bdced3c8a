#pragma once
// dlopen wrapper used by the function tables of libnvrtc (engine) and libcuda/libcupti (device).
// Loading at run time keeps those libraries out of our link line, so every binary starts on a
// machine without them and can say precisely what is missing.

#include "engine/core/Result.h"

#include <string>
#include <type_traits>
#include <vector>

namespace kf {

class DynamicLibrary {
public:
    DynamicLibrary() = default;
    ~DynamicLibrary();
    DynamicLibrary(DynamicLibrary&& other) noexcept;
    DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
    DynamicLibrary(const DynamicLibrary&) = delete;
    DynamicLibrary& operator=(const DynamicLibrary&) = delete;

    /// Tries each candidate (a soname or a path) in order; the error lists every attempt.
    static Result<DynamicLibrary> open(const std::vector<std::string>& candidates, const std::string& what,
                                       const std::string& hint);

    /// Looks up a symbol; nullptr if absent (callers decide whether that is fatal).
    void* symbol(const char* name) const;
    const std::string& path() const { return m_path; }
    bool loaded() const { return m_handle != nullptr; }

private:
    void* m_handle = nullptr;
    std::string m_path;
};

/// Fills a function table from one library: each bind() looks a symbol up, and the required ones
/// that are absent are collected so that one error names all of them.
class SymbolBinder {
public:
    explicit SymbolBinder(const DynamicLibrary& lib) : m_lib(lib) {}

    /// `fallback` is an older name with the same prototype, tried when `name` is absent.
    template <class Fn>
    void bind(Fn& fn, const char* name, bool required = true, const char* fallback = nullptr)
    {
        static_assert(std::is_pointer_v<Fn>, "bind a function pointer");
        fn = reinterpret_cast<Fn>(m_lib.symbol(name));
        if (!fn && fallback)
            fn = reinterpret_cast<Fn>(m_lib.symbol(fallback));
        if (!fn && required)
            m_missing += std::string(m_missing.empty() ? "" : ", ") + name;
    }

    /// Fails as "load <what>" with the library's path and the missing names, if any were.
    Result<void> finish(const std::string& what, const std::string& hint) const;

private:
    const DynamicLibrary& m_lib;
    std::string m_missing;
};

/// Where the library of a function table is found, and what to say when it or some of its
/// symbols are not.
struct LibrarySpec {
    std::vector<std::string> candidates;  ///< sonames or paths, tried in order
    std::string what;                     ///< "libnvrtc (the CUDA runtime compiler)"
    std::string hint;                     ///< when no candidate loads
    std::string name;                     ///< "libnvrtc": "load libnvrtc" when symbols are missing
    std::string olderHint;                ///< when it loads but lacks required symbols
};

/// Opens the table's library for the process, sets `table.path` and binds the table's functions
/// with `bindAll(SymbolBinder&)`; the error names every required symbol that is missing. Call it
/// once per table (each caller's `bindAll` is its own instantiation, with its own kept handle).
template <class Table, class BindAll>
Result<const Table*> loadFunctionTable(Table& table, const LibrarySpec& spec, BindAll bindAll)
{
    auto lib = DynamicLibrary::open(spec.candidates, spec.what, spec.hint);
    if (!lib)
        return lib.error();
    static DynamicLibrary keep; // lives for the process; see DynamicLibrary's destructor
    keep = std::move(lib.value());
    table.path = keep.path();
    SymbolBinder binder(keep);
    bindAll(binder);
    if (auto bound = binder.finish(spec.name, spec.olderHint); !bound)
        return bound.error();
    return &table;
}

} // namespace kf
