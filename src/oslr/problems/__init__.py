"""Data streams: synthetic regression streams, dataset replay and linear-bandit environments."""
