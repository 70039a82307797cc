"""Business logic per domain: every query lives here, routes stay thin."""
