"""NumPy .npy files (format 1.0) written from torch tensors without NumPy, in the layout the
engine's reader accepts (docs/tensor-files.md, engine/verify/Npy.cpp): a header dict padded so the
data starts on a 64-byte boundary, then the elements, little-endian, C order."""

import ctypes
import sys

_MAGIC = b"\x93NUMPY"
_ALIGN = 64


def _descrs(torch):
    return {torch.float64: "<f8", torch.float32: "<f4", torch.float16: "<f2", torch.int64: "<i8",
            torch.int32: "<i4", torch.int16: "<i2", torch.int8: "|i1", torch.uint8: "|u1", torch.bool: "|b1"}


def header(descr, shape):
    """The bytes before the data of a .npy file holding ``shape`` elements of ``descr``."""
    dims = ", ".join(str(int(d)) for d in shape) + ("," if len(shape) == 1 else "")
    text = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, dims)
    unpadded = len(_MAGIC) + 2 + 2 + len(text) + 1
    text += " " * ((_ALIGN - unpadded % _ALIGN) % _ALIGN) + "\n"
    return _MAGIC + b"\x01\x00" + len(text).to_bytes(2, "little") + text.encode("latin1")


def write(path, tensor):
    """Writes ``tensor`` to ``path``. bf16 has no NumPy descr: it is written upcast to '<f4' and
    the function returns True so the caller can say so; otherwise False."""
    import torch
    if sys.byteorder != "little":
        raise RuntimeError("writing .npy files needs a little-endian machine")
    t = tensor.detach().to("cpu")
    upcast = t.dtype == torch.bfloat16
    if upcast:
        t = t.to(torch.float32)
    descr = _descrs(torch).get(t.dtype)
    if descr is None:
        raise ValueError("no .npy descr for %s" % t.dtype)
    t = t.contiguous()
    data = ctypes.string_at(t.data_ptr(), t.nbytes) if t.numel() else b""
    with open(path, "wb") as f:
        f.write(header(descr, tuple(t.shape)))
        f.write(data)
    return upcast
