#pragma once
// dlopen wrapper used by the function tables of libnvrtc (engine) and libcuda/libcupti (device).
// Loading at run time keeps those libraries out of our link line, so every binary starts on a
// machine without them and can say precisely what is missing.

#include "engine/core/Result.h"

#include <string>
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

} // namespace kf
