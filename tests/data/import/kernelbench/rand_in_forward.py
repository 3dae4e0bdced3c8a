"""Adds fresh noise on every call: refused, the reference would be random."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        noise = torch.randn(x.shape)
        return x + 0.01 * noise


batch_size = 8
dim = 64


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
