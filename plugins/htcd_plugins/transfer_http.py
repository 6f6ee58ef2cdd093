"""The ``http`` and ``https`` transfer plugin, through the standard library's urllib."""

from __future__ import annotations

import shutil
import urllib.error
import urllib.request
from typing import BinaryIO

from htcd.hookspecs import hookimpl

TIMEOUT = 300  # seconds without a byte before a download is given up


def fetch(url: str, dest: BinaryIO, uid: int | None = None, gid: int | None = None) -> None:
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as reply:  # the scheme is http(s)
            shutil.copyfileobj(reply, dest)
    except urllib.error.HTTPError as exc:
        raise OSError(f"{url}: HTTP error {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise OSError(f"{url}: {exc.reason}") from None
    except (OSError, TimeoutError) as exc:
        raise OSError(f"{url}: {exc}") from None


@hookimpl
def htcd_transfer_plugins() -> dict[str, object]:
    return {"http": fetch, "https": fetch}
