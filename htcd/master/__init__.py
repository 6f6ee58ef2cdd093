"""The master: one per host, starts and watches the daemons of DAEMON_LIST."""
