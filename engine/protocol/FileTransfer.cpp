#include "engine/protocol/FileTransfer.h"

#include "engine/core/Base64.h"
#include "engine/core/JsonReader.h"

namespace kf::protocol {

namespace jr = kf::json;

namespace {

// Like every reader of the protocol, these ignore keys they do not know (a newer side may add
// some). `file` is "request" for what a client sent, as RunRequest names it.
template <class T, class F>
Result<T> readWith(const char* what, const char* file, F read)
{
    try {
        return read();
    } catch (const jr::SchemaError& e) {
        return Error::inFile(file, e.pointer, what, e.message, "the runner protocol is described in docs/runner-protocol.md");
    } catch (const nlohmann::json::exception& e) {
        return Error::inFile(file, {}, what, std::string("malformed message: ") + e.what());
    }
}

// The sha256 at `pointer`, checked.
std::string asSha(const nlohmann::json& v, const std::string& pointer)
{
    std::string sha = jr::asString(v, pointer);
    if (!isSha256(sha))
        jr::fail(pointer, "a sha256 is 64 lowercase hex digits");
    return sha;
}

std::string readSha(jr::Object& o, std::string_view key)
{
    return asSha(o.required(key), o.at(key));
}

// The array of sha256s under `key`.
std::vector<std::string> readShaList(jr::Object& o, std::string_view key)
{
    const nlohmann::json& list = jr::asArray(o.required(key), o.at(key));
    std::vector<std::string> shas;
    for (std::size_t i = 0; i < list.size(); ++i)
        shas.push_back(asSha(list[i], jr::child(o.at(key), i)));
    return shas;
}

// The chunk fields put_file and file_chunk share: offset, size, base64 data, last, consistent.
void readChunk(jr::Object& o, std::int64_t maxSize, std::int64_t& size, std::int64_t& offset, std::string& data, bool& last)
{
    size = o.integer("size");
    if (size < 0 || size > maxSize)
        jr::fail(o.at("size"), "size must be between 0 and " + std::to_string(maxSize >> 30) + " GiB");
    offset = o.integer("offset");
    if (offset < 0 || offset > size)
        jr::fail(o.at("offset"), "offset must be between 0 and size (" + std::to_string(size) + ")");
    const std::string text = o.string("data");
    // Checked before decoding: a huge string is refused, never decoded.
    if (text.size() > (kMaxChunkBytes / 3 + 1) * 4)
        jr::fail(o.at("data"), "a chunk holds at most " + std::to_string(kMaxChunkBytes >> 20) + " MiB");
    if (!base64Decode(text, data))
        jr::fail(o.at("data"), "data is not valid base64 (standard alphabet, '=' padding, no line breaks)");
    if (data.size() > kMaxChunkBytes)
        jr::fail(o.at("data"), "a chunk holds at most " + std::to_string(kMaxChunkBytes >> 20) + " MiB");
    if (static_cast<std::int64_t>(data.size()) > size - offset)
        jr::fail(o.at("data"), "the chunk's " + std::to_string(data.size()) + " bytes at offset " + std::to_string(offset) +
                                   " run past the file's size " + std::to_string(size));
    last = o.booleanOr("last", false);
    const bool ends = offset + static_cast<std::int64_t>(data.size()) == size;
    if (last != ends)
        jr::fail(o.at("last"), last ? "the last chunk must end at the file's size (" + std::to_string(size) + ")"
                                    : "a chunk that ends at the file's size must be the last");
}

} // namespace

bool isSha256(std::string_view text)
{
    if (text.size() != 64)
        return false;
    for (char c : text)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    return true;
}

std::string pathProblem(std::string_view path)
{
    if (path.empty())
        return "the path is empty";
    if (path.size() > 1024)
        return "the path is longer than 1024 bytes";
    for (char c : path) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            return "the path holds a control character";
        if (c == '\\')
            return "the path holds a backslash; separate folders with /";
    }
    if (path.front() == '/')
        return "an absolute path; give it relative to its folder";
    std::size_t start = 0;
    while (start <= path.size()) {
        const std::size_t slash = path.find('/', start);
        const std::string_view part = path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
        if (part.empty())
            return "the path has an empty component (\"//\" or a trailing /)";
        if (part == "..")
            return "the path has a \"..\" component, which would leave its folder";
        if (part == ".")
            return "the path has a \".\" component";
        if (slash == std::string_view::npos)
            break;
        start = slash + 1;
    }
    return {};
}

