"""Linear, BatchNorm (eval), ReLU, Linear as one nn.Sequential, plus an integer offset buffer.

KernelForge import fixture: parameters named 0.weight, 1.running_mean, ... become task inputs
(p0_weight, p1_running_mean, ...); the hidden size sizes only parameters; BatchNorm's
num_batches_tracked is never read in eval mode, so it is no input."""
import torch
import torch.nn as nn


class Model(nn.Sequential):
    def __init__(self, in_features, hidden, out_features):
        super().__init__(nn.Linear(in_features, hidden), nn.BatchNorm1d(hidden), nn.ReLU(),
                         nn.Linear(hidden, out_features))
        self.register_buffer("offset", torch.arange(out_features) - 3)
        with torch.no_grad():
            self[1].running_mean.uniform_(-0.2, 0.2)
            self[1].running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        return super().forward(x) + self.offset


batch_size = 20
in_features = 32
hidden = 48
out_features = 12


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, hidden, out_features]
