"""The collector: the pool's in-memory directory of ads."""
