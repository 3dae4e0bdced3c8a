// GPU MODE's task.yml (the reference-kernels layout) read with our YAML reader into the spec the
// importer helper takes. Only the shape of the file is checked here; what the keys mean is the
// helper's to map (docs/agents.md, "GPU MODE").
#include "engine/agent/Import.h"
#include "engine/agent/Yaml.h"

#include "engine/core/JsonReader.h"

#include <set>

namespace kf::agent {

namespace jr = kf::json;
using Json = nlohmann::json;

Result<GpuModeSpec> readGpuModeTaskYml(std::string_view text, const std::string& origin)
{
    auto doc = parseYaml(text, origin);
    if (!doc)
        return doc.error();
    GpuModeSpec out;
    const Json& v = doc->value;
    try {
        if (!v.is_object())
            jr::fail("", "task.yml must be a mapping of keys (files, lang, tests, ...), not " + jr::describe(v));
        static const std::set<std::string> known = {"files", "lang", "description", "config", "tests", "benchmarks",
                                                    "test_timeout", "benchmark_timeout", "ranked_timeout", "ranking_by",
                                                    "templates", "seed", "multi_gpu"};
        if (!v.contains("files"))
            jr::fail("", "task.yml has no files: list the problem's files (reference.py, task.py, ...)");
        const Json& files = jr::asArray(v["files"], "/files");
        for (size_t i = 0; i < files.size(); ++i) {
            jr::Object f(files[i], jr::child("/files", i));
            f.string("name");
            f.string("source");
            f.finish();
        }
        if (!v.contains("lang") || !v["lang"].is_string())
            jr::fail("/lang", "lang must be a string (\"py\")");
        if (v["lang"] != "py")
            jr::fail("/lang", "lang: " + v["lang"].get<std::string>() + " keeps the reference in C++; KernelForge imports "
                              "Python references (lang: py)");
        if (v.contains("description") && !v["description"].is_string())
            jr::fail("/description", "must be text");
        if (v.contains("config") && !v["config"].is_object())
            jr::fail("/config", "must be a mapping");
        for (const char* list : {"tests", "benchmarks"}) {
            if (!v.contains(list))
                continue;
            const std::string ptr = std::string("/") + list;
            const Json& entries = jr::asArray(v[list], ptr);
            for (size_t i = 0; i < entries.size(); ++i) {
                if (!entries[i].is_object())
                    jr::fail(jr::child(ptr, i), "each entry is a mapping like {size: 4096, seed: 42}, not "
                                                    + jr::describe(entries[i]));
                for (auto it = entries[i].begin(); it != entries[i].end(); ++it)
                    if (it.value().is_structured())
                        jr::fail(jr::child(jr::child(ptr, i), it.key()), "entry values must be numbers, text or booleans");
            }
        }
        if (!v.contains("tests") || v["tests"].empty())
            jr::fail("/tests", "task.yml lists no tests: the task needs at least one test shape");
        for (const char* key : {"test_timeout", "benchmark_timeout", "ranked_timeout"})
            if (v.contains(key) && !v[key].is_number())
                jr::fail(std::string("/") + key, "must be a number of seconds");
        for (auto it = v.begin(); it != v.end(); ++it)
            if (!known.count(it.key()))
                out.notes.push_back("task.yml: " + it.key() + " is not used by the import");
    } catch (const jr::SchemaError& e) {
        return Error::inFile(doc->locate(origin, e.pointer), e.pointer, "read task.yml", e.message);
    }
    out.spec = v;
    return out;
}

} // namespace kf::agent
