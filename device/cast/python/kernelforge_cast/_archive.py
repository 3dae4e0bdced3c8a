"""Reading a zip from elsewhere safely (a package, or a model inside one), and strict JSON.

Before anything is decompressed the central directory is checked (names, duplicates, links,
sizes, compression ratio); each entry is unpacked to exactly its declared size. Each refusal
names the entry and the problem. The limits are those of KernelForge's own reader
(docs/cast-format.md); _package.py adds the manifest and the hash of every file.
"""

import json
import stat
import zipfile
import zlib


FORMAT = "kernelforge-cast"
SCHEMA_VERSION = 1          # a package of ops
MODEL_SCHEMA_VERSION = 2    # a package that also carries models
MANIFEST = "manifest.json"

MAX_ENTRIES = 4096
MAX_ENTRY_BYTES = 512 << 20
MAX_TOTAL_BYTES = 2 << 30
MAX_RATIO = 200.0
RATIO_FLOOR_BYTES = 1 << 20
MAX_NAME_BYTES = 255
MAX_MANIFEST_BYTES = 16 << 20


class PackageError(ValueError):
    """A package that cannot be loaded; the message names the file, the entry and the problem."""


def _fail(origin, entry, why):
    where = "%s: entry \"%s\": " % (origin, entry) if entry else "%s: " % origin
    raise PackageError(where + why + " (the package is damaged or was edited; export it again with `kforge cast export`)")


def entry_name_problem(name):
    if not name:
        return "the entry has no name"
    raw = name.encode("utf-8", "surrogateescape")
    if len(raw) > MAX_NAME_BYTES:
        return "the name is %d bytes long; the limit is %d" % (len(raw), MAX_NAME_BYTES)
    if any(c < 0x20 or c == 0x7F for c in raw):
        return "the name contains a control character"
    if "\\" in name:
        return "the name contains a backslash (a Windows path separator)"
    if name.startswith("/"):
        return "the name is an absolute path"
    if len(name) >= 2 and name[1] == ":":
        return "the name starts with a drive letter"
    if name.endswith("/"):
        return "it is a directory entry; a package lists files only"
    for part in name.split("/"):
        if part == "":
            return "the name has an empty path component (\"//\")"
        if part == "..":
            return "the name climbs out of the package (\"..\")"
        if part == ".":
            return "the name has a \".\" component"
    return ""


def strict_json(data, origin):
    """Parses JSON as every KernelForge reader does: a key twice in one object, NaN or Infinity,
    or nesting too deep is an error (PackageError naming ``origin``)."""
    def no_duplicates(pairs):
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            dup = next(k for k in keys if keys.count(k) > 1)
            raise ValueError("the key \"%s\" appears twice in one object" % dup)
        return dict(pairs)

    def no_constant(name):
        raise ValueError("%s is not a JSON number" % name)

    try:
        text = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data
        return json.loads(text, object_pairs_hook=no_duplicates, parse_constant=no_constant)
    except RecursionError:
        raise PackageError("%s: it is nested too deeply" % origin) from None
    except (UnicodeDecodeError, ValueError) as e:
        raise PackageError("%s: it is not JSON: %s" % (origin, e)) from None


def read_archive(path, origin=None):
    """{name: bytes} of every entry, in archive order, after the directory checks. ``path`` is a
    file name or a binary file object (a model inside a package); ``origin`` names it in errors."""
    origin = str(path) if origin is None else origin
    try:
        zf = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise PackageError("%s: the file does not exist" % origin) from None
    except (zipfile.BadZipFile, OSError) as e:
        raise PackageError("%s: it is not a readable zip archive: %s" % (origin, e)) from None
    with zf:
        infos = zf.infolist()
        if not infos:
            _fail(origin, "", "the archive is empty")
        if len(infos) > MAX_ENTRIES:
            _fail(origin, "", "it has %d entries; a package may have at most %d" % (len(infos), MAX_ENTRIES))
        seen = {}
        total = compressed = 0
        for i, info in enumerate(infos):
            name = info.filename
            label = name or "#%d" % i
            why = entry_name_problem(name)
            # zipfile turns a trailing "/" into a directory flag; its orig_filename keeps the truth.
            if not why and info.orig_filename != name:
                why = entry_name_problem(info.orig_filename) or "the name is stored differently from how it reads"
            if why:
                _fail(origin, label, why)
            key = name.lower()
            if key in seen:
                _fail(origin, name, "the name appears twice" if seen[key] == name else
                      "the name differs from \"%s\" only in case (two entries would land on one file)" % seen[key])
            seen[key] = name
            if info.flag_bits & 0x1:
                _fail(origin, name, "it is encrypted; packages are never encrypted")
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                _fail(origin, name, "compression method %d is not one a package uses (stored or deflated)" % info.compress_type)
            if info.create_system == 3:  # Unix: the mode is in the high 16 bits
                mode = info.external_attr >> 16
                if stat.S_ISLNK(mode):
                    _fail(origin, name, "it is a symbolic link; a package holds only regular files")
                if stat.S_IFMT(mode) != 0 and not stat.S_ISREG(mode):
                    _fail(origin, name, "it is not a regular file (mode %d)" % stat.S_IFMT(mode))
            if info.file_size > MAX_ENTRY_BYTES:
                _fail(origin, name, "it unpacks to %d bytes; the limit is %d" % (info.file_size, MAX_ENTRY_BYTES))
            if info.file_size > RATIO_FLOOR_BYTES and info.file_size > MAX_RATIO * max(info.compress_size, 1):
                _fail(origin, name, "it unpacks %d bytes into %d, a ratio above %d (a zip bomb)"
                      % (info.compress_size, info.file_size, int(MAX_RATIO)))
            total += info.file_size
            compressed += info.compress_size
            if total > MAX_TOTAL_BYTES:
                _fail(origin, name, "the entries so far unpack to %d bytes; a package may unpack to at most %d"
                      % (total, MAX_TOTAL_BYTES))
        # Many small entries can each stay under the per-entry ratio: the whole archive is held to it
        # once it unpacks to more than 64 MiB.
        if total > (64 << 20) and total > MAX_RATIO * max(compressed, 1):
            _fail(origin, "", "its entries unpack %d bytes into %d, a ratio above %d (a zip bomb)"
                  % (compressed, total, int(MAX_RATIO)))
        entries = {}
        order = []
        for info in infos:
            try:
                with zf.open(info) as f:
                    data = f.read(info.file_size + 1)
            except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, zlib.error) as e:
                _fail(origin, info.filename, "it cannot be unpacked: %s" % e)
            if len(data) != info.file_size:
                _fail(origin, info.filename, "it unpacks to %s bytes, not the %d its record declares"
                      % ("more" if len(data) > info.file_size else str(len(data)), info.file_size))
            entries[info.filename] = data
            order.append(info.filename)
        return entries, order
