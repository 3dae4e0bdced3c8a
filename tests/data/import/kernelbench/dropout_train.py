"""Dropout that stays active in eval mode: refused, the reference would be random."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        y = x * 2.0
        return F.dropout(y, p=0.25, training=True)


n = 4096


def get_inputs():
    return [torch.randn(n)]
