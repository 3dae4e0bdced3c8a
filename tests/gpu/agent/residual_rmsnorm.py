"""Adds a residual to x, then RMS-normalises each row and scales it by a learned weight:
y = (x + r) * rsqrt(mean((x + r)^2, -1) + eps) * weight.

KernelForge's own KernelBench-style problem for the agent loop on the GPU (tests/gpu/agent_loop.py):
written the way such problems are, with the arithmetic spelled out op by op, so eager PyTorch runs
seven kernels where one fused kernel reads x and r once."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x, r):
        h = x + r
        scale = torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return h * scale * self.weight


batch_size = 8192
dim = 4096
eps = 1e-6


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim, eps]
