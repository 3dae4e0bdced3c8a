#include "engine/protocol/Messages.h"

#include "engine/protocol/Protocol.h"
#include "engine/protocol/ReportJson.h"

#include <algorithm>

namespace kf::protocol {

namespace jr = kf::json;

namespace {

Result<void> readMessage(const std::string& what, const std::function<void()>& read)
{
    try {
        read();
        return {};
    } catch (const jr::SchemaError& e) {
        return Error::inFile({}, e.pointer, what, e.message, "the runner protocol is described in docs/runner-protocol.md");
    } catch (const nlohmann::json::exception& e) {
        return Error::failed(what, std::string("malformed message: ") + e.what());
    }
}

nlohmann::json deviceJson(const DeviceSummary& d)
{
    nlohmann::json j = {{"ordinal", d.ordinal},
                        {"arch", d.arch},
                        {"persisting_l2_max_bytes", d.persistingL2MaxBytes},
                        {"memory_bus_bits", d.memoryBusBits},
                        {"max_shared_per_block", d.maxSharedPerBlock},
                        {"max_shared_per_block_optin", d.maxSharedPerBlockOptin},
                        {"ecc", d.ecc},
                        {"pageable_memory_access", d.pageableMemoryAccess},
                        {"uuid", d.uuid},
                        {"pci_bus_id", d.pciBusId}};
    d.writeTo(j);
    return j;
}

DeviceSummary readDevice(const Fields& f)
{
    DeviceSummary d;
    d.readFrom(f);
    d.ordinal = f.integer("ordinal");
    d.arch = f.text("arch");
    d.persistingL2MaxBytes = f.integer("persisting_l2_max_bytes");
    d.memoryBusBits = f.integer("memory_bus_bits");
    d.maxSharedPerBlock = f.integer("max_shared_per_block");
    d.maxSharedPerBlockOptin = f.integer("max_shared_per_block_optin");
    d.ecc = f.boolean("ecc");
    d.pageableMemoryAccess = f.boolean("pageable_memory_access");
    d.uuid = f.text("uuid");
    d.pciBusId = f.text("pci_bus_id");
    // The architecture from the compute capability when the runner did not name it.
    if (d.arch.empty() && !d.computeCapability.empty()) {
        std::string digits;
        for (char c : d.computeCapability)
            if (c >= '0' && c <= '9')
                digits += c;
        if (!digits.empty())
            d.arch = "sm_" + digits;
    }
    return d;
}

std::int64_t readId(const Fields& f)
{
    return f.integer("id", 0);
}

// The value a nested reader gave, or its error as a failure of the message being read.
template <class T>
T readNested(Result<T> r)
{
    if (!r)
        jr::fail(r.error().pointer, r.error().why);
    return std::move(r.value());
}

} // namespace

bool Hello::has(const std::string& feature) const
{
    return std::find(features.begin(), features.end(), feature) != features.end();
}

std::string Hello::arch() const { return device ? device->arch : std::string(); }

Environment Hello::environment() const
{
    Environment e;
    if (device)
        static_cast<GpuFacts&>(e) = *device;
    // The device's driver, or the hello's own when the device entry does not name it.
    if (e.driver.empty())
        e.driver = driver;
    if (!e.cudaDriverApi)
        e.cudaDriverApi = cudaDriverApi;
    e.nvrtc = nvrtc;
    e.torch = torch;
    return e;
}

nlohmann::json Hello::toJson() const
{
    nlohmann::json j = {{"type", "hello"},
                        {"device", device ? deviceJson(*device) : nlohmann::json(nullptr)},
                        {"device_error", deviceError},
                        {"features", features},
                        {"versions", {{"torch", torch}, {"cuda_driver_api", cudaDriverApi}, {"driver", driver}, {"nvrtc", nvrtc}}}};
    if (!deviceErrorKind.empty())
        j["device_error_kind"] = deviceErrorKind;
    j["host"] = host;
    j["visible_devices"] = visibleDevices;
    j["runner_build"] = runnerBuild;
    j["signing_key_id"] = signingKeyId;
    nlohmann::json devs = nlohmann::json::array();
    for (const VisibleDevice& d : devices)
        devs.push_back({{"ordinal", d.ordinal}, {"gpu", d.gpu}, {"uuid", d.uuid}});
    j["devices"] = devs;
    j["sanitizer"] = sanitizer ? nlohmann::json{{"path", sanitizer->path}, {"version", sanitizer->version}} : nlohmann::json(nullptr);
    return j;
}

std::string Hello::gpuKey() const
{
    std::string gpu = "cpu";
    if (device)
        gpu = !device->uuid.empty() ? device->uuid
              : !device->pciBusId.empty() ? device->pciBusId
                                          : "visible:" + visibleDevices + "#" + std::to_string(device->ordinal);
    return (host.empty() ? std::string("?") : host) + "/" + gpu;
}

Result<Hello> Hello::fromJson(const nlohmann::json& j)
{
    Hello h;
    auto ok = readMessage("read the runner's hello", [&] {
        const Fields f(j, "");
        if (f.text("type") != "hello")
            jr::fail(f.at("type"), "expected \"hello\", found \"" + f.text("type") + "\"");
        if (f.find("device"))
            h.device = readDevice(f.object("device"));
        h.deviceError = f.text("device_error");
        h.deviceErrorKind = f.text("device_error_kind");
        h.features = f.texts("features");
        const Fields v = f.object("versions");
        h.torch = v.text("torch");
        h.driver = v.text("driver");
        h.cudaDriverApi = v.integer("cuda_driver_api");
        h.nvrtc = v.text("nvrtc");
        h.host = f.text("host");
        h.visibleDevices = f.text("visible_devices");
        h.runnerBuild = f.text("runner_build");
        h.signingKeyId = f.text("signing_key_id");
        f.forEach("devices", [&](const nlohmann::json& d, const std::string& ptr) {
            const Fields df(d, ptr);
            if (h.devices.size() < 1024)
                h.devices.push_back({static_cast<int>(df.integer("ordinal")), df.text("gpu"), df.text("uuid")});
        });
        if (f.find("sanitizer")) {
            const Fields sf = f.object("sanitizer");
            h.sanitizer = SanitizerTool{sf.text("path"), sf.text("version")};
        }
    });
    if (!ok)
        return ok.error();
    return h;
}

const char* levelName(Event::Level l) { return l == Event::Level::Warning ? "warning" : "info"; }

Event Event::progress(std::int64_t id, int permille, std::string stage)
{
    Event e;
    e.kind = Kind::Progress;
    e.id = id;
    e.permille = std::clamp(permille, 0, 1000);
    e.stage = std::move(stage);
    return e;
}

Event Event::launchBegin(std::int64_t id, std::string label, std::int64_t timeoutMs)
{
    Event e;
    e.kind = Kind::LaunchBegin;
    e.id = id;
    e.label = std::move(label);
    e.timeoutMs = timeoutMs;
    return e;
}

Event Event::launchEnd(std::int64_t id)
{
    Event e;
    e.kind = Kind::LaunchEnd;
    e.id = id;
    return e;
}

Event Event::log(std::int64_t id, Level level, std::string text)
{
    Event e;
    e.kind = Kind::Log;
    e.id = id;
    e.level = level;
    e.text = std::move(text);
    return e;
}

nlohmann::json Event::toJson() const
{
    switch (kind) {
    case Kind::Progress: return {{"type", "progress"}, {"id", id}, {"permille", permille}, {"stage", stage}};
    case Kind::LaunchBegin: return {{"type", "launch_begin"}, {"id", id}, {"label", label}, {"timeout_ms", timeoutMs}};
    case Kind::LaunchEnd: return {{"type", "launch_end"}, {"id", id}};
    case Kind::Log: return {{"type", "log"}, {"id", id}, {"level", levelName(level)}, {"text", text}};
    }
    return {};
}

Result<Event> Event::fromJson(const nlohmann::json& j)
{
    Event e;
    auto ok = readMessage("read a runner event", [&] {
        const Fields f(j, "");
        const std::string type = f.text("type");
        e.id = readId(f);
        if (type == "progress") {
            e.kind = Kind::Progress;
            if (!f.find("permille"))
                jr::fail(f.at("permille"), "a progress event needs permille (0 to 1000)");
            const std::int64_t p = f.integer("permille");
            if (p < 0 || p > 1000)
                jr::fail(f.at("permille"), "permille must be between 0 and 1000, found " + std::to_string(p));
            e.permille = static_cast<int>(p);
            e.stage = f.text("stage");
        } else if (type == "launch_begin") {
            e.kind = Kind::LaunchBegin;
            e.label = f.text("label");
            const double t = f.number("timeout_ms", 0);
            e.timeoutMs = t > 0 && t < 1e15 ? static_cast<std::int64_t>(t) : 0;
        } else if (type == "launch_end") {
            e.kind = Kind::LaunchEnd;
        } else if (type == "log") {
            e.kind = Kind::Log;
            const std::string level = f.text("level", "info");
            if (level != "info" && level != "warning")
                jr::fail(f.at("level"), "expected \"info\" or \"warning\", found \"" + level + "\"");
            e.level = level == "warning" ? Level::Warning : Level::Info;
            e.text = f.text("text");
        } else {
            jr::fail(f.at("type"), "\"" + type + "\" is not an event (progress, launch_begin, launch_end, log)");
        }
    });
    if (!ok)
        return ok.error();
    return e;
}

Result<RunnerMessage> RunnerMessage::decode(const nlohmann::json& j)
{
    RunnerMessage m;
    auto ok = readMessage("read a runner message", [&] {
        const Fields f(j, "");
        const std::string type = f.text("type");
        if (f.find("id"))
            m.id = readId(f);
        if (type == "hello") {
            m.type = Type::Hello;
            m.hello = readNested(Hello::fromJson(j));
        } else if (type == "report") {
            m.type = Type::Report;
            const nlohmann::json* r = f.find("report");
            if (!r || !r->is_object())
                jr::fail(f.at("report"), "a report message needs a report object");
            m.report = *r;
        } else if (type == "error") {
            m.type = Type::Error;
            m.fatal = f.boolean("fatal");
            const Fields e = f.object("error");
            m.error = Error::inFile({}, e.text("pointer"), e.text("what"), e.text("why"), e.text("hint")).withKind(e.text("kind"));
            if (m.error.why.empty())
                m.error.why = "the runner reported an error without a reason";
        } else if (type == "pong") {
            m.type = Type::Pong;
        } else if (type == "files") {
            m.type = Type::Files;
            m.missing = readNested(FilesAnswer::fromJson(j)).missing;
        } else if (type == "file_chunk") {
            m.type = Type::FileChunk;
            m.chunk = readNested(FileChunk::fromJson(j));
        } else if (type == "heartbeat") {
            m.type = Type::Heartbeat; // the runner's process is alive (sent about once a second in a request)
        } else if (type == "progress" || type == "launch_begin" || type == "launch_end" || type == "log") {
            m.type = Type::Event;
            m.event = readNested(Event::fromJson(j));
        } else {
            jr::fail(f.at("type"), "the runner sent an unknown message type \"" + type + "\"");
        }
    });
    if (!ok)
        return ok.error();
    return m;
}

} // namespace kf::protocol
