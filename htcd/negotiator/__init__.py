"""The negotiator: matchmaking between idle jobs and unclaimed slots."""
