"""Adds a bias vector to every row of x, then applies GELU (tanh approximation).

KernelForge import fixture: an elementwise problem whose shape comes from two constants."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        return torch.nn.functional.gelu(x + bias, approximate="tanh")


batch_size = 96
dim = 1000


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(dim)]


def get_init_inputs():
    return []
