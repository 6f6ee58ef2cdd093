"""htcd: a high-throughput computing system on HTCondor's design."""

__version__ = "0.1.0"
