"""Opening a .cast package: the archive checks (_archive), the manifest's (_manifest) and, for
schema 2, the models' (_model), in that order; nothing is loaded unless all pass."""

import hashlib

from ._archive import (FORMAT, MANIFEST, MAX_MANIFEST_BYTES, MODEL_SCHEMA_VERSION, SCHEMA_VERSION, PackageError,
                       _fail, read_archive, strict_json)
from ._manifest import ManifestError, check_manifest
from ._model import check_models


def open_package(path):
    """(manifest, files) of a package whose every check passed; files maps path -> bytes."""
    origin = str(path)
    entries, order = read_archive(path)
    if order[0] != MANIFEST:
        _fail(origin, order[0], "the first entry is not manifest.json")
    text = entries[MANIFEST]
    if len(text) > MAX_MANIFEST_BYTES:
        _fail(origin, MANIFEST, "manifest.json is %d bytes; the limit is %d" % (len(text), MAX_MANIFEST_BYTES))
    try:
        m = strict_json(text, "")
    except PackageError as e:
        _fail(origin, MANIFEST, str(e)[2:])

    def bad(pointer, why):
        raise PackageError("%s: manifest.json#%s: %s" % (origin, pointer, why))

    if not isinstance(m, dict):
        bad("", "the manifest is a JSON object")
    if m.get("format") != FORMAT:
        bad("/format", "is not \"%s\": this is not a KernelForge package" % FORMAT)
    version = m.get("schema_version")
    if version not in (SCHEMA_VERSION, MODEL_SCHEMA_VERSION) or isinstance(version, bool):
        bad("/schema_version", "is %r; this loader reads schemas %d and %d%s" % (
            version, SCHEMA_VERSION, MODEL_SCHEMA_VERSION, " (the package is newer: upgrade kernelforge-cast)"
            if isinstance(version, int) and version > MODEL_SCHEMA_VERSION else ""))
    files = m.get("files")
    if not isinstance(files, list):
        bad("/files", "must be a list")
    listed = set()
    for i, f in enumerate(files):
        p = "/files/%d" % i
        if not isinstance(f, dict) or set(f) != {"path", "sha256", "bytes"}:
            bad(p, "a file is {\"path\", \"sha256\", \"bytes\"}")
        path = f["path"]
        if not isinstance(path, str) or path == MANIFEST or path in listed:
            bad(p + "/path", "%r is listed twice or is not a path" % (path,))
        listed.add(path)
        if path not in entries:
            bad(p + "/path", "\"%s\" is listed but not in the archive" % path)
        data = entries[path]
        if not isinstance(f["bytes"], int) or isinstance(f["bytes"], bool):
            bad(p + "/bytes", "must be an integer")
        if not isinstance(f["sha256"], str) or len(f["sha256"]) != 64 or f["sha256"].strip("0123456789abcdef"):
            bad(p + "/sha256", "is not 64 lowercase hex digits")
        if f["bytes"] != len(data):
            bad(p + "/bytes", "\"%s\" has %d bytes, the manifest says %r" % (path, len(data), f["bytes"]))
        if hashlib.sha256(data).hexdigest() != f["sha256"]:
            bad(p + "/sha256", "\"%s\" does not match its SHA-256 (the file was changed after export)" % path)
    for name in order[1:]:
        if name not in listed:
            bad("/files", "the archive holds \"%s\", which the manifest does not list" % name)
    if version == SCHEMA_VERSION and "models" in m:
        bad("/models", "a schema 1 package has no models")
    models = m.pop("models", None)
    try:
        check_manifest(m, listed)
    except ManifestError as e:
        raise PackageError("%s: %s" % (origin, e)) from None
    if version == MODEL_SCHEMA_VERSION:
        m["models"] = models
        check_models(m, entries, bad)
    return m, entries
