"""xrelay: Relay on xDSL."""
