#pragma once
#include "reportutil.h"
// A real registry on disk for the browser's tests and screenshots: example tasks promoted with
// the registry fixture's reports (no GPU), two versions of one softmax with different sources,
// the same softmax on another GPU, a layer norm, and the first softmax deprecated.
#include "registryfixture.h"

#include "engine/core/Files.h"
#include "engine/core/JsonReader.h"
#include "widgets/registry/RegistryDetails.h"

#include <QString>
#include <QStringList>

#include <filesystem>
#include <fstream>

namespace kf::test {

struct SampleRegistry {
    std::filesystem::path directory;
    QString softmaxV1;   ///< deprecated
    QString softmaxV2;   ///< same prefix as v1, one loop changed
    QString softmaxA100; ///< same op, another GPU
    QString layerNorm;
    QString error;       ///< empty when every promotion went through
};

inline QString promoteOne(const Registry& registry, const PromotionInput& in, QString* error)
{
    auto out = registry.promote(in);
    if (!out) {
        *error += QString::fromStdString(out.error().message()) + '\n';
        return {};
    }
    if (!out->entry) {
        *error += QString::fromStdString(out->gates.sentence()) + '\n';
        return {};
    }
    return QString::fromStdString(out->entry->id);
}

/// Promotes the sample kernels into `parent`/registry (task copies go to `parent` as well).
inline SampleRegistry makeSampleRegistry(const std::filesystem::path& parent)
{
    SampleRegistry s;
    s.directory = parent / "registry";
    const Registry registry(s.directory);
    const std::filesystem::path softmax = copyExample("softmax_fp32", parent);
    const std::filesystem::path kernel = softmax / "optimized.cu";
    const std::string original = readFileBytes(kernel).value();
    // v1 used the fast-math exponential; v2 goes back to expf and says why.
    std::string v1 = original;
    for (size_t at = v1.find("expf("); at != std::string::npos; at = v1.find("expf(", at + 3))
        if (at == 0 || v1[at - 1] != '_')
            v1.replace(at, 5, "__expf(");
    std::ofstream(kernel, std::ios::trunc) << v1;
    s.softmaxV1 = promoteOne(registry, passingInput(softmax, "optimized.cu", {1.36, 1.42}), &s.error);
    std::ofstream(kernel, std::ios::trunc) << original << "\n// v2: expf again: __expf lost 2 ulp on rows with large spreads\n";
    // v2 was also compared with torch.compile (0.92x of it), as `kforge promote` does by default.
    PromotionInput v2 = passingInput(softmax, "optimized.cu", {1.48, 1.61});
    v2.performance = asReport(withCompile(performanceFor(v2.task, "optimized.cu", {1.48, 1.61}), 0.92));
    s.softmaxV2 = promoteOne(registry, v2, &s.error);
    s.softmaxA100 = promoteOne(registry, passingInput(softmax, "optimized.cu", {1.21, 1.18}, "NVIDIA A100-SXM4-80GB"), &s.error);
    const std::filesystem::path layerNorm = copyExample("layer_norm_bf16", parent);
    s.layerNorm = promoteOne(registry, passingInput(layerNorm, "optimized.cu", {1.9, 2.4}), &s.error);
    if (auto d = registry.deprecate(s.softmaxV1.toStdString(), "superseded by v2 (vectorised loads on long rows)"); !d)
        s.error += QString::fromStdString(d.error().message());
    return s;
}

/// What the app reads for the browser's details pane, straight from the version folder.
inline kf::ui::RegistryDetails readDetails(const std::filesystem::path& directory, const QString& id)
{
    kf::ui::RegistryDetails d;
    const Registry registry(directory);
    auto entry = registry.entry(id.toStdString());
    if (!entry) {
        d.error = QString::fromStdString(entry.error().message());
        return d;
    }
    d.entry = entry.value();
    const std::filesystem::path folder = registry.entryDirectory(d.entry.id);
    if (auto p = registry.promotion(d.entry.id))
        d.promotion = p.value();
    if (auto c = kf::json::readFile(folder / "correctness.json"))
        d.correctness = kf::test::report(c.value());
    if (auto p = kf::json::readFile(folder / "performance.json"))
        d.performance = kf::test::report(p.value());
    if (auto src = readFileBytes(folder / d.entry.kernelFile))
        d.source = QString::fromStdString(src.value());
    return d;
}

} // namespace kf::test
