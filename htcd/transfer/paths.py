"""Path safety: what a transfer list may name, and opening files without being fooled by it.

The daemons that move files run as root, so every name from a job (its transfer lists, its
Out/Err/In, its remaps) is opened with directory file descriptors, one component at a time,
never following a symbolic link the user could have planted where a file is written, and --
when a real owner is given -- doing only what that owner could do with the kernel's own
permission checks (``owner_may`` on the ``fstat`` of each descriptor, so nothing can change
between the check and the use).
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass

MAX_SYMLINKS = 40  # the kernel's own limit on links followed in one lookup
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


class TransferError(Exception):
    """A transfer failed or was refused; the message becomes the job's hold reason, with
    HTCondor's hold code (13 input, 12 output) and subcode (an errno, or the plugin's code)."""

    def __init__(self, message: str, code: int = 13, subcode: int = 0) -> None:
        super().__init__(message)
        self.code = code
        self.subcode = subcode


@dataclass(frozen=True)
class Owner:
    """Whose permissions a root daemon borrows: uid, primary gid and every group of the user."""

    uid: int
    gid: int
    groups: frozenset[int]

    @classmethod
    def named(cls, name: str) -> Owner | None:
        """The owner a root daemon must act as (None when we are not root: the kernel checks)."""
        if os.geteuid() != 0:
            return None
        import pwd

        try:
            pw = pwd.getpwnam(name)
        except KeyError:
            return cls(65534, 65534, frozenset({65534}))  # an unknown owner gets nobody's rights
        return cls(pw.pw_uid, pw.pw_gid, frozenset(os.getgrouplist(name, pw.pw_gid)))


def owner_may(st: os.stat_result, owner: Owner | None, bits: int) -> bool:
    """Whether ``owner`` has the permission ``bits`` (4 read, 2 write, 1 search) on ``st``."""
    if owner is None or owner.uid == 0:
        return True
    if st.st_uid == owner.uid:
        shift = 6
    elif st.st_gid in owner.groups or st.st_gid == owner.gid:
        shift = 3
    else:
        shift = 0
    return (st.st_mode >> shift) & bits == bits


def safe_name(name: str) -> str:
    """A transferred file's name: one path component, no escape from the sandbox."""
    base = os.path.basename(name.rstrip("/"))
    if base in ("", ".", "..") or "/" in base or "\0" in base:
        raise TransferError(f"unsafe file name {name!r} in the transfer list")
    return base


def safe_relpath(name: str, what: str = "the transfer list") -> str:
    """A path relative to the sandbox that stays inside it: no absolute name, no ``..``."""
    if not name or "\0" in name or name.startswith("/"):
        raise TransferError(f"unsafe file name {name!r} in {what}: an absolute path or an empty name")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise TransferError(f"unsafe file name {name!r} in {what}: it would leave the sandbox")
    return "/".join(parts)


def is_url(name: str) -> bool:
    head, sep, _ = name.partition("://")
    return bool(sep) and head.replace("+", "").replace("-", "").replace(".", "").isalnum() and "/" not in head


def _refuse(path: str, why: str, err: int) -> OSError:
    return OSError(err, why, path)


