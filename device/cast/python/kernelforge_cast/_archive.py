"""Reading a zip from elsewhere safely (a package, or a model inside one), and strict JSON.

Before anything is decompressed the central directory is checked (names, duplicates, links,
sizes, compression ratio); each entry is unpacked to exactly its declared size. Each refusal
names the entry and the problem. The limits are those of KernelForge's own reader
(docs/cast-format.md); _package.py adds the manifest and the hash of every file.
"""

import json
import os
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
# The package file itself: its entries unpack to at most MAX_TOTAL_BYTES, and stored or deflated
# they take about as much; the zip's own records add little.
MAX_PACKAGE_BYTES = MAX_TOTAL_BYTES + (64 << 20)


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


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _not_regular(origin, mode):
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return PackageError("%s: it is not a regular file but %s; a package is a regular .cast file" % (origin, kind))


def open_regular_file(path, limit, origin=None):
    """A binary file object of ``path`` if it is a regular file of at most ``limit`` bytes; else
    PackageError (a ValueError) naming it. The type is checked before opening (opening a device
    can have effects of its own), the open does not block (a FIFO would wait for a writer
    forever) and the type and size are checked again on the opened descriptor, so a FIFO or a
    device (/dev/zero never ends) swapped in meanwhile is refused before a byte is read."""
    origin = str(path) if origin is None else origin
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise PackageError("%s: the file does not exist" % origin) from None
    except OSError as e:
        raise PackageError("%s: it cannot be opened: %s" % (origin, e.strerror)) from None
    if not stat.S_ISREG(st.st_mode):
        raise _not_regular(origin, st.st_mode)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as e:
        raise PackageError("%s: it cannot be opened: %s" % (origin, e.strerror)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(origin, st.st_mode)
        if st.st_size > limit:
            raise PackageError("%s: it is %d bytes; a package may have at most %d" % (origin, st.st_size, limit))
        os.set_blocking(fd, True)
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    return f


def read_archive(path, origin=None):
    """{name: bytes} of every entry, in archive order, after the directory checks. ``path`` is a
    file name (a regular file, open_regular_file) or a binary file object (a model inside a
    package); ``origin`` names it in errors. Reads never exceed the declared, checked sizes."""
    origin = str(path) if origin is None else origin
    if not isinstance(path, (str, bytes, os.PathLike)):
        return _read_zip(path, origin)
    with open_regular_file(path, MAX_PACKAGE_BYTES, origin) as f:
        return _read_zip(f, origin)


def _read_zip(source, origin):
    try:
        zf = zipfile.ZipFile(source)
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
