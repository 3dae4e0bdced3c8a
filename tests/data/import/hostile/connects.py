"""A problem that phones home: it connects to 127.0.0.1:@PORT@, where tst_import listens, and
says in its exception whether it got through. In the sandbox it has no network."""
import socket

import torch
import torch.nn as nn

try:
    with socket.create_connection(("127.0.0.1", @PORT@), timeout=10) as s:
        s.sendall(b"the key")
    outcome = "connected"
except OSError as e:
    outcome = "no connection (%s)" % e
raise RuntimeError("probe: " + outcome)


class Model(nn.Module):
    def forward(self, x):
        return x


def get_inputs():
    return [torch.randn(4)]
