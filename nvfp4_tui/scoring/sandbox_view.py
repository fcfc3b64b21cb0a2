"""What model code sees under bubblewrap: a file system built from nothing, read-only, bounded.

The root is an empty tmpfs, remounted read-only once built. Into it go, read-only: the shared
libraries (``/usr/lib*``, ``/lib*``, recreated as symlinks where they are), the time zones,
``/etc/ld.so.cache`` and ``/etc/localtime``, and the interpreter's own directories (its prefix,
base prefix and the directory of its executable, both as named and as resolved, so a venv whose
``python`` links elsewhere still starts). Nothing else of the host is there: no other file of
``/etc``, no home, no checkout, no host ``/tmp`` or ``/dev/shm``. The writable places are two
tmpfs of bounded size, ``/tmp`` (the working directory) and ``/dev/shm``; ``/dev`` holds only
bubblewrap's device nodes and is read-only; ``/proc`` belongs to the sandbox's pid namespace.

Who the code runs as depends on who we are (see ``sandbox``): as a normal user, bubblewrap
creates a user namespace with uid and gid 65534 mapped to that user. As root it creates none: a
user namespace made by root maps its user to host root, which reads every 0600 file of root's.
Root's bubblewrap keeps only CAP_SETUID and CAP_SETGID for the harness, which gives them up for
an unprivileged uid of its own before it reads the job.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

SCRATCH_DIR = "/tmp"  # the working directory inside; nothing of the host's /tmp is there
_SHARED_LIBRARIES = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/lib", "/lib64", "/lib32")
_TIME_ZONES = "/usr/share/zoneinfo"
_ETC_FILES = ("/etc/ld.so.cache", "/etc/localtime")
_NAMESPACES_UNPRIVILEGED = [
    *("--unshare-all", "--unshare-user", "--uid", "65534", "--gid", "65534", "--cap-drop", "ALL"),
]
# No user namespace as root (see the module docstring); every other namespace, and only the two
# capabilities the harness needs to drop to its own uid.
_NAMESPACES_AS_ROOT = [
    *("--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"),
    *("--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"),
]


def interpreter_dirs() -> list[Path]:
    """The directories the running interpreter needs, outermost first, none inside another."""
    named = [Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)]
    named += [Path(sys.base_exec_prefix), Path(sys.executable).parent]
    found = {p.absolute() for p in named} | {p.resolve() for p in named}
    kept: list[Path] = []
    for path in sorted(found, key=lambda p: (len(p.parts), str(p))):
        if path != Path("/") and not any(path.is_relative_to(k) for k in kept):
            kept.append(path)
    return kept


class _View:
    """bwrap arguments that bind host paths read-only, each missing parent made 0755 first.

    bwrap makes a missing parent 0700 and owned by root: the dropped uid could not walk it.
    """

    def __init__(self, args: list[str]) -> None:
        self.args = args
        self._bound: list[Path] = []
        self._made = {Path("/"), Path("/tmp"), Path("/dev"), Path("/proc")}

    def bind(self, path: Path) -> None:
        if any(path.is_relative_to(b) for b in self._bound):
            return
        for parent in reversed(path.parents):
            if parent not in self._made:
                self._made.add(parent)
                self.args += ["--perms", "0755", "--dir", str(parent)]
        self._bound.append(path)
        if path.is_symlink() and path.parent == Path("/"):  # /lib -> usr/lib on merged /usr
            self.args += ["--symlink", os.readlink(path), str(path)]
        else:
            self.args += ["--ro-bind", str(path), str(path)]


def bwrap_args(*, as_root: bool, tmp_bytes: int, shm_bytes: int) -> list[str]:
    """The bwrap command line up to the program to run; working directory ``SCRATCH_DIR``."""
    view = _View([shutil.which("bwrap") or "bwrap", "--die-with-parent", "--new-session"])
    view.args += _NAMESPACES_AS_ROOT if as_root else _NAMESPACES_UNPRIVILEGED
    view.args += ["--clearenv", "--proc", "/proc", "--dev", "/dev"]
    view.args += ["--perms", "1777", "--size", str(shm_bytes), "--tmpfs", "/dev/shm"]
    view.args += ["--remount-ro", "/dev", "--perms", "1777", "--size", str(tmp_bytes)]
    view.args += ["--tmpfs", SCRATCH_DIR]
    shown = [Path(p) for p in (*_SHARED_LIBRARIES, _TIME_ZONES, *_ETC_FILES)]
    for path in [p for p in shown if p.exists() or p.is_symlink()] + interpreter_dirs():
        view.bind(path)
    return [*view.args, "--remount-ro", "/", "--chdir", SCRATCH_DIR]
