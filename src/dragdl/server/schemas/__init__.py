"""Request and response models per domain (`XCreate`, `XUpdate`, `XPublic`)."""
