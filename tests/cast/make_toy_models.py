"""Writes the toy models the model-package tests export into a .cast (CTest fixture cast_models).

    python make_toy_models.py OUTDIR

A transformer-style toy: embedding -> residual add -> RMSNorm -> linear -> GELU -> softmax,
exported with torch.export in fp16 (toy_fp16.pt2: the add and RMSNorm match the fixture package's
fused_add_rms_norm_fp16; toy_fp16.ts: the same model traced to TorchScript) and in fp32 (toy_fp32.pt2: nothing matches; every site is kept with its
reason), plus an input description for the fp16 one (toy_fp16_inputs.json). Seeded: the same
files every time for one torch version. No weights are downloaded.
"""

import json
import os
import sys

import torch

VOCAB, D, B = 96, 64, 8


class Toy(torch.nn.Module):
    def __init__(self, dtype):
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, D).to(dtype)
        self.norm = torch.nn.RMSNorm(D, eps=1e-6).to(dtype)
        self.lin = torch.nn.Linear(D, D).to(dtype)
        with torch.no_grad():
            self.norm.weight.copy_(torch.rand(D) + 0.5)

    def forward(self, ids, r):
        h = self.emb(ids) + r
        y = self.norm(h)
        z = torch.nn.functional.gelu(self.lin(y))
        return torch.softmax(z.float(), -1), h


def main(out):
    os.makedirs(out, exist_ok=True)
    for name, dtype in (("toy_fp16", torch.float16), ("toy_fp32", torch.float32)):
        torch.manual_seed(0)
        model = Toy(dtype).eval()
        ids = torch.randint(0, VOCAB, (B,))
        r = torch.randn(B, D).to(dtype)
        ep = torch.export.export(model, (ids, r))
        torch.export.save(ep, os.path.join(out, name + ".pt2"))
        if dtype == torch.float16:   # the same model as TorchScript, for the C++ runtime
            torch.jit.save(torch.jit.trace(model, (ids, r)), os.path.join(out, name + ".ts"))
    with open(os.path.join(out, "toy_fp16_inputs.json"), "w") as f:
        json.dump({"inputs": [{"name": "ids", "dtype": "int64", "shape": [B], "distribution": "randint", "high": VOCAB},
                              {"name": "r", "dtype": "fp16", "shape": [B, D]}]}, f, indent=2)
    print("wrote toy_fp16.pt2, toy_fp16.ts, toy_fp32.pt2, toy_fp16_inputs.json to", out)


if __name__ == "__main__":
    main(sys.argv[1])
