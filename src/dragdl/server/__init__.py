"""The FastAPI service. Importing it must stay fast: torch and the engine load lazily."""
