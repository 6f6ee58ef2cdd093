"""The startd (execution point): machine ad, slots, claims, and the starter that runs jobs."""
