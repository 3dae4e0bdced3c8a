class BiasGelu(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  def forward(self: __torch__.BiasGelu,
    x: Tensor,
    b: Tensor) -> Tensor:
    return torch.gelu(torch.add(x, b))
