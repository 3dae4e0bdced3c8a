import torch
from task import input_t, output_t
from utils import make_match_reference


def ref_kernel(data: input_t) -> output_t:
    x, y = data
    return x + y


def generate_input(size: int, seed: int) -> input_t:
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    x = torch.randn(size, device="cuda", dtype=torch.float16, generator=gen)
    y = torch.randn(size, device="cuda", dtype=torch.float16, generator=gen)
    return x, y


check_implementation = make_match_reference(ref_kernel, rtol=1e-3, atol=1e-3)
