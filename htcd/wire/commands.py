"""The command table: every command a daemon accepts, with its authorization level.

docs/protocol.md lists the same table; a test keeps the two in step.
"""

from __future__ import annotations

from dataclasses import dataclass

from htcd.wire import auth


@dataclass(frozen=True)
class Command:
    name: str
    level: str
    daemons: tuple[str, ...]
    summary: str


_TABLE = [
    # every daemon
    Command("PING", auth.READ, ("*",), "Check that the daemon answers; returns the caller's identity."),
    Command("DC_OFF_GRACEFUL", auth.ADMINISTRATOR, ("*",), "Shut the daemon down gracefully."),
    Command("DC_RECONFIG", auth.ADMINISTRATOR, ("*",), "Re-read the configuration."),
    Command("DC_CONFIG_PERSIST", auth.CONFIG, ("*",), "Set or unset persistent config (config_val -set)."),
    Command("DC_CONFIG_RUNTIME", auth.CONFIG, ("*",), "Set or unset config until restart (config_val -rset)."),
    Command("DC_SEC_QUERY", auth.READ, ("*",), "Would the caller be authorized at a level? (htcd ping)"),
    Command("DC_QUERY_SELF", auth.READ, ("*",), "The daemon's own ads, with statistics (status -direct)."),
    # collector
    Command("UPDATE_AD", auth.READ, ("COLLECTOR",), "Store or replace an ad (with an optional private ad); "
            "the sender must also hold the ad type's level: ADVERTISE_STARTD (Machine), ADVERTISE_SCHEDD "
            "(Scheduler, Submitter), ADVERTISE_MASTER (DaemonMaster), NEGOTIATOR (Negotiator, Accounting), "
            "else DAEMON."),
    Command("INVALIDATE_AD", auth.READ, ("COLLECTOR",), "Remove an ad at once (daemon shutdown); the ad "
            "type's ADVERTISE_* level as for UPDATE_AD."),
    Command("QUERY_ADS", auth.READ, ("COLLECTOR",), "Ads of one type matching a constraint, projected."),
    Command("QUERY_PRIVATE_ADS", auth.NEGOTIATOR, ("COLLECTOR",), "Private slot ads (claim ids)."),
    Command("UPDATE_SESSION", auth.READ, ("COLLECTOR",), "Open a session for signed UDP updates (id, key, "
            "port); needs an ADVERTISE_* level, NEGOTIATOR or DAEMON, and each datagram's ads are "
            "authorized as UPDATE_AD's."),
    Command("CCB_REGISTER", auth.DAEMON, ("COLLECTOR",), "A daemon behind a firewall (CCB_ADDRESS) registers with the "
            "CCB server: gets its ccbid, then keeps the call open to receive heartbeats and reverse-connection "
            "requests."),
    Command("CCB_REQUEST", auth.READ, ("COLLECTOR",), "Ask the CCB server to have a registered daemon (ccbid) "
            "connect back to the caller's return address with a nonce."),
    # negotiator
    Command("RESCHEDULE", auth.WRITE, ("NEGOTIATOR",), "Start a negotiation cycle soon."),
    Command("GET_PRIORITY", auth.READ, ("NEGOTIATOR",), "The accountant's records (htcd userprio)."),
    Command("SET_PRIORITYFACTOR", auth.ADMINISTRATOR, ("NEGOTIATOR",), "Set a user's priority factor."),
    Command("SET_PRIORITY", auth.ADMINISTRATOR, ("NEGOTIATOR",), "Set a user's real priority."),
    Command("RESET_USAGE", auth.ADMINISTRATOR, ("NEGOTIATOR",), "Reset a user's (or every user's) usage."),
    Command("DELETE_USER", auth.ADMINISTRATOR, ("NEGOTIATOR",), "Remove a user from the accountant."),
    # schedd
    Command("RESERVE_CLUSTER", auth.WRITE, ("SCHEDD",), "Reserve the next cluster id for a submit."),
    Command("SUBMIT", auth.WRITE, ("SCHEDD",), "Commit a cluster and its procs in one transaction."),
    Command("RESERVE_CLUSTERS", auth.WRITE, ("SCHEDD",), "Reserve several cluster ids for SUBMIT_CLUSTERS."),
    Command("SUBMIT_CLUSTERS", auth.WRITE, ("SCHEDD",), "Commit several clusters in one transaction (DAGMan)."),
    Command("QUERY_JOBS", auth.READ, ("SCHEDD",), "Job ads matching a constraint, projected."),
    Command("QUERY_SCHEDD_HISTORY", auth.READ, ("SCHEDD",), "Ads of jobs that left the queue, newest first, "
            "streamed."),
    Command("ACT_ON_JOBS", auth.WRITE, ("SCHEDD",), "Remove, hold or release jobs (owner-checked)."),
    Command("SET_ATTRIBUTES", auth.WRITE, ("SCHEDD",), "Set attributes of jobs in one transaction (qedit)."),
    Command("NEGOTIATE", auth.NEGOTIATOR, ("SCHEDD",), "Resource requests of one submitter."),
    Command("MATCHES", auth.NEGOTIATOR, ("SCHEDD",), "Matches made for a submitter's requests."),
    Command("VACATE_JOBS", auth.WRITE, ("SCHEDD",), "Vacate running jobs back to idle (htcd vacate_job)."),
    Command("SPOOL_JOB_FILES", auth.WRITE, ("SCHEDD",), "Upload a cluster's input into the spool (submit -spool)."),
    Command("TRANSFER_DATA", auth.WRITE, ("SCHEDD",), "Stream spooled jobs' output back (htcd transfer_data)."),
    Command("CHIRP_JOB", auth.DAEMON, ("SCHEDD",), "A running job's chirp relayed by the startd holding its claim: "
            "get or set an attribute of its ad, or a line in its user log."),
    # startd
    Command("REQUEST_CLAIM", auth.DAEMON, ("STARTD",), "Claim a slot with the claim id from a match."),
    Command("MATCH_INFO", auth.NEGOTIATOR, ("STARTD",), "The negotiator matched these slots: Matched until claimed."),
    Command("ACTIVATE_CLAIM", auth.DAEMON, ("STARTD",), "Run a job on a claimed slot; replies when it ends."),
    Command("DEACTIVATE_CLAIM", auth.DAEMON, ("STARTD",), "Kill the job running on a claim."),
    Command("RELEASE_CLAIM", auth.DAEMON, ("STARTD",), "Give a claimed slot back."),
    Command("ALIVE", auth.DAEMON, ("STARTD",), "The schedd's keep-alive for its claims (renews their leases)."),
    Command("RECONNECT_JOB", auth.DAEMON, ("STARTD",), "Follow a running job again after a disconnect (job lease)."),
    Command("FETCH_OUTPUT", auth.DAEMON, ("STARTD",), "Stream a finished job's output too big for its result "
            "(or drop it)."),
    Command("CHECKPOINT_STORED", auth.DAEMON, ("STARTD",), "The shadow kept a running job's checkpoint in the "
            "spool: restart the job."),
    Command("VACATE_CLAIMS", auth.ADMINISTRATOR, ("STARTD",), "End the claims of slots, vacating their jobs (htcd vacate)."),
    Command("STARTER_PEEK", auth.WRITE, ("STARTD",), "Bytes of a running job's stdout, stderr or output file "
            "(htcd tail); the job's owner or a queue superuser only."),
    Command("CHIRP", auth.READ, ("STARTD",), "A running job's chirp (htcd chirp), authorized by the cookie in its "
            ".chirp.config; relayed to the job's schedd."),
    Command("SSH_TO_JOB", auth.WRITE, ("STARTD",), "A shell or command in a running job's sandbox as the job's "
            "user, its I/O relayed (htcd ssh_to_job); the job's owner or a queue superuser, if ENABLE_SSH_TO_JOB."),
    # master
    Command("DAEMONS_OFF", auth.ADMINISTRATOR, ("MASTER",), "Shut down every daemon but the master (htcd off)."),
    Command("DAEMONS_ON", auth.ADMINISTRATOR, ("MASTER",), "Start the daemons of DAEMON_LIST that are off."),
    Command("DAEMON_ON", auth.ADMINISTRATOR, ("MASTER",), "Start one daemon of DAEMON_LIST (on -daemon X)."),
    Command("DAEMON_OFF", auth.ADMINISTRATOR, ("MASTER",), "Stop one daemon and keep it off (off -daemon X)."),
    Command("RESTART", auth.ADMINISTRATOR, ("MASTER",), "Restart the daemons (or one of them)."),
    Command("DC_CHILDALIVE", auth.DAEMON, ("MASTER",), "A child's keepalive (hang detection)."),
    # startd
    Command("DRAIN_JOBS", auth.ADMINISTRATOR, ("STARTD",), "Drain the machine (htcd drain)."),
    Command("CANCEL_DRAIN_JOBS", auth.ADMINISTRATOR, ("STARTD",), "Cancel a drain (htcd drain -cancel)."),
]

COMMANDS: dict[str, Command] = {c.name: c for c in _TABLE}
