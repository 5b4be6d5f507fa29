"""The compile cache: artifacts (the compiler's output, docs/artifacts.md)
stored under a key of everything that changes the generated code.

Local: $DISC_CACHE_DIR (default $XDG_CACHE_HOME/disc, else ~/.cache/disc),
one file per entry, written to a temporary file and renamed into place.
An entry that does not parse (truncated, corrupted, half-written by a
process that died) is logged under DISC_LOG=cache, removed and compiled
again: it is never loaded. DISC_CACHE=0 turns the cache off.

Remote: DISC_REMOTE_CACHE=redis://host:port[/db] shares entries across
machines (the `redis` package). A remote that is down, slow or failing is a
logged warning and a local compile, never an error.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
import threading
import warnings

from . import _log, _runtime

FORMAT = "1"  # bump when the key's meaning changes
# Environment variables the compiler reads that change the code it emits.
CODE_ENV = ("DISC_RUNTIME_CHECKS", "DISC_PROFILE", "DISC_LIBRARY_EPILOGUES",
            "DISC_LLVM_UNROLL", "DISC_LLVM_INTERLEAVE", "DISC_LLVM_PARTS",
            "DISC_CUDA_ROW_VARIANT", "DISC_CUDA_VECTORIZE", "DISC_CUDA_DEPTHWISE",
            "DISC_CUDA_LINEAR_LANES",
            "DISC_CUDA_INDEX32_LIMIT", "DISC_CUDA_ROW_VECTORS",
            "DISC_CUDA_ROW_CACHE_BYTES",
            "DISC_CUDA_ROW_UNROLL", "DISC_CUDA_REDUCTION_SLOTS",
            "DISC_CUDA_COLUMN_THREADS", "DISC_CUDA_FORWARD_SCALARS",
            "DISC_CUDA_SHARE_PTX", "DISC_CUDA_DEDUP_KERNELS", "DISC_CUDA_CHIPS")
CUDA_ENV = ("DISC_CUDA_TOOLKIT", "CUDA_HOME", "CUDA_PATH")
REMOTE_TIMEOUT_S = 2.0

_lock = threading.Lock()
_counts = {"cache_hits": 0, "cache_misses": 0, "cache_errors": 0,
           "remote_cache_hits": 0, "remote_cache_errors": 0}
_compiler_id = None
_remote = None  # (url, client or None)


def stats() -> dict:
    with _lock:
        return dict(_counts)


def _count(name: str) -> None:
    with _lock:
        _counts[name] += 1


def enabled() -> bool:
    return os.environ.get("DISC_CACHE", "1") != "0"


def directory() -> str:
    path = os.environ.get("DISC_CACHE_DIR")
    if path:
        return path
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "disc")


def _file_id(module: str) -> str:
    """Path, size and modification time of a module's file: changes with
    every build of it (found without importing it)."""
    spec = importlib.util.find_spec(module)
    path = spec.origin if spec else None
    if not path or not os.path.exists(path):
        return f"{module}:?"
    st = os.stat(path)
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"


def compiler_id() -> str:
    """The compiler and runtime builds (the compiler is not loaded)."""
    global _compiler_id
    if _compiler_id is None:
        runtime_dir = os.path.dirname(_runtime.__file__)
        lib = os.path.join(runtime_dir, "libdisc_runtime.so")
        st = os.stat(lib) if os.path.exists(lib) else None
        lib_id = f"{lib}:{st.st_size}:{st.st_mtime_ns}" if st else "runtime:?"
        _compiler_id = "|".join([_file_id("disc._C"), lib_id])
    return _compiler_id


def key(text: str, target: str, source_name: str, cuda_chips: tuple = ()) -> str:
    """Everything that changes the code: the module text, the target (and
    the chips of a cuda compile), the compiler build, this CPU's features
    (code is compiled for them), the environment variables the compiler
    reads, and the source name (run-time error messages and profile entries
    carry file:line:column)."""
    h = hashlib.sha256()
    parts = [FORMAT, compiler_id(), target, _runtime.host_cpu_features(), source_name]
    parts += [f"{name}={os.environ.get(name, '')}" for name in CODE_ENV]
    if target == "cuda":
        parts += [f"{name}={os.environ.get(name, '')}" for name in CUDA_ENV]
        parts.append("chips=" + ",".join(cuda_chips))
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    h.update(text.encode())
    return h.hexdigest()


def _path(k: str) -> str:
    return os.path.join(directory(), k[:2], k + ".disc")


def _load(load, data: bytes, origin: str):
    """load(data, origin), or None (logged) when `data` is not a valid
    artifact or does not load."""
    try:
        return load(data, origin)
    except _runtime.DiscError as e:
        _count("cache_errors")
        _log.log("cache", f"{origin} is unusable, compiling again: {e}")
        return None


def lookup(k: str, load):
    """load(data, origin) of the entry for key `k`, from the local cache,
    else the remote one; None on a miss. An entry `load` rejects (a
    disc.DiscError) is logged, counted, removed and treated as a miss."""
    path = _path(k)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        data = None
    except OSError as e:
        _log.log("cache", f"cannot read {path}: {e}")
        data = None
    if data is not None:
        loaded = _load(load, data, f"compile cache entry {path}")
        if loaded is not None:
            _count("cache_hits")
            _log.log("cache", f"hit {path}")
            return loaded
        try:
            os.unlink(path)
        except OSError:
            pass
    data = _remote_get(k)
    if data is not None:
        loaded = _load(load, data, f"remote compile cache entry {k}")
        if loaded is not None:
            _count("cache_hits")
            _count("remote_cache_hits")
            _log.log("cache", f"remote hit {k}")
            _store_local(k, data)
            return loaded
    _count("cache_misses")
    _log.log("cache", f"miss {k}")
    return None


def store(k: str, data: bytes) -> None:
    _store_local(k, data)
    _remote_set(k, data)


def _store_local(k: str, data: bytes) -> None:
    path = _path(k)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)  # atomic: readers see all of it or nothing
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError as e:
        _log.log("cache", f"cannot write {path}: {e}")


# ------------------------------------------------------------------ remote

def _remote_warn(message: str) -> None:
    _count("remote_cache_errors")
    _log.log("cache", message)
    warnings.warn(f"disc: {message}", RuntimeWarning, stacklevel=3)


def _remote_client():
    """The Redis client for DISC_REMOTE_CACHE, or None (no remote, or one
    that failed before: one warning, then local only)."""
    global _remote
    url = os.environ.get("DISC_REMOTE_CACHE", "")
    if not url:
        return None
    if _remote is not None and _remote[0] == url:
        return _remote[1]
    client = None
    if not url.startswith("redis://"):
        _remote_warn(f"DISC_REMOTE_CACHE={url!r} is not a redis:// URL; the remote "
                     "cache is off")
    else:
        try:
            import redis

            client = redis.Redis.from_url(url, socket_timeout=REMOTE_TIMEOUT_S,
                                          socket_connect_timeout=REMOTE_TIMEOUT_S)
        except Exception as e:  # ImportError, a malformed URL
            _remote_warn(f"remote cache {url} unavailable ({type(e).__name__}: {e}); "
                         "compiling locally")
    _remote = (url, client)
    return client


def _remote_failed(e: Exception) -> None:
    global _remote
    _remote_warn(f"remote cache {os.environ.get('DISC_REMOTE_CACHE')} failed "
                 f"({type(e).__name__}: {e}); compiling locally, remote cache off "
                 "for this process")
    _remote = (os.environ.get("DISC_REMOTE_CACHE", ""), None)


def _remote_get(k: str):
    client = _remote_client()
    if client is None:
        return None
    try:
        return client.get("disc:" + k)
    except Exception as e:  # ConnectionError, TimeoutError, ...
        _remote_failed(e)
        return None


def _remote_set(k: str, data: bytes) -> None:
    client = _remote_client()
    if client is None:
        return
    try:
        client.set("disc:" + k, data)
    except Exception as e:
        _remote_failed(e)