def _dir_beneath(root: str, rel: str, parts: list[str], make: bool) -> int:
    """A descriptor of the directory ``parts`` under ``root``, reached without following a
    link; missing directories are made when ``make``."""
    dfd = os.open(root, _DIR)
    try:
        for comp in parts:
            try:
                nfd = os.open(comp, _DIR | os.O_NOFOLLOW, dir_fd=dfd)
            except FileNotFoundError:
                if not make:
                    raise
                os.mkdir(comp, 0o755, dir_fd=dfd)
                nfd = os.open(comp, _DIR | os.O_NOFOLLOW, dir_fd=dfd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _refuse(os.path.join(root, rel), f"{comp} is a symbolic link or not a directory",
                                  exc.errno) from None
                raise
            os.close(dfd)
            dfd = nfd
    except BaseException:
        os.close(dfd)
        raise
    return dfd


def open_beneath(root: str, rel: str, flags: int, mode: int = 0o644, make_parents: bool = False) -> int:
    """Open ``rel`` under the directory ``root`` without following any symbolic link on the
    way (the sandbox is the job's: it may have made any of them a link).  ``make_parents``
    creates missing directories (for input written into a fresh sandbox)."""
    parts = safe_relpath(rel).split("/")
    dfd = _dir_beneath(root, rel, parts[:-1], make_parents)
    try:
        return os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=dfd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refuse(os.path.join(root, rel), "it is a symbolic link", errno.ELOOP) from None
        raise
    finally:
        os.close(dfd)


def mkdir_beneath(root: str, rel: str) -> None:
    """Make the directory ``rel`` (and its parents) under ``root``, following no link."""
    os.close(_dir_beneath(root, rel, safe_relpath(rel).split("/"), True))


def _walk_to_parent(path: str, owner: Owner | None) -> tuple[int, str]:
    """Resolve every directory of the absolute ``path`` as ``owner`` would: each lookup needs
    search permission on the directory it looks in, and a symbolic link on the way is read and
    resolved the same way (so a link to a place the owner cannot reach gets nowhere).  Returns
    a descriptor of the parent directory and the last component (never resolved here)."""
    if not os.path.isabs(path):
        raise _refuse(path, "not an absolute path", errno.EINVAL)
    todo = [c for c in path.split("/") if c]
    if not todo or todo[-1] in (".", ".."):
        raise _refuse(path, "names no file", errno.EINVAL)
    leaf = todo.pop()
    todo.reverse()
    chain = [os.open("/", _DIR)]
    links = 0
    try:
        while todo:
            comp = todo.pop()
            if comp == ".":
                continue
            if comp == "..":
                if len(chain) > 1:
                    os.close(chain.pop())
                continue
            cur = chain[-1]
            if not owner_may(os.fstat(cur), owner, 1):
                raise _refuse(path, "permission denied on the way there", errno.EACCES)
            st = os.stat(comp, dir_fd=cur, follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                links += 1
                if links > MAX_SYMLINKS:
                    raise _refuse(path, "too many levels of symbolic links", errno.ELOOP)
                target = os.readlink(comp, dir_fd=cur)
                if target.startswith("/"):
                    while len(chain) > 1:
                        os.close(chain.pop())
                todo.extend(reversed([c for c in target.split("/") if c]))
                continue
            if not stat.S_ISDIR(st.st_mode):
                raise _refuse(path, f"{comp} is not a directory", errno.ENOTDIR)
            chain.append(os.open(comp, _DIR | os.O_NOFOLLOW, dir_fd=cur))
        if not owner_may(os.fstat(chain[-1]), owner, 1):
            raise _refuse(path, "permission denied on the way there", errno.EACCES)
        parent = chain.pop()
        return parent, leaf
    finally:
        for fd in chain:
            os.close(fd)


def open_as_owner(path: str, owner: Owner | None, write: bool, mode: int = 0o644) -> int:
    """Open the absolute ``path`` for reading, or for writing (created or truncated), doing
    only what ``owner`` could do.  A written file that is a symbolic link is refused (a link
    planted where output lands could point anywhere); a read one is followed as the owner would
    follow it.  A new file is given to the owner."""
    for _ in range(MAX_SYMLINKS):
        parent, leaf = _walk_to_parent(path, owner)
        try:
            st: os.stat_result | None
            try:
                st = os.stat(leaf, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                st = None
            if st is not None and stat.S_ISLNK(st.st_mode):
                if write:
                    raise _refuse(path, "it is a symbolic link", errno.ELOOP)
                target = os.readlink(leaf, dir_fd=parent)
                path = target if target.startswith("/") else os.path.join(os.path.dirname(path), target)
                continue
            if st is None:
                if not write:
                    raise _refuse(path, "No such file or directory", errno.ENOENT)
                if not owner_may(os.fstat(parent), owner, 3):
                    raise _refuse(path, "permission denied: its directory is not writable by the owner",
                                  errno.EACCES)
                fd = os.open(leaf, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode,
                             dir_fd=parent)
                if owner is not None:
                    os.fchown(fd, owner.uid, owner.gid)
                return fd
            flags = (os.O_WRONLY if write else os.O_RDONLY) | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
            fd = os.open(leaf, flags, dir_fd=parent)
            try:
                fst = os.fstat(fd)
                if not stat.S_ISREG(fst.st_mode) and not (stat.S_ISCHR(fst.st_mode) and not write):
                    raise _refuse(path, "not a regular file", errno.EINVAL)
                if not owner_may(fst, owner, 2 if write else 4):
                    raise _refuse(path, "permission denied for the job's owner", errno.EACCES)
                os.set_blocking(fd, True)
                if write:
                    os.ftruncate(fd, 0)
            except BaseException:
                os.close(fd)
                raise
            return fd
        finally:
            os.close(parent)
    raise _refuse(path, "too many levels of symbolic links", errno.ELOOP)


def _may_create_in(parent: int, path: str, owner: Owner | None) -> None:
    """Refuse creating ``path`` in the directory ``parent`` unless ``owner`` may write there."""
    if not owner_may(os.fstat(parent), owner, 3):
        raise _refuse(path, "permission denied: its directory is not writable by the owner", errno.EACCES)


def mkdir_as_owner(path: str, owner: Owner | None, mode: int = 0o755) -> None:
    """Make the directory ``path`` (not its parents) as ``owner`` could; an existing
    directory is fine, a symbolic link is refused."""
    parent, leaf = _walk_to_parent(path, owner)
    try:
        try:
            st = os.stat(leaf, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            _may_create_in(parent, path, owner)
            os.mkdir(leaf, mode, dir_fd=parent)
            if owner is not None:
                os.chown(leaf, owner.uid, owner.gid, dir_fd=parent, follow_symlinks=False)
            return
        if not stat.S_ISDIR(st.st_mode):
            raise _refuse(path, "it exists and is not a directory (or is a symbolic link)", errno.ENOTDIR)
    finally:
        os.close(parent)


def _writable_leaf(parent: int, leaf: str, path: str, owner: Owner | None) -> None:
    """Refuse what writing ``leaf`` (in the directory ``parent``) as ``owner`` must not touch:
    a symbolic link, anything but a regular file, a file or directory the owner may not write."""
    try:
        st = os.stat(leaf, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        _may_create_in(parent, path, owner)
        return
    if stat.S_ISLNK(st.st_mode):
        raise _refuse(path, "it is a symbolic link", errno.ELOOP)
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(path, "not a regular file", errno.EISDIR if stat.S_ISDIR(st.st_mode) else errno.EINVAL)
    if not owner_may(st, owner, 2) or not owner_may(os.fstat(parent), owner, 3):
        raise _refuse(path, "permission denied for the job's owner", errno.EACCES)


def check_writable_as_owner(path: str, owner: Owner | None) -> None:
    """Whether ``open_as_owner(path, owner, write=True)`` or ``rename_as_owner(..., path)`` may
    write ``path``, asked before anything is sent: OSError naming the reason if not."""
    parent, leaf = _walk_to_parent(path, owner)
    try:
        _writable_leaf(parent, leaf, path, owner)
    finally:
        os.close(parent)


def rename_as_owner(tmp: str, path: str, owner: Owner | None) -> None:
    """Put the finished file ``tmp`` (beside ``path``, in the same directory) in place of ``path``,
    as ``owner`` could: an existing ``path`` must be a regular file the owner may write (a
    symbolic link planted there is refused, never followed, as ``open_as_owner`` refuses it)."""
    if os.path.dirname(tmp) != os.path.dirname(path):
        raise _refuse(path, "a temporary file must be in the same directory", errno.EXDEV)
    parent, leaf = _walk_to_parent(path, owner)
    try:
        _writable_leaf(parent, leaf, path, owner)
        os.rename(os.path.basename(tmp), leaf, src_dir_fd=parent, dst_dir_fd=parent)
    finally:
        os.close(parent)


def unlink_as_owner(path: str, owner: Owner | None) -> None:
    """Remove the file ``path`` (never following a link), as ``owner`` could; gone already is fine."""
    try:
        parent, leaf = _walk_to_parent(path, owner)
    except OSError:
        return
    try:
        if owner_may(os.fstat(parent), owner, 3):
            os.unlink(leaf, dir_fd=parent)
    except FileNotFoundError:
        pass
    finally:
        os.close(parent)
