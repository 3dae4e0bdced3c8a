# Regenerates torchbridge_ref.pt (tst_torchbridge's TorchScript reference):
#   .venv/bin/python tests/data/torchbridge_ref.py
import pathlib

import torch


class Ref(torch.nn.Module):
    """Two outputs as a tuple: y = x * w + 1 and s = x summed over the last dim."""

    def forward(self, x: torch.Tensor, w: torch.Tensor):
        return x * w + 1.0, x.sum(-1)


torch.jit.script(Ref()).save(str(pathlib.Path(__file__).with_name("torchbridge_ref.pt")))
