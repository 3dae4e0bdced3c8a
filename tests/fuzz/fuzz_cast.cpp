// .cast packages from elsewhere (engine/cast): the zip layer, the manifest checks and the models
// inside. The first byte picks the way in: 'Z' the rest is a whole archive (readArchiveBytes +
// checkPackage); 'T' the rest is a model file (inspectModel); 'P' the rest is a torch.export
// program's JSON, put in a minimal .pt2 so the graph reader is reached; 'R' a model run's
// evidence (checkModelRun); 'I' a model's input description (checkInputSpec); anything else
// the rest is manifest.json, put first in an archive whose other entries are the files it lists,
// with their sizes and hashes made to match, so the fuzzer reaches the op checks instead of
// stopping at the first hash (a "promotion_json" member of the corpus becomes the bytes of every
// promotion.json). A package that opens has its ops' evidence read as `cast inspect` reads it
// (readOpEvidence, with and without a key).
#include "engine/cast/CastModel.h"
#include "engine/cast/CastPackage.h"
#include "engine/cast/CastPackageEvidence.h"
#include "engine/core/JsonReader.h"
#include "engine/core/Hmac.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace {

void readEvidence(const kf::Result<kf::cast::Package>& pkg)
{
    if (!pkg)
        return;
    kf::protocol::SigningKey key{std::string(32, 'k'), "0123456789abcdef", {}};
    for (const kf::cast::PackageOp& op : pkg->ops) {
        (void)kf::cast::readOpEvidence(pkg.value(), op, nullptr, "no key").toJson();
        (void)kf::cast::readOpEvidence(pkg.value(), op, &key, {}).trustText();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 1)
        return 0;
    const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
    if (data[0] == 'Z') {
        kf::cast::ArchiveLimits limits;
        limits.maxTotalBytes = std::uint64_t(64) << 20;   // keep a run's memory bounded
        limits.maxEntryBytes = std::uint64_t(16) << 20;
        readEvidence(kf::cast::openPackageBytes(rest, "fuzz.cast", limits));
        return 0;
    }
    if (data[0] == 'T') {
        (void)kf::cast::inspectModel(rest, "fuzz.pt2");
        return 0;
    }
    if (data[0] == 'P') {
        // A minimal archive as torch.export.save writes it, around the fuzzed program.
        kf::cast::Archive a;
        a.entries = {{"m/archive_format", "pt2"},
                     {"m/models/model.json", std::string(rest)},
                     {"m/data/weights/model_weights_config.json", "{\"config\": {}}"}};
        (void)kf::cast::inspectModelArchive(a, "fuzz.pt2");
        return 0;
    }
    if (data[0] == 'R' || data[0] == 'I') {
        auto parsed = kf::json::parseText(rest, "fuzz.json");
        if (!parsed)
            return 0;
        try {
            if (data[0] == 'R')
                kf::cast::checkModelRun(parsed.value(), "", "block");
            else
                kf::cast::checkInputSpec(parsed.value(), "");
        } catch (const kf::json::SchemaError&) {
        }
        return 0;
    }
    kf::cast::Archive archive;
    archive.entries.push_back({"manifest.json", std::string(rest)});
    auto manifest = nlohmann::json::parse(rest, nullptr, false);
    if (!manifest.is_discarded() && manifest.is_object() && manifest.contains("files") && manifest["files"].is_array() &&
        manifest["files"].size() < 256) {
        for (auto& f : manifest["files"]) {
            if (!f.is_object() || !f.contains("path") || !f["path"].is_string())
                continue;
            // task.json entries get a real task when the corpus provides one under "task_json".
            const std::string path = f["path"].get<std::string>();
            const bool record = path.size() >= 14 && path.compare(path.size() - 14, 14, "promotion.json") == 0;
            std::string bytes = record && manifest.contains("promotion_json") ? manifest["promotion_json"].dump()
                                : manifest.contains("task_json")             ? manifest["task_json"].dump()
                                                                             : std::string("x");
            auto sha = kf::sha256Hex(bytes);
            if (!sha)
                return 0;
            f["sha256"] = sha.value();
            f["bytes"] = bytes.size();
            archive.entries.push_back({f["path"].get<std::string>(), bytes});
        }
        manifest.erase("task_json");
        manifest.erase("promotion_json");
        archive.entries.front().bytes = manifest.dump();
    }
    readEvidence(kf::cast::checkPackage(std::move(archive), "fuzz.cast"));
    return 0;
}