Result<FileMap> readFileMap(const nlohmann::json& value, const std::string& pointer)
{
    return readWith<FileMap>("read the request", "request", [&] {
        if (!value.is_object())
            jr::fail(pointer, "expected an object of \"<relative path>\": \"<sha256>\", found " + jr::describe(value));
        if (value.size() > kMaxStagedFiles)
            jr::fail(pointer, std::to_string(value.size()) + " files, more than the " + std::to_string(kMaxStagedFiles) +
                                  " a request may name");
        FileMap files;
        for (auto it = value.begin(); it != value.end(); ++it) {
            const std::string p = jr::child(pointer, it.key());
            if (std::string why = pathProblem(it.key()); !why.empty())
                jr::fail(p, why);
            files[it.key()] = asSha(it.value(), p);
        }
        return files;
    });
}

nlohmann::json HaveFiles::toJson() const
{
    return {{"type", "have_files"}, {"sha256", sha256}};
}

Result<HaveFiles> HaveFiles::fromJson(const nlohmann::json& j)
{
    return readWith<HaveFiles>("read a have_files request", "request", [&] {
        jr::Object o(j, "");
        HaveFiles h;
        const nlohmann::json& list = jr::asArray(o.required("sha256"), o.at("sha256"));
        if (list.size() > kMaxStagedFiles)
            jr::fail(o.at("sha256"), std::to_string(list.size()) + " hashes, more than the " + std::to_string(kMaxStagedFiles) +
                                         " one request may ask about");
        h.sha256 = readShaList(o, "sha256");
        return h;
    });
}

nlohmann::json PutFile::toJson() const
{
    return {{"type", "put_file"}, {"sha256", sha256}, {"size", size}, {"offset", offset}, {"data", base64Encode(data)}, {"last", last}};
}

Result<PutFile> PutFile::fromJson(const nlohmann::json& j)
{
    return readWith<PutFile>("read a put_file request", "request", [&] {
        jr::Object o(j, "");
        PutFile p;
        p.sha256 = readSha(o, "sha256");
        readChunk(o, kMaxStagedBytes, p.size, p.offset, p.data, p.last);
        return p;
    });
}

nlohmann::json FilesAnswer::toJson() const
{
    return {{"type", "files"}, {"missing", missing}};
}

Result<FilesAnswer> FilesAnswer::fromJson(const nlohmann::json& j)
{
    return readWith<FilesAnswer>("read the runner's files message", "", [&] {
        jr::Object o(j, "");
        FilesAnswer a;
        a.missing = readShaList(o, "missing");
        return a;
    });
}

nlohmann::json FileChunk::toJson() const
{
    return {{"type", "file_chunk"}, {"id", id},          {"path", path},
            {"offset", offset},     {"size", size},      {"data", base64Encode(data)},
            {"last", last}};
}

Result<FileChunk> FileChunk::fromJson(const nlohmann::json& j)
{
    return readWith<FileChunk>("read a file_chunk event", "", [&] {
        jr::Object o(j, "");
        FileChunk c;
        c.id = o.integerOr("id", 0);
        c.path = o.string("path");
        if (std::string why = pathProblem(c.path); !why.empty())
            jr::fail(o.at("path"), why);
        readChunk(o, kMaxStreamedFileBytes, c.size, c.offset, c.data, c.last);
        return c;
    });
}

} // namespace kf::protocol
