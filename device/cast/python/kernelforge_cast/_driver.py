"""The CUDA driver API through ctypes: load a cubin or PTX image into the current context and
launch its kernels on PyTorch's current stream. No compiler and no CUDA Python package needed.
"""

import ctypes
import threading

CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
CUDA_ERROR_NO_BINARY_FOR_GPU = 209

_lock = threading.Lock()
_lib = None


class DriverError(RuntimeError):
    def __init__(self, call, code, text):
        super().__init__("%s failed: %s (CUDA error %d)" % (call, text, code))
        self.code = code


def lib():
    global _lib
    with _lock:
        if _lib is None:
            try:
                l = ctypes.CDLL("libcuda.so.1")
            except OSError as e:
                raise RuntimeError("cannot load libcuda.so.1 (the NVIDIA driver): %s" % e) from None
            vp = ctypes.c_void_p
            l.cuGetErrorString.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
            l.cuInit.argtypes = [ctypes.c_uint]
            l.cuCtxGetCurrent.argtypes = [ctypes.POINTER(vp)]
            l.cuCtxSetCurrent.argtypes = [vp]
            l.cuDeviceGet.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int]
            l.cuDevicePrimaryCtxRetain.argtypes = [ctypes.POINTER(vp), ctypes.c_int]
            l.cuModuleLoadData.argtypes = [ctypes.POINTER(vp), ctypes.c_char_p]
            l.cuModuleGetFunction.argtypes = [ctypes.POINTER(vp), vp, ctypes.c_char_p]
            l.cuFuncSetAttribute.argtypes = [vp, ctypes.c_int, ctypes.c_int]
            l.cuLaunchKernel.argtypes = [vp, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
                                         ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
                                         ctypes.c_uint, vp, ctypes.POINTER(vp), ctypes.POINTER(vp)]
            for f in ("cuGetErrorString", "cuInit", "cuCtxGetCurrent", "cuCtxSetCurrent", "cuDeviceGet",
                      "cuDevicePrimaryCtxRetain", "cuModuleLoadData", "cuModuleGetFunction",
                      "cuFuncSetAttribute", "cuLaunchKernel"):
                getattr(l, f).restype = ctypes.c_int
            _check(l, "cuInit", l.cuInit(0))
            _lib = l
        return _lib


def _check(l, call, rc):
    if rc != 0:
        s = ctypes.c_char_p()
        text = "unknown error"
        if l.cuGetErrorString(rc, ctypes.byref(s)) == 0 and s.value:
            text = s.value.decode()
        raise DriverError(call, rc, text)


def driver_version():
    """The driver's CUDA version as an integer (13000 for 13.0)."""
    l = lib()
    v = ctypes.c_int()
    l.cuDriverGetVersion.argtypes = [ctypes.POINTER(ctypes.c_int)]
    l.cuDriverGetVersion.restype = ctypes.c_int
    _check(l, "cuDriverGetVersion", l.cuDriverGetVersion(ctypes.byref(v)))
    return v.value


def make_current(device_index):
    """Makes the primary context of ``device_index`` (PyTorch's) current on this thread."""
    l = lib()
    dev = ctypes.c_int()
    _check(l, "cuDeviceGet", l.cuDeviceGet(ctypes.byref(dev), device_index))
    ctx = ctypes.c_void_p()
    _check(l, "cuDevicePrimaryCtxRetain", l.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev.value))
    cur = ctypes.c_void_p()
    _check(l, "cuCtxGetCurrent", l.cuCtxGetCurrent(ctypes.byref(cur)))
    if cur.value != ctx.value:
        _check(l, "cuCtxSetCurrent", l.cuCtxSetCurrent(ctx))
    return ctx.value


def current_context():
    cur = ctypes.c_void_p()
    _check(lib(), "cuCtxGetCurrent", lib().cuCtxGetCurrent(ctypes.byref(cur)))
    return cur.value


def set_context(ctx):
    _check(lib(), "cuCtxSetCurrent", lib().cuCtxSetCurrent(ctx))


def load_module(image, ptx):
    """A CUmodule from cubin or PTX bytes (PTX is JIT-compiled by the driver, NUL-terminated)."""
    l = lib()
    mod = ctypes.c_void_p()
    data = image + b"\0" if ptx and not image.endswith(b"\0") else image
    _check(l, "cuModuleLoadData", l.cuModuleLoadData(ctypes.byref(mod), data))
    return mod.value


def get_function(module, lowered):
    l = lib()
    fn = ctypes.c_void_p()
    _check(l, "cuModuleGetFunction(%s)" % lowered, l.cuModuleGetFunction(ctypes.byref(fn), module, lowered.encode()))
    return fn.value


def allow_shared(fn, nbytes):
    l = lib()
    _check(l, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)",
           l.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(nbytes)))


def launcher():
    """cuLaunchKernel itself (argument types set): the per-call path calls it directly."""
    return _lib.cuLaunchKernel


def raise_for(rc, call):
    _check(_lib, call, rc)


def launch(fn, grid, block, shared, stream, params):
    """``params``: a ctypes array of void* pointing at each argument's C value."""
    l = _lib
    rc = l.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, stream, params, None)
    if rc != 0:
        _check(l, "cuLaunchKernel", rc)
