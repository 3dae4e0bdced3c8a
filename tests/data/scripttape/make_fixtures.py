# Regenerates the TorchScript references tst_scripttape reads (engine/cast/ScriptTape.h):
#   .venv/bin/python tests/data/scripttape/make_fixtures.py
# Each module is tiny and holds no weights except self_weight.pt's 2x4 parameter. The comment
# above each one says what TorchScript prints for it in code/__torch__.py (torch 2.11).
import pathlib

import torch
import torch.nn.functional as F

HERE = pathlib.Path(__file__).resolve().parent
x8 = torch.randn(2, 8)
v8 = torch.randn(8)


def save(module, name):
    module.save(str(HERE / f"{name}.pt"))


# --- read as op tapes -------------------------------------------------------------------------

class BiasGelu(torch.nn.Module):
    # traced: return torch.gelu(torch.add(x, b))
    def forward(self, x, b):
        return F.gelu(x + b)


class AddRmsNorm(torch.nn.Module):
    # traced: input = torch.add(x, r); _0 = torch.rms_norm(input, [8], w, 9.99...e-07); return (input, _0)
    def forward(self, x, r, w):
        h = x + r
        return h, F.rms_norm(h, [8], w, 1e-6)


class ScaleSoftmax(torch.nn.Module):
    # scripted: _0 = torch.softmax(torch.mul(x, 0.125), -1) (tracing would bake 0.125 into CONSTANTS.c0)
    def forward(self, x: torch.Tensor):
        return torch.softmax(x * 0.125, dim=-1)


class LayerNorm(torch.nn.Module):
    # traced: torch.layer_norm(x, [8], w, b, 9.99...e-07)
    def forward(self, x, w, b):
        return F.layer_norm(x, [8], w, b, eps=1e-6)


class SiluBf16(torch.nn.Module):
    # scripted: _0 = torch.to(torch.mul(x, torch.sigmoid(x)), 15)
    def forward(self, x: torch.Tensor):
        return (x * torch.sigmoid(x)).to(torch.bfloat16)


class SumKeepdim(torch.nn.Module):
    # scripted: return torch.sum(x, [-1], True)
    def forward(self, x: torch.Tensor):
        return x.sum(-1, keepdim=True)


class Cumsum(torch.nn.Module):
    # scripted: return torch.cumsum(x, -1) (a catalog op the generator refuses)
    def forward(self, x: torch.Tensor):
        return torch.cumsum(x, dim=-1)


class Matmul(torch.nn.Module):
    # scripted: return torch.matmul(a, b)
    def forward(self, a: torch.Tensor, b: torch.Tensor):
        return torch.matmul(a, b)


class Mangled(torch.nn.Module):
    # traced, then scripted in the same session: the scripted class is renamed, so it lives in
    # code/__torch__/___torch_mangle_<n>.py and data.pkl names it __torch__.___torch_mangle_<n>
    def forward(self, x: torch.Tensor):
        return torch.relu(x)


# --- refused ----------------------------------------------------------------------------------

class ScriptedFunctional(torch.nn.Module):
    # scripted: _0 = __torch__.torch.nn.functional.softmax (F.gelu, by contrast, scripts to torch.gelu)
    def forward(self, x: torch.Tensor):
        return F.softmax(x, dim=-1)


class SelfWeight(torch.nn.Module):
    # scripted: weight = self.weight
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(2, 4))

    def forward(self, x: torch.Tensor):
        return torch.matmul(x, self.weight.t())


class ControlIf(torch.nn.Module):
    # scripted: if torch.gt(torch.dim(x), 1):
    def forward(self, x: torch.Tensor):
        if x.dim() > 1:
            return torch.relu(x)
        return torch.neg(x)


def main():
    save(torch.jit.trace(BiasGelu(), (x8, v8)), "bias_gelu")
    save(torch.jit.trace(AddRmsNorm(), (x8, x8, v8)), "add_rms_norm")
    save(torch.jit.script(ScaleSoftmax()), "scale_softmax")
    save(torch.jit.trace(LayerNorm(), (x8, v8, v8)), "layer_norm")
    save(torch.jit.script(SiluBf16()), "silu_bf16")
    save(torch.jit.script(SumKeepdim()), "sum_keepdim")
    save(torch.jit.script(Cumsum()), "cumsum")
    save(torch.jit.script(Matmul()), "matmul")
    torch.jit.trace(Mangled(), (x8,))   # takes the plain name; the scripted class is renamed
    save(torch.jit.script(Mangled()), "mangled")
    save(torch.jit.script(ScriptedFunctional()), "scripted_functional")
    save(torch.jit.script(SelfWeight()), "self_weight")
    save(torch.jit.script(ControlIf()), "control_if")
    # torch.save, not torch.jit.save: a zip with data.pkl but no code/
    torch.save({"w": torch.zeros(2)}, str(HERE / "state_dict.pt"))


if __name__ == "__main__":
    main()
