"""What the importer is doing, told to kforge on stderr: "kernelforge_import: phase: problem:
calling get_inputs()" while the problem's own code runs, "phase: importer: ..." while ours does.
When this process ends without a word of ours (a segfault in an extension the problem loads, an
os._exit in its code), the last phase says whose code was running (engine/agent/Import.cpp)."""

import os

_current = None


def _say(owner, what):
    global _current
    if (owner, what) == _current:
        return
    _current = (owner, what)
    try:
        # The descriptor itself: sys.stderr is redirected while the problem's code runs.
        os.write(2, ("kernelforge_import: phase: %s: %s\n" % (owner, " ".join(str(what).split()))).encode())
    except OSError:
        pass


def problem(what):
    """The problem's code runs from here on: ``what`` as the user would name it."""
    _say("problem", what)


def importer(what):
    """Our own code runs from here on."""
    _say("importer", what)


def current():
    """The phase last announced, as "calling get_inputs()" (empty before the first)."""
    return _current[1] if _current else ""
