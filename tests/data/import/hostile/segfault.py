"""A problem whose get_inputs() crashes the interpreter (a read at address 0 through ctypes, as a
broken extension would): the problem's fault, not the importer's."""
import ctypes

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x


def get_inputs():
    ctypes.string_at(0)
    return [torch.randn(4)]


def get_init_inputs():
    return []
