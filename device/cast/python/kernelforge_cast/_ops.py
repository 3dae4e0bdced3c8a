"""One cast:: operator: input checks, shape binding, launch plans, image choice, fallback."""

import ctypes
import threading
import warnings

import torch

from . import _driver
from ._expr import ExprError, evaluate, evaluate_int
from ._reference import DTYPES, Reference

_SCALAR_TYPES = {
    "int32": ctypes.c_int32, "int64": ctypes.c_int64, "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64,
    "fp32": ctypes.c_float, "fp64": ctypes.c_double,
}
_SCALAR_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1),
                  "uint32": (0, 2**32 - 1), "uint64": (0, 2**64 - 1)}
ALIGNMENT = 16          # bytes: what 16-byte vector loads need; the runner's buffers are aligned further
_MAX_GRID = (2**31 - 1, 65535, 65535)

try:
    _current_device = torch._C._cuda_getDevice
except AttributeError:  # pragma: no cover - older PyTorch
    _current_device = torch.cuda.current_device

try:
    _raw_stream = torch._C._cuda_getCurrentRawStream   # what torch.cuda.current_stream() wraps, without the object
except AttributeError:  # pragma: no cover - older PyTorch
    def _raw_stream(index):
        return torch.cuda.current_stream(index).cuda_stream


def _arch_number(arch):
    return int(arch.split("_", 1)[1])


