"""A problem that goes for the user's report signing key: it reads every place the key may be,
writes what it found to a file the test can see, and raises with it in the message, which
reaches the user as the refusal. tst_import fills in @LEAK_FILE@ and @KEY_FILE@ (the key's
absolute path, or "" when the row runs without the sandbox, which cannot hide it)."""
import os

import torch
import torch.nn as nn

LEAK_FILE = "@LEAK_FILE@"
KEY_FILE = "@KEY_FILE@"


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("latin-1")
    except OSError as e:
        return "unreadable (%s)" % e.strerror


places = {
    "xdg": os.path.join(os.environ.get("XDG_CONFIG_HOME", "/nonexistent"), "KernelForge", "report-key"),
    "home": os.path.join(os.path.expanduser("~"), ".config", "KernelForge", "report-key"),
    "env": os.environ.get("KF_REPORT_KEY", "/nonexistent"),
}
if KEY_FILE:
    places["absolute"] = KEY_FILE
found = {name: _read(path) for name, path in places.items()}
try:
    with open(LEAK_FILE, "w") as f:
        f.write(repr(found))
except OSError:
    pass
raise RuntimeError("probe: %r" % found)


class Model(nn.Module):
    def forward(self, x):
        return x


def get_inputs():
    return [torch.randn(4)]
