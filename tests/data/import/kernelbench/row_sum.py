"""Sums a 3-D tensor over dimension 1, keeping the reduced dimension."""
import torch
import torch.nn as nn


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
