"""The schedd (access point): the durable job queue, shadows, event logs and history."""
