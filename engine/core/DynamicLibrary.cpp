#include "engine/core/DynamicLibrary.h"

#include <dlfcn.h>
#include <link.h>

namespace kf {

DynamicLibrary::~DynamicLibrary()
{
    // Deliberately never dlclose: CUDA libraries register atexit handlers and unloading them
    // early crashes at process exit. The handle lives as long as the process.
}

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : m_handle(other.m_handle), m_path(std::move(other.m_path))
{
    other.m_handle = nullptr;
}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept
{
    m_handle = other.m_handle;
    m_path = std::move(other.m_path);
    other.m_handle = nullptr;
    return *this;
}

Result<DynamicLibrary> DynamicLibrary::open(const std::vector<std::string>& candidates, const std::string& what,
                                            const std::string& hint)
{
    std::string tried;
    for (const auto& c : candidates) {
        void* h = ::dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (h) {
            DynamicLibrary lib;
            lib.m_handle = h;
            // Record where it actually came from; users debugging a mismatch need the path.
            link_map* map = nullptr;
            if (::dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name)
                lib.m_path = map->l_name;
            else
                lib.m_path = c;
            return lib;
        }
        const char* err = ::dlerror();
        tried += "\n  " + c + ": " + (err ? err : "not found");
    }
    return Error::failed("load " + what, what + " could not be loaded; tried:" + tried, hint);
}

Result<void> SymbolBinder::finish(const std::string& what, const std::string& hint) const
{
    if (m_missing.empty())
        return {};
    return Error::failed("load " + what, m_lib.path() + " lacks " + m_missing, hint);
}

void* DynamicLibrary::symbol(const char* name) const
{
    return m_handle ? ::dlsym(m_handle, name) : nullptr;
}

} // namespace kf
