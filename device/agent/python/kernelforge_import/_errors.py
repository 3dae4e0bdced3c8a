"""The one way an import is refused: a Refusal names the file, the line when known, and the
construct that cannot be mapped. __main__ prints it as the single stderr line of exit status 2."""

import os
import traceback


class Refusal(Exception):
    """The problem cannot be mapped to a KernelForge task; str() is the line the user reads."""

    def __init__(self, file, message, line=None):
        super().__init__(message)
        self.file = os.path.basename(str(file))
        self.line = line
        self.message = message

    def __str__(self):
        where = self.file if self.line is None else "%s:%d" % (self.file, self.line)
        return "%s: %s" % (where, " ".join(str(self.message).split()))


def last_line(exc):
    """The exception's last line as Python prints it: "ValueError: bad shape"."""
    text = traceback.format_exception_only(type(exc), exc)[-1].strip()
    return " ".join(text.split())


def line_in(exc, path):
    """The line of the innermost frame of ``exc``'s traceback that is in ``path``, else None."""
    path = os.path.realpath(str(path))
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.realpath(frame.filename) == path:
            line = frame.lineno
    return line


def refuse_exception(path, what, exc):
    """A Refusal for an exception raised by the problem's own code: "<what> raised <last line>"."""
    return Refusal(path, "%s raised %s" % (what, last_line(exc)), line_in(exc, path))
