"""The default cache without Redis: files in one folder, shared by every process on the machine.

Django's FileBasedCache keeps each key in its own file, written to a temporary file and
renamed into place, so a reader always sees a whole value, in any process. What it does
not make safe across processes is reading and then writing: its `add` (is the key there?
then set) and `incr` (read, then set the sum) can interleave with other processes' writes,
so that two processes both "add" a key, or both turn N into N+1: a counter kept in the
cache would lose counts.

Here every change to the folder (set, add, incr, touch, delete, clear, culling) happens
while holding an exclusive `flock` on a lock file in it, so each is atomic with respect
to every other, in every process and thread; reads take no lock (a rename is atomic).
Values are written to a temporary file first, outside the lock, so the lock is held for
a rename or a read-modify-write of one small file.

Culling (OPTIONS: MAX_ENTRIES, CULL_FREQUENCY as in Django) differs in two ways:

- Django lists the whole folder on every set; here only on every CULL_CHECK_EVERY-th set
  of a process (default 100), so a full folder may briefly hold that many more files per
  process.
- When the folder is full, expired files go first, then the live files closest to their
  expiry; files stored with no timeout only if that is not enough.
"""

import contextlib
import fcntl
import itertools
import os
import pickle
import random
import tempfile
import threading
import time
import zlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

from django.core.cache.backends import filebased
from django.core.cache.backends.base import DEFAULT_TIMEOUT

LOCK_NAME = "cache.lock"  # not *.djcache: never listed, culled or cleared


class FileBasedCache(filebased.FileBasedCache):
    # Writes by this process (Django makes one cache object per thread).
    _writes = itertools.count()

    if TYPE_CHECKING:
        # Django's private parts this class builds on, which django-stubs leaves out.
        _dir: str

        def _createdir(self) -> None: ...
        def _key_to_file(self, key: Any, version: int | None = None) -> str: ...
        def _list_cache_files(self) -> list[str]: ...
        def _delete(self, fname: str) -> bool: ...

    def __init__(self, dir: str, params: dict[str, Any]) -> None:
        super().__init__(dir, params)
        options = params.get("OPTIONS", {})
        self._cull_check_every = max(1, int(options.get("CULL_CHECK_EVERY", 100)))
        self._holding = threading.local()

    # --- The lock -------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the folder's lock (re-entrant within a thread).

        A new file descriptor each time: flock belongs to an open file description, so one
        inherited across a fork, or shared by threads, would not keep them apart.
        """
        if getattr(self._holding, "depth", 0):
            self._holding.depth += 1
            try:
                yield
            finally:
                self._holding.depth -= 1
            return
        self._createdir()
        fd = os.open(os.path.join(self._dir, LOCK_NAME), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._holding.depth = 1
            try:
                yield
            finally:
                self._holding.depth = 0
        finally:
            os.close(fd)  # releases the lock

    # --- Files ----------------------------------------------------------------------------

    def _temporary(self, value: Any, expiry: float | None) -> str:
        """A new file holding `value` (Django's format: the expiry, then the value)."""
        self._createdir()
        fd, path = tempfile.mkstemp(dir=self._dir)
        try:
            with open(fd, "wb") as f:
                f.write(pickle.dumps(expiry, self.pickle_protocol))
                f.write(zlib.compress(pickle.dumps(value, self.pickle_protocol)))
        except BaseException:
            os.remove(path)
            raise
        return path

    def _put(self, fname: str, value: Any, expiry: float | None) -> None:
        """Write `fname` (call holding the lock)."""
        os.replace(self._temporary(value, expiry), fname)

    def _read(self, fname: str) -> tuple[float | None, Any] | None:
        """(expiry, value) of a live entry, or None (call holding the lock)."""
        try:
            with open(fname, "rb") as f:
                if self._is_expired(f):
                    return None
                f.seek(0)
                expiry = pickle.load(f)  # noqa: S301 - files this cache wrote
                return expiry, pickle.loads(zlib.decompress(f.read()))  # noqa: S301
        except FileNotFoundError:
            return None

    def _is_expired(self, f: BinaryIO) -> bool:
        """Whether the open entry `f` has expired; if so, delete it unless replaced since."""
        try:
            expiry = pickle.load(f)  # noqa: S301 - files this cache wrote
        except EOFError:
            expiry = 0  # an empty file is expired
        if expiry is None or expiry >= time.time():
            return False
        with self._locked():
            try:
                # Still the file read (open, so its inode cannot be reused), not a new value
                # renamed into place since.
                if os.stat(f.name).st_ino == os.fstat(f.fileno()).st_ino:
                    os.remove(f.name)
            except FileNotFoundError:
                pass
        f.close()
        return True

    # --- Changes, each atomic ---------------------------------------------------------------

    def set(
        self,
        key: Any,
        value: Any,
        timeout: float | None = DEFAULT_TIMEOUT,
        version: int | None = None,
    ) -> None:
        fname = self._key_to_file(key, version)
        self._cull()
        path = self._temporary(value, self.get_backend_timeout(timeout))
        try:
            with self._locked():
                os.replace(path, fname)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)
            raise

    def add(
        self,
        key: Any,
        value: Any,
        timeout: float | None = DEFAULT_TIMEOUT,
        version: int | None = None,
    ) -> bool:
        fname = self._key_to_file(key, version)
        self._cull()
        with self._locked():
            if self._read(fname) is not None:
                return False
            self._put(fname, value, self.get_backend_timeout(timeout))
            return True

    def incr(self, key: Any, delta: int = 1, version: int | None = None) -> Any:
        """Add `delta` to the stored number; its expiry is kept (as Redis and locmem do)."""
        fname = self._key_to_file(key, version)
        with self._locked():
            found = self._read(fname)
            if found is None:
                raise ValueError(f"Key '{key}' not found")
            expiry, value = found
            value += delta
            self._put(fname, value, expiry)
            return value

    def touch(
        self, key: Any, timeout: float | None = DEFAULT_TIMEOUT, version: int | None = None
    ) -> bool:
        fname = self._key_to_file(key, version)
        with self._locked():
            found = self._read(fname)
            if found is None:
                return False
            self._put(fname, found[1], self.get_backend_timeout(timeout))
            return True

    def delete(self, key: Any, version: int | None = None) -> bool:
        with self._locked():
            return super().delete(key, version)

    def clear(self) -> None:
        with self._locked():
            super().clear()

    # --- Culling ------------------------------------------------------------------------------

    def _cull(self) -> None:
        if next(self._writes) % self._cull_check_every:
            return
        fnames = self._list_cache_files()
        if len(fnames) < self._max_entries:
            return
        if self._cull_frequency == 0:
            return self.clear()
        keep = self._max_entries - self._max_entries // self._cull_frequency
        now = time.time()
        expiring: list[tuple[float, str]] = []
        permanent: list[str] = []
        expired: list[str] = []
        for fname in fnames:
            try:
                with open(fname, "rb") as f:
                    expiry = pickle.load(f)  # noqa: S301 - files this cache wrote
            except (OSError, EOFError, ValueError, pickle.UnpicklingError):
                expiry = 0  # gone, empty or unreadable: as good as expired
            if expiry is None:
                permanent.append(fname)
            elif expiry < now:
                expired.append(fname)
            else:
                expiring.append((expiry, fname))
        expiring.sort()
        excess = max(0, len(expiring) + len(permanent) - keep)
        doomed = expired + [fname for _, fname in expiring[:excess]]
        excess -= min(excess, len(expiring))
        doomed += random.sample(permanent, min(excess, len(permanent)))
        with self._locked():
            for fname in doomed:
                self._delete(fname)
