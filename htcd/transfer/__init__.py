"""File transfer between the access point and the sandbox on the execute point.

Pure file work with no daemon I/O: the shadow (``shadow_side``) gathers a job's input and
writes its output back; the starter (``starter_side``) writes the input into the sandbox and
collects the output.  The protocol that carries the files is the shadow's and the startd's.
"""

from htcd.transfer.paths import TransferError, safe_name

__all__ = ["TransferError", "safe_name"]
