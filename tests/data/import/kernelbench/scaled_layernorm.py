import torch
import torch.nn as nn


class Model(nn.Module):
    """Layer normalisation over the last two dimensions, scaled by a constant factor.

    The factor is a constructor argument, so it ends up inside the reference."""

    def __init__(self, normalized_shape, scale):
        super().__init__()
        self.norm = nn.LayerNorm(normalized_shape)
        self.scale = scale

    def forward(self, x):
        return self.norm(x) * self.scale


batch_size = 12
normalized_shape = (24, 40)


def get_inputs():
    return [torch.rand(batch_size, *normalized_shape) + 0.5]


def get_init_inputs():
    return [normalized_shape, 0.5]
