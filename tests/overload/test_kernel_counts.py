"""The figures the collector reads from the kernel for its UDP socket, and the default connection
cap read from the open-file limit: checked against a real socket and a real process limit."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from htcd.collector.udp import KernelCounts, kernel_counts


def test_a_full_receive_buffer_shows_as_queued_bytes_and_drops() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as rx, socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as tx:
        rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # the kernel's minimum, about
        rx.bind(("127.0.0.1", 0))
        rx.setblocking(False)
        inode = os.fstat(rx.fileno()).st_ino
        assert kernel_counts(inode) == KernelCounts(0, 0)
        sent = 200
        for i in range(sent):
            tx.sendto(i.to_bytes(4, "big") * 250, rx.getsockname())
        waiting = kernel_counts(inode)
        assert waiting is not None and waiting.queued > 0 and waiting.drops > 0
        read = 0
        while True:
            try:
                rx.recv(2048)
            except BlockingIOError:
                break
            read += 1
        assert read + waiting.drops == sent  # every datagram: read, or counted dropped
        assert kernel_counts(inode) == KernelCounts(0, waiting.drops)


def test_a_socket_the_tables_do_not_list_is_none(tmp_path) -> None:  # type: ignore[no-untyped-def]
    table = tmp_path / "udp"
    table.write_text("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout "
                     "inode ref pointer drops\n"
                     " 7506: 0100007F:A7FD 00000000:0000 07 00000000:00000A00 00:00000000 00000000     0        0 "
                     "4339468 2 000000004bfb2891 17\n")
    assert kernel_counts(4339468, (str(table),)) == KernelCounts(0xA00, 17)
    assert kernel_counts(1, (str(table),)) is None
    assert kernel_counts(1, (str(tmp_path / "missing"),)) is None


def test_the_default_connection_cap_is_80_percent_of_the_open_file_limit() -> None:
    code = ("import resource, sys; from htcd.wire.framing import fd_safety_limit; "
            "h = resource.getrlimit(resource.RLIMIT_NOFILE)[1]; out = []\n"
            "for soft in (1000, 64, 10):\n"
            "    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, h)); out.append(fd_safety_limit())\n"
            "print(out)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[800, 52, 20]"  # HTCondor's safety level, never below 20
