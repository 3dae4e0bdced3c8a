"""A problem that forks a daemon (a child in a session of its own) which sleeps for 300 s holding
the importer's stdout and stderr; otherwise row_sum.py. The import must end when the importer
does, and take the daemon with it."""
import os
import time

import torch
import torch.nn as nn

if os.fork() == 0:
    os.setsid()
    time.sleep(300)
    os._exit(0)


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.sum(x, dim=self.dim, keepdim=True)


batch_size = 24
rows = 300
cols = 20
reduce_dim = 1


def get_inputs():
    return [torch.randn(batch_size, rows, cols)]


def get_init_inputs():
    return [reduce_dim]
