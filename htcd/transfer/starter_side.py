"""The execute point's side: input written into the sandbox (URLs fetched through the transfer
plugins), output collected from it -- never through a symbolic link the job made, since the
starter reads and writes as root.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import stat
from collections.abc import Callable
from typing import Any

from htcd.classad import ClassAd
from htcd.transfer import entries, streams
from htcd.transfer.paths import Owner, TransferError, mkdir_beneath, open_as_owner, open_beneath, safe_relpath

# HTCondor's hold codes for a job whose standard files cannot be opened, or whose Iwd is unusable.
UNABLE_TO_OPEN_OUTPUT, UNABLE_TO_OPEN_INPUT, IWD_ERROR = 7, 8, 14

_plugins: dict[str, Callable[..., None]] | None = None


def transfer_plugins() -> dict[str, Callable[..., None]]:
    """The URL schemes the ``htcd_transfer_plugins`` hook registers (loaded once per process)."""
    global _plugins
    if _plugins is None:
        from htcd.plugins import get_plugin_manager

        _plugins = get_plugin_manager().transfer_plugins()
    return _plugins


class JobFiles:
    """One job's files on the execute point: whether they are transferred, and with a shared
    file system (should_transfer_files NO, or IF_NEEDED in the job's FileSystemDomain) its Iwd
    as the working directory and its In/Out/Err opened there as its owner -- the universe plugin
    gets ``/proc/self/fd/N`` names of descriptors opened safely here, never the user's path."""

    def __init__(self, job_ad: ClassAd, files: dict[str, Any], config: Any, where: str, user: str) -> None:
        domain = (config.get("FILESYSTEM_DOMAIN") if config is not None else None) or socket.getfqdn()
        self.ad = job_ad
        self.shared_fs = not entries.wants_transfer(job_ad.get_value, domain)
        stf = str(job_ad.get_value("ShouldTransferFiles", "") or "").upper()
        if self.shared_fs and stf == "IF_NEEDED" and user != str(job_ad.get_value("Owner", "") or ""):
            # the job cannot run as its owner here (e.g. root's job runs as nobody): the owner's
            # files are not the job's to use in place, so transfer is needed after all
            self.shared_fs = False
        self.where = where
        # whose rights the Iwd's files are opened with: only a shared file system needs it (a look-up
        # of the account and its groups, spared to every other job)
        self.owner = Owner.named(user) if self.shared_fs else None
        self.urls: list[tuple[str, str]] = []
        self.fds: list[int] = []
        self.fetched = 0  # bytes the plugins brought (counted as bytes received by the job)

    def fetch(self, sandbox: str, uid: int | None, gid: int | None) -> int:
        try:
            got = self.fetched = fetch_urls(sandbox, self.urls, self.where, uid, gid)
            if uid is not None:
                for rel, _ in self.urls:
                    fd = open_beneath(sandbox, rel, os.O_RDONLY)
                    os.fchown(fd, uid, gid if gid is not None else -1)
                    os.close(fd)
            return got
        except BaseException:
            self.close()
            raise

    def stdio(self, stdin: str, stdout: str, stderr: str, sandbox: str) -> tuple[str, str, str, str]:
        """(stdin, stdout, stderr, working directory) for the universe plugin."""
        if not self.shared_fs:
            return stdin, stdout, stderr, sandbox
        iwd = str(self.ad.get_value("Iwd", "") or "")
        if not os.path.isabs(iwd) or not os.path.isdir(iwd):
            raise TransferError(f"the job's Iwd {iwd!r} is not a directory on {self.where} "
                                "(should_transfer_files says the file system is shared)", IWD_ERROR, errno.ENOENT)
        try:
            got = [self._open("In", iwd, False), self._open("Out", iwd, True), self._open("Err", iwd, True)]
        except BaseException:
            self.close()
            raise
        return got[0], got[1], got[2], iwd

    def _open(self, attr: str, iwd: str, write: bool) -> str:
        name = str(self.ad.get_value(attr, "/dev/null") or "/dev/null")
        if name == "/dev/null":
            return name
        path = name if os.path.isabs(name) else os.path.join(iwd, name)
        try:
            fd = open_as_owner(path, self.owner, write=write)
        except OSError as exc:
            raise TransferError(f"cannot open the job's {'output' if write else 'input'} file {path}: "
                                f"{exc.strerror}", UNABLE_TO_OPEN_OUTPUT if write else UNABLE_TO_OPEN_INPUT,
                                exc.errno or 0) from None
        self.fds.append(fd)
        return f"/proc/self/fd/{fd}"

    def close(self) -> None:
        while self.fds:
            with contextlib.suppress(OSError):
                os.close(self.fds.pop())


def write_input(sandbox: str, files: dict[str, Any]) -> list[tuple[str, str]]:
    """Write the input entries into the fresh sandbox; the (name, URL) pairs left to fetch."""
    urls = []
    for name, raw in files.items():
        rel = safe_relpath(str(name), "transfer_input_files")
        entry = entries.normal(raw)
        try:
            if entry.get("url"):
                urls.append((rel, str(entry["url"])))
            elif entry.get("stream"):
                if not entry.get("staged"):
                    raise TransferError(f"Transfer input files failure: {rel} was announced but never arrived", 13)
                streams.move_staged(sandbox, rel, entry)
            elif entry.get("dir"):
                mkdir_beneath(sandbox, rel)
            else:
                fd = open_beneath(sandbox, rel, os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                                  int(entry.get("mode", 0o644)) & 0o777, make_parents=True)
                with os.fdopen(fd, "wb") as f:
                    f.write(entry["data"])
                    os.fchmod(f.fileno(), int(entry.get("mode", 0o644)) & 0o777)
        except OSError as exc:
            raise TransferError(f"Transfer input files failure: cannot write {rel} into the sandbox: "
                                f"{exc.strerror}", 13, exc.errno or 0) from None
    return urls


def fetch_urls(sandbox: str, urls: list[tuple[str, str]], where: str, uid: int | None = None,
               gid: int | None = None, plugins: dict[str, Callable[..., None]] | None = None) -> int:
    """Fetch each URL into the sandbox with its scheme's plugin (blocking: run it in a thread);
    the bytes fetched.  A failure is HTCondor's transfer input hold (code 13) with the
    plugin's message; ``where`` names the execute point in it."""
    plugins = transfer_plugins() if plugins is None else plugins
    total = 0
    for rel, url in urls:
        scheme = url.partition("://")[0].lower()
        fetch = plugins.get(scheme)
        if fetch is None:
            raise TransferError(f"Transfer input files failure at execution point {where}: no transfer plugin "
                                f"for {scheme} URLs ({url}); known: {', '.join(sorted(plugins)) or 'none'}",
                                13, errno.EPROTONOSUPPORT)
        try:
            fd = open_beneath(sandbox, rel, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, make_parents=True)
            with os.fdopen(fd, "wb") as dest:
                fetch(url, dest, uid=uid, gid=gid)
                dest.flush()
                total += os.fstat(dest.fileno()).st_size
        except Exception as exc:
            raise TransferError(f"Transfer input files failure at execution point {where} using protocol "
                                f"{scheme}. Details: {exc}", 13, getattr(exc, "errno", None) or 0) from None
    return total


def collect_output(sandbox: str, job_ad: ClassAd, sent: dict[str, Any], before: set[str],
                   skip: set[str], where: str = "", inline: entries.Inline | None = None,
                   listed: str | None = None) -> tuple[dict[str, Any], list[str], dict[str, Any] | None]:
    """(output entries, names listed in transfer_output_files that do not exist, the first
    failure as {message, subcode} or None).

    Listed names: a file travels by its basename, a directory with its contents; a listed name
    that is a symbolic link is refused (the job could point it at any file of the machine).
    Without transfer_output_files: every plain file the job created in the sandbox's top level,
    or changed from what was sent.  ``skip`` names the starter's own files.  With ``inline``, a
    file it does not let ride inline is not read: its entry says ``stream`` (with its size and
    ``local``, its name in the sandbox) and ``htcd.transfer.outgoing`` sends it as a chunk stream."""
    out_names = job_ad.get_value("TransferOutput") if listed is None else listed  # listed: a checkpoint's list
    files: dict[str, Any] = {}
    missing: list[str] = []
    failure: dict[str, Any] | None = None
    if not (isinstance(out_names, str) and out_names.strip()):
        for name in sorted(os.listdir(sandbox)):
            if name in skip or (name in before and not (name in sent and _changed_or_kept(sandbox, name, sent))):
                continue
            entry = _entry(sandbox, name, None, inline)
            if entry is not None:
                files[name] = entry
        return files, missing, failure
    for listed in [n.strip() for n in out_names.split(",") if n.strip()]:
        try:
            rel = safe_relpath(listed, "transfer_output_files")
            st = _lstat_beneath(sandbox, rel)
            if stat.S_ISLNK(st.st_mode):
                raise OSError(errno.ELOOP, "it is a symbolic link, which output transfer does not follow")
            dest = entries.base(rel)
            if stat.S_ISDIR(st.st_mode):
                files[dest] = entries.directory(st.st_mode, src=listed)
                _collect_dir(sandbox, rel, dest, files, inline)
            else:
                entry = _entry(sandbox, rel, listed, inline)
                if entry is None:
                    raise OSError(errno.EINVAL, "not a regular file")
                files[dest] = entry
        except (OSError, TransferError) as exc:
            code = getattr(exc, "errno", None) or getattr(exc, "subcode", 0) or 0
            why = f"(errno {code}) {exc.strerror}" if isinstance(exc, OSError) else str(exc)
            if code == errno.ENOENT:
                missing.append(listed)
                why = "(errno 2) No such file or directory"
            if failure is None:
                failure = {"message": f"Transfer output files failure at execution point {where} while sending "
                                      f"files to access point. Details: reading from file "
                                      f"{os.path.join(sandbox, listed)}: {why}", "subcode": code}
    return files, missing, failure


def _lstat_beneath(sandbox: str, rel: str) -> os.stat_result:
    parent, _, leaf = rel.rpartition("/")
    if not parent:
        return os.lstat(os.path.join(sandbox, leaf))
    fd = open_beneath(sandbox, parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return os.stat(leaf, dir_fd=fd, follow_symlinks=False)
    finally:
        os.close(fd)


def _collect_dir(sandbox: str, rel: str, dest: str, files: dict[str, Any], inline: entries.Inline | None) -> None:
    """A listed directory's contents; links inside are left out, never followed."""
    fd = open_beneath(sandbox, rel, os.O_RDONLY | os.O_DIRECTORY)
    try:
        names = sorted(os.listdir(fd))
        for name in names:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                files[f"{dest}/{name}"] = entries.directory(st.st_mode)
                _collect_dir(sandbox, f"{rel}/{name}", f"{dest}/{name}", files, inline)
            elif stat.S_ISREG(st.st_mode):
                entry = _entry(sandbox, f"{rel}/{name}", None, inline)
                if entry is not None:
                    files[f"{dest}/{name}"] = entry
    finally:
        os.close(fd)


def _entry(sandbox: str, rel: str, src: str | None, inline: entries.Inline | None) -> dict[str, Any] | None:
    """A regular file's output entry, opened without following a link (None for anything else):
    its bytes, or -- when ``inline`` does not let it ride in the reply -- a note to stream it."""
    try:
        fd = open_beneath(sandbox, rel, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
            return None
        raise
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            return None
        if inline is not None and not inline.fits(st.st_size):
            entry: dict[str, Any] = {"stream": True, "size": st.st_size, "mode": st.st_mode & 0o7777, "local": rel}
            if src is not None:
                entry["src"] = src
            return entry
        return entries.file(f.read(), st.st_mode, src=src)


def _read(sandbox: str, rel: str) -> tuple[bytes | None, int]:
    """A regular file's bytes and mode, opened without following a link (None otherwise)."""
    try:
        fd = open_beneath(sandbox, rel, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
            return None, 0
        raise
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            return None, 0
        return f.read(), st.st_mode


def _changed_or_kept(sandbox: str, name: str, sent: dict[str, Any]) -> bool:
    """Whether a file that was sent goes back: changed by the job, or the job's own file kept
    from an eviction (ON_EXIT_OR_EVICT) and sent as input to this run."""
    return bool(entries.normal(sent[name]).get("spooled")) or _modified(sandbox, name, sent)


def _modified(sandbox: str, name: str, sent: dict[str, Any]) -> bool:
    entry = entries.normal(sent[name])
    if entry.get("stream"):  # too big to compare: changed when its size or time is not as it arrived
        try:
            return not streams.unchanged(os.lstat(os.path.join(sandbox, name)), entry)
        except OSError:
            return False
    try:
        data, _ = _read(sandbox, name)
    except OSError:
        return False
    entry = entries.normal(sent[name])
    return data is not None and data != entry.get("data")
