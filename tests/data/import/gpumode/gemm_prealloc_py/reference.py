import torch
from task import input_t, output_t
from utils import make_match_reference


def ref_kernel(data: input_t) -> output_t:
    a, b, c = data
    c[...] = a @ b
    return c


def generate_input(m: int, n: int, k: int, seed: int) -> input_t:
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    a = torch.randn(m, k, device="cuda", generator=gen)
    b = torch.randn(k, n, device="cuda", generator=gen)
    c = torch.empty(m, n, device="cuda")
    return a, b, c


check_implementation = make_match_reference(ref_kernel, rtol=1e-4, atol=1e-4)
