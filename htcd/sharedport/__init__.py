"""The shared-port daemon (HTCondor's condor_shared_port): one TCP port per host, through which
every daemon of the host is reached; each connection is handed to its daemon whole
(``docs/networking.md``)."""