def choose_image(images, major, minor):
    """(arch, reason) of the image to load on a GPU of compute capability major.minor, or
    (None, reason): the exact cubin, else a cubin of the same major and a lower minor, else PTX
    of an architecture at or below the GPU's (JIT-compiled by the driver)."""
    want = major * 10 + minor
    cubins = sorted((a for a in images if a.startswith("sm_")), key=_arch_number)
    exact = "sm_%d" % want
    if exact in images:
        return exact, "cubin %s" % exact
    same_major = [a for a in cubins if _arch_number(a) // 10 == major and _arch_number(a) <= want]
    if same_major:
        return same_major[-1], "cubin %s (runs on sm_%d)" % (same_major[-1], want)
    ptx = sorted((a for a in images if a.startswith("compute_") and _arch_number(a) <= want), key=_arch_number)
    if ptx:
        return ptx[-1], "PTX %s, compiled for sm_%d by the driver" % (ptx[-1], want)
    return None, "no image for sm_%d: the package has %s" % (want, ", ".join(sorted(images, key=_arch_number)))


class CastOp:
    def __init__(self, package, op, files, use_kernels, force_image=None):
        self.package = package
        self.manifest = op
        self.name = op["name"]
        self.qualified = "cast::" + self.name
        self.inputs = [(t["name"], DTYPES[t["dtype"]], t["dtype"], t["shape"]) for t in op["inputs"]]
        self.outputs = [(t["name"], DTYPES[t["dtype"]], t["shape"]) for t in op["outputs"]]
        self.parameters = dict(op["parameters"])
        self.symbols = {s["name"]: (s["min"], s["max"], s["multiple_of"]) for s in op["symbols"]}
        self.constraints = op["constraints"]
        self.launches = op["launches"]
        self.scratch = op["scratch"]
        self.tensor_names = [t[0] for t in self.inputs] + [t[0] for t in self.outputs] + [s["name"] for s in self.scratch]
        self.images = {arch: files[path] for arch, path in op["images"].items()}
        self.reference = Reference(op, files)
        self.use_kernels = use_kernels
        self.force_image = force_image
        self._lock = threading.Lock()
        self._devices = {}      # device index -> (functions or None, reason)
        self._plans = {}        # (device index, input shapes) -> plan
        self._warned = set()
        self._tls = threading.local()   # per thread: (device, shapes) -> bound launch state
        self._shared_allowed = {}       # (device, launch) -> dynamic shared memory allowed so far

    # --- messages ---------------------------------------------------------------------------
    def _warn_once(self, key, text):
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn("%s: %s" % (self.qualified, text), RuntimeWarning, stacklevel=4)

    def _bad(self, text):
        return ValueError("%s: %s" % (self.qualified, text))

    # --- shapes -------------------------------------------------------------------------------
    def bind(self, tensors, check_ranges=True):
        """Symbol values from the inputs' shapes (checked against the op's ranges and
        constraints); raises ValueError naming the argument."""
        if len(tensors) != len(self.inputs):
            raise self._bad("takes %d tensors, got %d" % (len(self.inputs), len(tensors)))
        env = dict(self.parameters)
        origin = {}
        for t, (name, dtype, dname, shape) in zip(tensors, self.inputs):
            if not isinstance(t, torch.Tensor):
                raise self._bad("argument '%s' must be a tensor, not %s" % (name, type(t).__name__))
            if t.dtype != dtype:
                raise self._bad("argument '%s' is %s; the kernel takes %s (%s)" % (name, t.dtype, dname, dtype))
            if t.dim() != len(shape):
                raise self._bad("argument '%s' has %d dimension(s); the kernel takes %d [%s]"
                                % (name, t.dim(), len(shape), ", ".join(str(s) for s in shape)))
            for d, (extent, want) in enumerate(zip(t.shape, shape)):
                if isinstance(want, int):
                    if check_ranges and extent != want:
                        raise self._bad("argument '%s' has extent %s at dim %d; the kernel takes %d" % (name, extent, d, want))
                elif want in env and want in origin:
                    if check_ranges and env[want] != extent:
                        raise self._bad("argument '%s' has %s=%s at dim %d, but '%s' gave %s=%s"
                                        % (name, want, extent, d, origin[want], want, env[want]))
                else:
                    env[want] = extent
                    origin[want] = name
        if check_ranges:
            env = {k: int(v) for k, v in env.items()} | {k: v for k, v in self.parameters.items()}
            for sym, (lo, hi, mult) in self.symbols.items():
                v = env[sym]
                if v < lo or v > hi:
                    raise self._bad("%s=%d (from argument '%s') is outside the range the kernel was verified for, [%d, %d]"
                                    % (sym, v, origin[sym], lo, hi))
                if v % mult:
                    raise self._bad("%s=%d (from argument '%s') is not a multiple of %d" % (sym, v, origin[sym], mult))
            for c in self.constraints:
                try:
                    ok = evaluate(c["tree"], env)
                except ExprError as e:
                    raise self._bad("constraint %s cannot be evaluated: %s" % (c["text"], e)) from None
                if not ok:
                    raise self._bad("the shapes (%s) break the constraint %s"
                                    % (" ".join("%s=%d" % (k, env[k]) for k in sorted(self.symbols)), c["text"]))
        return env

    def output_shapes(self, env):
        return [[s if isinstance(s, int) else env[s] for s in shape] for _, _, shape in self.outputs]

    # --- images -------------------------------------------------------------------------------
    def image_choice(self, device_index):
        major, minor = torch.cuda.get_device_capability(device_index)
        if self.force_image:
            if self.force_image not in self.images:
                return None, "the package has no %s image" % self.force_image
            return self.force_image, "%s %s (forced)" % ("PTX" if self.force_image.startswith("compute_") else "cubin",
                                                         self.force_image)
        return choose_image(self.images, major, minor)

    def _functions(self, device_index):
        got = self._devices.get(device_index)
        if got is not None:
            return got
        with self._lock:
            got = self._devices.get(device_index)
            if got is not None:
                return got
            arch, reason = self.image_choice(device_index)
            functions = None
            if arch is not None:
                previous = None
                try:
                    previous = _driver.current_context()
                    _driver.make_current(device_index)
                    module = _driver.load_module(self.images[arch], arch.startswith("compute_"))
                    functions = [_driver.get_function(module, l["lowered"]) for l in self.launches]
                except _driver.DriverError as e:
                    functions, reason = None, "loading %s failed: %s" % (arch, e)
                finally:
                    if previous is not None:
                        _driver.set_context(previous)   # image_used() leaves the caller's context as it was
            got = (functions, reason)
            self._devices[device_index] = got
            return got

    def image_used(self, device_index=None):
        """How calls on that CUDA device run: "cubin sm_90", "PTX compute_80, ...", or why not."""
        if not self.use_kernels:
            return "reference ops (loaded with kernels=False)"
        idx = torch.cuda.current_device() if device_index is None else device_index
        functions, reason = self._functions(idx)
        return reason if functions is not None else "reference ops: " + reason

    # --- plans --------------------------------------------------------------------------------
    def _plan(self, device_index, tensors):
        key = (device_index,) + tuple(tuple(t.shape) for t in tensors)
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        env = self.bind(tensors)
        outputs = self.output_shapes(env)
        scratch = []
        for s in self.scratch:
            try:
                count = evaluate_int(s["count"]["tree"], env, "scratch %s" % s["name"])
            except ExprError as e:
                raise self._bad("scratch buffer %s: %s" % (s["name"], e)) from None
            scratch.append((count, DTYPES[s["dtype"]], s["zero"]))
        launches = []
        for i, l in enumerate(self.launches):
            try:
                grid = [evaluate_int(e["tree"], env, "grid") for e in l["grid"]]
                block = [evaluate_int(e["tree"], env, "block") for e in l["block"]]
                shared = evaluate_int(l["shared_bytes"]["tree"], env, "shared_bytes")
            except ExprError as e:
                raise self._bad("launch %d (%s): %s" % (i, l["kernel"], e)) from None
            if any(g < 0 for g in grid) or any(b < 1 for b in block) or shared < 0:
                raise self._bad("launch %d (%s): grid %s, block %s, shared %d bytes are not a valid launch"
                                % (i, l["kernel"], grid, block, shared))
            if any(g > m for g, m in zip(grid, _MAX_GRID)) or block[0] * block[1] * block[2] > 1024:
                raise self._bad("launch %d (%s): grid %s or block %s exceeds CUDA's limits" % (i, l["kernel"], grid, block))
            args = []
            for a in l["args"]:
                if "tensor" in a:
                    args.append(self.tensor_names.index(a["tensor"]))
                else:
                    try:
                        v = evaluate(a["scalar"]["tree"], env)
                    except ExprError as e:
                        raise self._bad("launch %d (%s): scalar %s: %s" % (i, l["kernel"], a["scalar"]["text"], e)) from None
                    ctype = _SCALAR_TYPES[a["type"]]
                    if a["type"] in _SCALAR_RANGES:
                        if not isinstance(v, int):
                            raise self._bad("launch %d: scalar %s is %r, not an integer" % (i, a["scalar"]["text"], v))
                        lo, hi = _SCALAR_RANGES[a["type"]]
                        if v < lo or v > hi:
                            raise self._bad("launch %d: scalar %s = %d does not fit %s" % (i, a["scalar"]["text"], v, a["type"]))
                    args.append(ctype(v))
            launches.append((i, tuple(grid), tuple(block), shared, args, ctypes.c_void_p * len(args)))
        plan = (outputs, scratch, launches)
        if len(self._plans) > 256:
            self._plans.clear()
        self._plans[key] = plan
        return plan

    # --- implementations ----------------------------------------------------------------------
    def _bound(self, key, tensors):
        """This thread's launch state for one input shape on one device: argument slots whose
        values a call overwrites, and each launch's parameter array pointing at them. None when
        the device runs the reference instead."""
        index = key[0]
        functions, reason = self._functions(index)
        if functions is None:
            self._warn_once(("fallback", index), "running the reference ops instead of the kernel on cuda:%d (%s)"
                            % (index, reason))
            self._tls.__dict__[key] = None
            return None
        outputs, scratch, launches = self._plan(index, tensors)
        slots = [ctypes.c_void_p() for _ in range(len(self.tensor_names))]
        ready = []
        for i, grid, block, shared, args, array in launches:
            if 0 in grid:
                continue
            if shared > 48 * 1024:
                # Raised to the largest amount a shape has needed so far, again when one needs more.
                with self._lock:
                    if shared > self._shared_allowed.get((index, i), 0):
                        _driver.allow_shared(functions[i], shared)
                        self._shared_allowed[(index, i)] = shared
            params = array(*[ctypes.addressof(slots[a]) if isinstance(a, int) else ctypes.addressof(a) for a in args])
            ready.append((functions[i], grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, params, args))
        bound = ([(tuple(shape), dtype) for shape, (_, dtype, _) in zip(outputs, self.outputs)],
                 [(count, dtype, zero) for count, dtype, zero in scratch], slots, ready)
        cache = self._tls.__dict__
        if len(cache) > 256:   # many shapes on one thread: start over rather than grow without end
            cache.clear()
        cache[key] = bound
        return bound

    def cuda_impl(self, *tensors):
        if not self.use_kernels:
            self.bind(tensors)
            return self._result(self.reference(tensors))
        device = tensors[0].device
        for t, (name, dtype, dname, _) in zip(tensors, self.inputs):
            if t.dtype is not dtype:
                raise self._bad("argument '%s' is %s; the kernel takes %s (%s)" % (name, t.dtype, dname, dtype))
            if t.device != device:
                raise self._bad("argument '%s' is on %s but '%s' is on %s" % (name, t.device, self.inputs[0][0], device))
            if not t.is_contiguous():
                raise self._bad("argument '%s' is not contiguous; pass x.contiguous()" % name)
        index = device.index
        key = (index,) + tuple([t.shape for t in tensors])
        bound = self._tls.__dict__.get(key, False)
        if bound is False:
            bound = self._bound(key, tensors)
        if bound is None:
            self.bind(tensors)
            return self._result(self.reference(tensors))
        if _current_device() != index:
            # Another device is current on this thread: launch under this one's context.
            with torch.cuda.device(index):
                return self._launch(bound, tensors, device, index)
        return self._launch(bound, tensors, device, index)

    def _launch(self, bound, tensors, device, index):
        outputs, scratch, slots, launches = bound
        outs = [torch.empty(shape, dtype=dtype, device=device) for shape, dtype in outputs]
        k = 0
        for t in tensors:
            ptr = t.data_ptr()
            if ptr % ALIGNMENT:
                raise self._bad("argument '%s' starts at an address that is not %d-byte aligned (a view with an "
                                "offset); pass x.clone()" % (self.inputs[k][0], ALIGNMENT))
            slots[k].value = ptr
            k += 1
        for o in outs:
            slots[k].value = o.data_ptr()
            k += 1
        keep = []
        for count, dtype, zero in scratch:
            b = (torch.zeros if zero else torch.empty)(max(count, 1), dtype=dtype, device=device)
            keep.append(b)
            slots[k].value = b.data_ptr()
            k += 1
        stream = _raw_stream(index)
        launch = _driver.launcher()
        for fn, gx, gy, gz, bx, by, bz, shared, params, _ in launches:
            rc = launch(fn, gx, gy, gz, bx, by, bz, shared, stream, params, None)
            if rc:
                _driver.raise_for(rc, "cuLaunchKernel")
        return outs[0] if len(outs) == 1 else tuple(outs)

    def cpu_impl(self, *tensors):
        self.bind(tensors)
        if self.use_kernels:
            self._warn_once("cpu", "CPU tensors run the reference ops (the package's kernels are CUDA kernels)")
        return self._result(self.reference(tensors))

    def fake_impl(self, *tensors):
        env = self.bind(tensors, check_ranges=False)
        outs = [torch.empty(shape, dtype=dtype, device=tensors[0].device)
                for shape, (_, dtype, _) in zip(self.output_shapes(env), self.outputs)]
        return self._result(outs)

    def _result(self, outs):
        outs = tuple(outs)
        return outs[0] if len(self.outputs) == 1 else outs
