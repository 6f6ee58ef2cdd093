"""File transfer between the access point and the sandbox on the execute point.

File work: the shadow (``shadow_side``) gathers a job's input and writes its output back; the
starter (``starter_side``) writes the input into the sandbox and collects the output.  The
protocol that carries the files is the shadow's and the startd's, except for files bigger than
a chunk: ``chunks`` is the chunk stream they travel as (also the spool's upload and download),
``streams`` sends and receives a job's big input on the claim connection, ``outgoing`` its big
output (staged at the execute point, fetched by the shadow, put in place only when whole).
"""

from htcd.transfer.paths import TransferError, safe_name

__all__ = ["TransferError", "safe_name"]
